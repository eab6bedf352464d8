"""Integrity checks and the release gate (issue 3).

``validate(path, expected="auto")`` runs every check on a raw folder or a
built release and returns a ``ValidationReport`` of ``Finding`` objects.
"""

from cogbench.validation.api import ValidationFailed, require_valid, validate, validate_read, validate_sources
from cogbench.validation.findings import CHECKS, Finding, ValidationReport

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
