"""Integrity checks and the release gate: ``validate(path)`` returns a ``ValidationReport`` of ``Finding`` objects.

- ``api``: ``validate``: every check on a raw folder or a built release; the release gate ``require_valid``.
- ``findings``: what every check returns, as plain data (``CHECKS``: each code's family and severity).
- ``contents``: what a validation looks at, read from a raw folder or a built release as typed records.
- ``checks``: record-level checks (chains of reasoning, four options, paired contexts, identity).
- ``counts``: category counts against the expected-counts files of each release.
- ``images``: every image decodes, no bomb, none unreferenced, each compared by sha256 with the authors' release.
- ``integrity``: tamper checks of a built folder; ``verify_build``/``load_verified``, run before reading a build.
- ``metadata``: ``croissant.json``, ``eval.yaml`` and ``metadata.json`` re-rendered from the manifest and compared.
- ``cli``: ``cogbench validate PATH``.
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
