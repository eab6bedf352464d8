"""The source benchmarks: which configs each one yields, its licence and whether it must be gated.

Part of the data model because it decides what may be shared: the card renders
its licence and gating from here, and the validators check a built card's
YAML against it for every config whose shards are actually present.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    configs: tuple[str, ...]
    license: str  # the Hub's licence identifier
    license_name: str | None  # for license "other"
    gated: bool  # shared only with people who accept its data use agreement


SOURCES: dict[str, Source] = {
    # CogBench: data use agreement of the authors' LICENSE_DATASET (cogbench-samples/).
    "cogbench": Source(
        configs=("description", "vqa"), license="other", license_name="cogbench-data-use-agreement", gated=True
    ),
    # CODIS: Apache License 2.0 (codis/LICENSE).
    "codis": Source(configs=("codis",), license="apache-2.0", license_name=None, gated=False),
}


def sources_of(configs: Iterable[str]) -> dict[str, Source]:
    """The sources that have at least one of ``configs``."""
    wanted = set(configs)
    return {name: source for name, source in SOURCES.items() if wanted & set(source.configs)}


def expected_licence(configs: Iterable[str]) -> dict:
    """The card's licence and gating keys a build holding ``configs`` must declare."""
    sources = sources_of(configs).values()
    licences = sorted({source.license for source in sources})
    names = sorted({source.license_name for source in sources if source.license_name})
    return {
        "license": licences[0] if len(licences) == 1 else licences,
        "license_name": names[0] if names else None,
        "gated": any(source.gated for source in sources),
    }
