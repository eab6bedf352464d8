"""Build a release: raw data -> validation gate -> dataset folder -> gate -> card, in one step.

This is the one place where the builder, the validators and the card meet
(``cogbench build`` calls it): the builders know nothing of validation or
cards, so imports keep flowing one way (see ARCHITECTURE.md).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.cards.card import render_card as default_render_card
from cogbench.cards.errata import checked_errata, read_errata
from cogbench.cards.versions import changelog_entries
from cogbench.dataset_builders.build import (
    CARD_FILE,
    DEFAULT_MAX_SHARD_BYTES,
    DEFAULT_VERSION,
    MANIFEST_FILE,
    check_version,
    write_dataset,
    write_json,
)
from cogbench.dataset_builders.croissant import CROISSANT_FILE, render_croissant
from cogbench.dataset_builders.eval_yaml import EVAL_YAML_FILE, eval_yaml_text, render_eval_yaml
from cogbench.dataset_builders.mm_eval import METADATA_FILE, render_mm_eval
from cogbench.dataset_builders.output import check_apart, check_replaceable, move_into_place, new_staging, write_marker
from cogbench.dataset_builders.raw import find_sources
from cogbench.dataset_builders.read import read_raw, sorted_records
from cogbench.dataset_builders.writes import write_file
from cogbench.errors import UsageError
from cogbench.validation import require_valid, validate, validate_read
from cogbench.validation.counts import OWN_MANIFEST, auto_expected


@dataclass(frozen=True)
class BuildResult:
    out: Path
    manifest: dict[str, Any]


def declared_expected(sources, previous) -> list[str] | str:
    """The counts this release must match: the published ones for a first release
    (the shipped files that fit its source folders), its own manifest's for a later
    one built on ``previous`` (records may be added or removed on purpose)."""
    if previous is not None:
        return OWN_MANIFEST
    folders = {
        name: path.resolve().name for name, path in (("cogbench", sources.cogbench), ("codis", sources.codis)) if path
    }
    return [name for name, _ in auto_expected(folders)]


def build_release(
    raw_dir: str | os.PathLike,
    out: str | os.PathLike,
    version: str = DEFAULT_VERSION,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    render_card: Callable[[dict[str, Any]], str] = default_render_card,
    previous: str | os.PathLike | None = None,
    repo_id: str | None = None,
    errata: str | os.PathLike | None = None,
) -> BuildResult:
    """Build every config whose raw files are in ``raw_dir`` into ``out``.

    ``previous`` is the last released build: the changes since it go into the
    changelog, and a version too small for them is refused (see versions.py).
    ``repo_id`` is the Hub repo the card tells users to load from. ``errata`` is a file of
    ``cogbench diff --errata``: the records changed since ``previous``, checked against what this
    build changed, carried into the manifest and the card.
    """
    check_version(version)
    out = Path(out)
    check_replaceable(out)
    if previous is not None and not (Path(previous) / MANIFEST_FILE).is_file():  # before the raw data is read
        raise UsageError(
            f"--previous {previous}: not a cogbench build (no {MANIFEST_FILE}); give the last release's build"
        )
    # Never the build it reads (--out OLD --previous OLD replaced it), nor inside the raw files or around them.
    check_apart(out, "--out", [("--raw-dir", raw_dir), ("--previous", previous), ("--errata", errata)])
    if errata is not None and previous is None:
        raise UsageError(f"--errata {errata}: the errata are changes since a release; give it with --previous OLD")
    given = read_errata(Path(errata)) if errata is not None else None  # before the raw data is read
    sources = find_sources(raw_dir)
    # The release gate (issue 3): the same validators on the input and on the
    # staged output, before anything is moved into place. The raw files are read
    # once, by the one raw reader, and every problem of every stage is listed.
    raw = read_raw(sources)
    require_valid(validate_read(raw, expected=None), "the raw data")
    records = sorted_records(raw.records)
    staging = new_staging(out)
    try:
        manifest = write_dataset(staging, version, sources, records, max_shard_bytes, repo_id)
        manifest["changelog"] = changelog_entries(manifest, previous, staging)
        if given is not None and previous is not None:
            manifest["errata"] = checked_errata(given, Path(errata or ""), Path(previous), staging, manifest)
        manifest["expected_counts"] = declared_expected(sources, previous)
        manifest["metadata_files"] = [CROISSANT_FILE, EVAL_YAML_FILE, METADATA_FILE]
        write_json(staging / MANIFEST_FILE, manifest)
        write_file(staging / CARD_FILE, render_card(manifest))
        write_json(staging / CROISSANT_FILE, render_croissant(manifest))
        (staging / EVAL_YAML_FILE).write_text(eval_yaml_text(render_eval_yaml(manifest)), encoding="utf-8")
        write_json(staging / METADATA_FILE, render_mm_eval(manifest))
        hashed = (MANIFEST_FILE, CARD_FILE, CROISSANT_FILE, EVAL_YAML_FILE, METADATA_FILE)
        write_marker(staging, manifest["builder_version"], hashed=hashed, raw_dir=sources.root)
        # pHashes not recomputed: written a moment ago from the same files (`cogbench validate` recomputes them)
        require_valid(validate(staging, expected=None, recompute_hashes=False), f"the built release {out}")
        move_into_place(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return BuildResult(out=out, manifest=manifest)
