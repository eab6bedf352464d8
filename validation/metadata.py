"""The build's metadata files beside the card: ``croissant.json``, ``eval.yaml`` and ``metadata.json``.

Each is rendered from the manifest alone, so a file that differs from the rendering was
edited (or comes from another build). ``eval.yaml`` is also checked against its JSON Schema
(``schemas/eval_yaml.schema.json``), the fields the Hub validates at push time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from cogbench.dataset_builders.croissant import CROISSANT_FILE, render_croissant
from cogbench.dataset_builders.eval_yaml import EVAL_YAML_FILE, SCHEMA_FILE, render_eval_yaml
from cogbench.dataset_builders.mm_eval import METADATA_FILE, render_mm_eval
from cogbench.validation.findings import Finding, finding


def safe_yaml(text: str) -> Any:
    """``yaml.safe_load`` through libyaml when PyYAML has it (the same safe loader, ~10x faster: a build is checked
    each time a command loads it, a sweep's merge four times per cell)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


# Files a build may list in manifest["metadata_files"]: (code of a mismatch, reader, renderer).
METADATA: dict[str, tuple[str, Callable[[str], Any], Callable[[dict[str, Any]], Any]]] = {
    CROISSANT_FILE: ("croissant.mismatch", json.loads, render_croissant),
    EVAL_YAML_FILE: ("eval_yaml.mismatch", safe_yaml, render_eval_yaml),
    METADATA_FILE: ("mm_eval.mismatch", json.loads, render_mm_eval),
}


def eval_yaml_schema_errors(content: Any) -> list[str]:
    """Where ``content`` breaks the eval.yaml schema, one message per problem."""
    import jsonschema

    rules = json.loads(resources.files("cogbench.schemas").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))
    return [
        f"{'.'.join(str(p) for p in error.absolute_path) or '(top level)'}: {error.message[:160]}"
        for error in jsonschema.Draft202012Validator(rules).iter_errors(content)
    ]


def check_metadata(folder: Path, manifest: dict[str, Any]) -> list[Finding]:
    """Each metadata file the manifest lists must be what the build renders from the manifest."""
    found = []
    listed = manifest.get("metadata_files")  # anything but a list of names lists none
    for name in [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []:
        if name not in METADATA or not (folder / name).is_file():
            continue  # a missing listed file is files.missing (check_files)
        code, read, render = METADATA[name]
        try:
            written = read((folder / name).read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError, yaml.YAMLError) as error:
            found.append(finding(code, name, None, None, f"not readable: {str(error)[:160]}"))
            continue
        if name == EVAL_YAML_FILE:
            found += [
                finding(code, name, None, None, f"breaks {SCHEMA_FILE}: {e}") for e in eval_yaml_schema_errors(written)
            ]
        try:
            expected = render(manifest)
        except (KeyError, TypeError, ValueError, AttributeError) as error:  # a damaged manifest is its own finding
            found.append(
                finding(
                    code,
                    name,
                    None,
                    None,
                    f"cannot be checked: manifest.json lacks what it is rendered from ({type(error).__name__}: {error})",
                )
            )
            continue
        if written != expected:
            found.append(
                finding(
                    code,
                    name,
                    None,
                    None,
                    "differs from what the build renders from this manifest (edited, or from another build); rebuild",
                )
            )
    return found
