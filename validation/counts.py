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


def shipped_expected() -> dict[str, dict[str, Any]]:
    """The expected-counts files shipped with the package, by file name."""
    folder = resources.files(EXPECTED_PACKAGE).joinpath("expected")
    return {entry.name: json.loads(entry.read_text(encoding="utf-8")) for entry in folder.iterdir() if entry.name.endswith(".json")}


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


def _compare(expected: Any, actual: Any, path: str):
    """(field path, expected, actual) for every number that differs."""
    if isinstance(expected, dict):
        for key, value in expected.items():
            yield from _compare(value, actual.get(key) if isinstance(actual, dict) else None, f"{path}.{key}" if path else key)
    elif expected != actual:
        yield path, expected, actual


def check_counts(records: dict[str, list], shown: dict[str, str], chosen: list[tuple[str, dict[str, Any]]]) -> list[Finding]:
    found = []
    for file_name, expected in chosen:
        for config, numbers in expected["configs"].items():
            if config not in records:
                found.append(finding("counts.config_missing", config, None, None, f"{expected['name']} ({file_name}) expects config {config!r}"))
                continue
            actual = config_counts(config, records[config])
            for field_path, want, got in _compare(numbers, actual, ""):
                found.append(
                    finding("counts.mismatch", shown.get(config, config), None, field_path, f"expected {want} ({expected['name']}, {file_name}), found {got}")
                )
    return found
