"""Category counts compared with the expected-counts files kept in the repo.

Each file in ``expected/`` holds the published numbers of one release (with
the paper section they come from) and names the raw folder it applies to, so
``expected="auto"`` can pick it from what is present.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.build import config_counts
from cogbench.errors import UsageError
from cogbench.validation.findings import Finding, finding

EXPECTED_PACKAGE = "cogbench.validation"
# A build's declaration that its counts are its own manifest's (a later release,
# built with --previous): those are checked against the shards by integrity.py.
OWN_MANIFEST = "manifest"


def shipped_expected() -> dict[str, dict[str, Any]]:
    """The expected-counts files shipped with the package, by file name."""
    folder = resources.files(EXPECTED_PACKAGE).joinpath("expected")
    return {
        entry.name: json.loads(entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".json")
    }


def load_expected(spec: str | Path) -> tuple[str, dict[str, Any]]:
    """An expected-counts file by path, or by the name of a shipped one (``codis-1.0``)."""
    path = Path(spec)
    if path.is_file():
        try:
            return path.name, json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise UsageError(f"expected-counts file {path} is not valid JSON: {error}") from None
    shipped = shipped_expected()
    for name in (str(spec), f"{spec}.json"):
        if name in shipped:
            return name, shipped[name]
    raise UsageError(f"no expected-counts file {spec} (shipped: {', '.join(sorted(shipped))}, or 'none')")


def auto_expected(source_folders: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """The shipped files whose benchmark and source folder match the data."""
    return [
        (name, expected)
        for name, expected in sorted(shipped_expected().items())
        if source_folders.get(expected["benchmark"]) in expected["source_folders"]
    ]


def choose_expected(contents, expected) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The expected-counts files to compare with, and how they were chosen (for the report).

    ``auto``: a built folder's own declaration (``expected_counts`` in its
    manifest: shipped file names for the authors' releases, ``"manifest"`` for
    later ones), else the shipped files that fit the source folders.
    """
    if expected is None:
        return [], "skipped (--expected none)"
    if str(expected) != "auto":
        chosen = [load_expected(expected)]
        return chosen, f"{chosen[0][0]} (--expected)"
    declared = contents.declared_expected
    if declared == OWN_MANIFEST:
        return [], "the build's own manifest (a later release; its counts are checked against the shards)"
    if isinstance(declared, list) and declared:
        chosen = [load_expected(name) for name in declared]
        return chosen, ", ".join(name for name, _ in chosen) + " (declared by the build's manifest)"
    chosen = auto_expected(contents.source_folders)
    if not chosen:
        return [], "skipped (no shipped expected-counts file fits these source folders)"
    return chosen, ", ".join(name for name, _ in chosen) + " (auto: fits the source folders)"


def _compare(expected: Any, actual: Any, path: str):
    """(field path, expected, actual) for every number that differs."""
    if isinstance(expected, dict):
        for key, value in expected.items():
            yield from _compare(
                value, actual.get(key) if isinstance(actual, dict) else None, f"{path}.{key}" if path else key
            )
    elif expected != actual:
        yield path, expected, actual


def check_counts(
    records: dict[str, list], shown: dict[str, str], chosen: list[tuple[str, dict[str, Any]]]
) -> list[Finding]:
    found = []
    for file_name, expected in chosen:
        for config, numbers in expected["configs"].items():
            if config not in records:
                found.append(
                    finding(
                        "counts.config_missing",
                        config,
                        None,
                        None,
                        f"{expected['name']} ({file_name}) expects config {config!r}",
                    )
                )
                continue
            actual = config_counts(config, records[config])
            for field_path, want, got in _compare(numbers, actual, ""):
                found.append(
                    finding(
                        "counts.mismatch",
                        shown.get(config, config),
                        None,
                        field_path,
                        f"expected {want} ({expected['name']}, {file_name}), found {got}",
                    )
                )
    return found
