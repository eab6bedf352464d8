"""Integrity checks and the release gate: ``validate(path)`` returns a ``ValidationReport`` of ``Finding`` objects.

- ``api``: ``validate``: every check on a raw folder or a built release; the release gate ``require_valid``.
- ``findings``: what every check returns, as plain data (``CHECKS``: each code's family and severity).
- ``contents``: what a validation looks at, read from a raw folder or a built release as typed records.
- ``checks``: record-level checks (chains of reasoning, four options, paired contexts, identity).
- ``counts``: category counts against the expected-counts files of each release.
- ``images``: every image decodes, no bomb, none unreferenced, each compared by sha256 with the authors' release.
- ``integrity``: tamper checks of a built folder; ``verify_build``/``load_verified``, run before reading a build.
- ``fingerprint_checks``: ``fingerprints.parquet`` against the shards' images; ``verified_fingerprints`` of a build.
- ``metadata``: ``croissant.json``, ``eval.yaml`` and ``metadata.json`` re-rendered from the manifest and compared.
- ``cli``: ``cogbench validate PATH``.

The names ``validate`` and the rest are loaded on first use (module ``__getattr__``), so that importing
a submodule such as ``cogbench.validation.cli`` (as ``cogbench --help`` does) never imports ``datasets``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cogbench.validation.api import ValidationFailed, require_valid, validate, validate_read, validate_sources
    from cogbench.validation.findings import CHECKS, Finding, ValidationReport

_NAMES = {
    "ValidationFailed": "cogbench.validation.api",
    "require_valid": "cogbench.validation.api",
    "validate": "cogbench.validation.api",
    "validate_read": "cogbench.validation.api",
    "validate_sources": "cogbench.validation.api",
    "CHECKS": "cogbench.validation.findings",
    "Finding": "cogbench.validation.findings",
    "ValidationReport": "cogbench.validation.findings",
}

__all__ = [
    "CHECKS",
    "Finding",
    "ValidationFailed",
    "ValidationReport",
    "require_valid",
    "validate",
    "validate_read",
    "validate_sources",
]


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_NAMES[name]), name)
