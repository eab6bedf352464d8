"""Errata: the records a new build changed, field by field, with old and new values and the maintainer's reason.

``cogbench diff OLD NEW --errata FILE`` writes them (``errata_of``: the changed records ``versions.diff_builds``
finds, their values read back from both builds); ``cogbench build --previous OLD --errata FILE`` carries
them into the manifest (so the build marker's sha256 of manifest.json covers them) after checking that they
are exactly what the build itself changed, and the card renders them (``card.errata_section``). The reasons
are the one thing a maintainer writes: a notes file (JSON or YAML, item id -> reason) given to ``diff``.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from cogbench.cards.versions import ReleaseDiff, diff_builds
from cogbench.dataset_builders.build import load_manifest
from cogbench.dataset_builders.load import dataset_revision
from cogbench.dataset_builders.output import check_option_file
from cogbench.dataset_builders.writes import write_file
from cogbench.errors import UsageError, echoed

ERRATA_FORMAT = 1
SCHEMA_FILE = "errata.schema.json"


def _cell(value: Any, feature: Any) -> Any:
    """A cell as the errata show it: an image by its sha256, a class label by its name."""
    import datasets

    if isinstance(feature, datasets.Image):
        return "sha256:" + hashlib.sha256((value or {}).get("bytes") or b"").hexdigest()
    if isinstance(feature, datasets.ClassLabel) and isinstance(value, int):
        return feature.int2str(value)
    return value


def changed_rows(folder: Path, manifest: dict[str, Any], config: str, ids: set[str]) -> dict[str, dict[str, Any]]:
    """The rows of ``ids`` in one config, each cell as ``_cell`` shows it (one row group at a time)."""
    import datasets
    import pyarrow.parquet as pq

    entry = manifest["configs"][config]
    rows: dict[str, dict[str, Any]] = {}
    for shard in sorted(entry["shards"]):
        parquet = pq.ParquetFile(folder / shard, pre_buffer=False)
        features = datasets.Features.from_arrow_schema(parquet.schema_arrow)
        for group in range(parquet.metadata.num_row_groups):
            for row in parquet.read_row_group(group).to_pylist():
                if row[entry["id_column"]] in ids:
                    rows[row[entry["id_column"]]] = {k: _cell(v, features.get(k)) for k, v in row.items()}
    return rows


def errata_of(
    old: Path, new: Path, diff: ReleaseDiff, reasons: dict[str, str], new_manifest: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One entry per changed field of every record both builds hold (added and removed records are the
    changelog's), with its old and new value and the reason ``reasons`` gives for its id (None: not said)."""
    old_manifest, new_manifest = load_manifest(old), new_manifest or load_manifest(new)
    items = []
    for config_diff in diff.configs:
        if not config_diff.changed:
            continue
        ids = set(config_diff.changed)
        before = changed_rows(old, old_manifest, config_diff.config, ids)
        after = changed_rows(new, new_manifest, config_diff.config, ids)
        for record_id, columns in config_diff.changed.items():
            for column in columns:
                items.append(
                    {
                        "config": config_diff.config,
                        "id": record_id,
                        "field": column,
                        "old": before[record_id].get(column),
                        "new": after[record_id].get(column),
                        "reason": reasons.get(record_id),
                    }
                )
    return {
        "errata_format": ERRATA_FORMAT,
        "old_version": diff.old_version,
        "new_version": diff.new_version,
        "items": items,
    }


def read_reasons(path: Path | None) -> dict[str, str]:
    """The maintainer's notes: a JSON or YAML mapping of item id to the reason for its change."""
    if path is None:
        return {}
    try:
        notes = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise UsageError(f"--reasons {path}: not a readable JSON or YAML file ({type(error).__name__})") from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise UsageError(f"--reasons {path}: not a readable JSON or YAML file (nested too deeply)") from None
    if not isinstance(notes, dict) or not all(isinstance(v, str) for v in notes.values()):
        raise UsageError(f"--reasons {path}: give a mapping of item id to reason, such as {{'010': 'typo fixed'}}")
    return {str(key): value for key, value in notes.items()}


def check_reasons(reasons: dict[str, str], errata: dict[str, Any], path: Path) -> None:
    """Refuse reasons for items the diff does not change (a mistyped id, ``010`` read by YAML as the
    number 8): each would be dropped without a word, and its item left without its reason."""
    changed = sorted({item["id"] for item in errata["items"]})
    unknown = sorted(set(reasons) - set(changed))
    if not unknown:
        return
    shown = ", ".join(echoed(name, 40) for name in unknown[:5]) + (
        f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
    )
    known = ", ".join(echoed(name, 40) for name in changed[:5]) + (", ..." if len(changed) > 5 else "")
    raise UsageError(
        f"--reasons {path}: {len(unknown)} reason(s) for items this diff does not change: {shown} (it changes: "
        f"{known or 'none'}); correct the ids (quote them in YAML: '010') or remove those reasons"
    )


def write_errata(path: Path, errata: dict[str, Any]) -> None:
    check_option_file(path, "--errata")
    write_file(path, json.dumps(errata, indent=2, ensure_ascii=False) + "\n")


def read_errata(path: Path) -> dict[str, Any]:
    """An errata file, checked against ``schemas/errata.schema.json``; one line naming what is wrong."""
    import jsonschema

    try:
        errata = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise UsageError(f"--errata {path}: not a readable JSON file ({type(error).__name__})") from None
    rules = json.loads(resources.files("cogbench.schemas").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))
    problem = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(rules).iter_errors(errata))
    if problem is not None:
        where = ".".join(str(part) for part in problem.absolute_path) or "(top level)"
        raise UsageError(
            f"--errata {path}: {where}: {problem.message[:160]} (`cogbench diff` writes it, with --errata FILE)"
        )
    return errata


def _key(item: dict[str, Any]) -> tuple[str, str, str]:
    return item["config"], item["id"], item["field"]


def checked_errata(given: dict[str, Any], path: Path, previous: Path, staging: Path, manifest: dict) -> dict:
    """The build's errata: what it changed since ``previous`` (derived here, never taken on trust), with
    the reasons of the file ``path``; a file that names other changes or values is refused."""
    diff = diff_builds(previous, staging, new_manifest=manifest)
    derived = errata_of(previous, staging, diff, {}, new_manifest=manifest)
    stated = {_key(item): item for item in given["items"]}
    for item in derived["items"]:
        entry = stated.pop(_key(item), None)
        if entry is None or (entry["old"], entry["new"]) != (item["old"], item["new"]):
            what = "does not list it" if entry is None else f"says {entry['old']!r} -> {entry['new']!r}"
            raise UsageError(
                f"--errata {path}: {item['config']} {item['id']} field {item['field']} changed from {item['old']!r} "
                f"to {item['new']!r} since {previous}, the errata file {what}; write it again from a build of "
                "these raw files (`cogbench diff` of the two builds, with --errata)"
            )
        item["reason"] = entry.get("reason")
    if stated:
        config, record_id, column = next(iter(stated))
        raise UsageError(
            f"--errata {path}: lists {config} {record_id} field {column}, which this build does not change "
            f"since {previous}; write it again from a build of these raw files (`cogbench diff`, with --errata)"
        )
    # The build they are over, as run.json's dataset_revision names it: `rescore` trusts errata over a
    # run's own build to say which items' images changed.
    derived["old_revision"] = dataset_revision(str(previous))
    return derived
