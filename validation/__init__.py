"""Integrity checks and the release gate (issue 3).

``validate(path, expected="auto")`` runs every check on a raw folder or a
built release and returns a ``ValidationReport`` of ``Finding`` objects.

The names below are loaded on first use (module ``__getattr__``), so that importing a submodule
such as ``cogbench.validation.cli`` (as ``cogbench --help`` does) never imports ``datasets``.
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
