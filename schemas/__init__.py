"""The data model: JSON Schemas (draft 2020-12) of the raw files, the built records, run folders and judge certificates.

Raw schemas describe the files exactly as their authors publish them; built schemas describe one row of each config as
stored in Parquet (images as ``{"bytes", "path"}``, class labels as integers). Beside them:

- ``vocabulary``: configs, category and answer-letter names, with no third-party import (the scoring core reads them).
- ``features``: the ``datasets`` Features and class orders of each config, on that vocabulary.
- ``records``: one typed record per row, made from one raw item.
- ``cor``: the chain-of-reasoning grammar ("A1 + A2 -> B").
- ``text``: text hygiene (blank, unencodable, look-alike characters).
- ``sources``: the source benchmarks: configs, licence and gating of each.
- ``prompt_templates``: every prompt the evaluator sends, versioned, with its source (paper section, tier).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

RAW_SCHEMAS = {
    "cogbench_description": "raw_cogbench_description.schema.json",
    "cogbench_vqa": "raw_cogbench_vqa.schema.json",
    "codis": "raw_codis.schema.json",
}
BUILT_SCHEMAS = {
    "description": "description.schema.json",
    "vqa": "vqa.schema.json",
    "codis": "codis.schema.json",
}


@cache
def load_schema(file_name: str) -> dict[str, Any]:
    """Return a schema shipped in this package, by file name."""
    text = resources.files(__name__).joinpath(file_name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def validator(file_name: str) -> jsonschema.Draft202012Validator:
    # jsonschema costs ~0.1 s to import: loaded on the first check, never by `cogbench --help`.
    import jsonschema

    schema = load_schema(file_name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@dataclass(frozen=True)
class SchemaViolation:
    """One schema error, located as a JSON path inside the checked document."""

    path: tuple[str | int, ...]
    message: str


def iter_violations(document: Any, file_name: str) -> Iterator[SchemaViolation]:
    """Every violation of ``document`` against a schema, in a stable order."""
    errors = sorted(
        validator(file_name).iter_errors(document), key=lambda e: (list(map(str, e.absolute_path)), e.message)
    )
    for error in errors:
        path = tuple(error.absolute_path)
        message = error.message
        if error.validator == "required":
            # Point at the missing field itself, not at its parent object.
            missing = [name for name in error.validator_value if name not in error.instance]
            for name in missing:
                yield SchemaViolation((*path, name), "required field is missing")
            continue
        if error.validator == "additionalProperties":
            allowed = set(error.schema.get("properties", {}))
            for name in sorted(k for k in error.instance if k not in allowed):
                yield SchemaViolation((*path, name), "field is not part of the format")
            continue
        yield SchemaViolation(path, message)
