"""Build a Hub-ready dataset folder from the raw annotations, deterministically.

raw files -> schema check -> typed records -> Parquet shards -> manifest -> card

The output folder is exactly what is uploaded to the Hub::

    OUT/README.md                               card with the `configs` YAML
    OUT/manifest.json                           versions, hashes, counts
    OUT/data/<config>/test-00000-of-0000N.parquet

It is written into a staging folder beside OUT and moved into place only when
complete, so a failed build leaves no partial output behind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from cogbench import __version__
from cogbench.dataset_builders.card import example_row
from cogbench.dataset_builders.features import (
    ANSWER_LETTERS,
    CODIS_CATEGORIES,
    COGBENCH_CATEGORIES,
    FEATURES,
    ID_COLUMN,
    SPLIT,
)
from cogbench.dataset_builders.raw import RawSources, find_sources, relative_name, sha256_file
from cogbench.dataset_builders.records import read_codis, read_description, read_vqa
from cogbench.errors import CogbenchError, UsageError

MANIFEST_FORMAT = 1
MANIFEST_FILE = "manifest.json"
CARD_FILE = "README.md"
DEFAULT_VERSION = "1.0.0"
# The Hub's guidance is shards of a few hundred MB; images dominate the size.
DEFAULT_MAX_SHARD_BYTES = 500 * 1024 * 1024
# Rows per Parquet row group: the value `datasets` uses for image datasets.
ROW_GROUP_SIZE = 100
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


@dataclass(frozen=True)
class BuildResult:
    out: Path
    manifest: dict[str, Any]


def read_records(sources: RawSources) -> dict[str, list]:
    """Typed records of every config whose raw files are present, sorted by id."""
    records: dict[str, list] = {}
    if sources.cogbench is not None:
        folder = sources.cogbench
        descriptions = None
        if (folder / "cogbench_description.json").is_file():
            descriptions = records["description"] = read_description(folder, sources.root)
        if (folder / "cogbench_vqa.json").is_file():
            records["vqa"] = read_vqa(folder, sources.root, descriptions)
    if sources.codis is not None:
        records["codis"] = read_codis(sources.codis, sources.root)
    return records


def input_files(sources: RawSources, records: dict[str, list]) -> list[Path]:
    """Every raw file the build read: annotation files and referenced images."""
    files = set()
    if sources.cogbench is not None:
        files.update(p for p in (sources.cogbench / "cogbench_description.json", sources.cogbench / "cogbench_vqa.json") if p.is_file())
    if sources.codis is not None:
        files.add(sources.codis / "data.json")
    for config_records in records.values():
        files.update(record.image_path for record in config_records)
    return sorted(files)


def config_counts(config: str, records: list) -> dict[str, Any]:
    """The per-config numbers that the papers publish (and the validators check)."""
    if config == "description":
        per_category = {name: sum(len(r.cors[name]) for r in records) for name in COGBENCH_CATEGORIES}
        return {
            "images": len(records),
            "entities": sum(len(r.entities) for r in records),
            "cors": sum(per_category.values()),
            "cors_per_category": per_category,
        }
    if config == "vqa":
        categories = Counter(r.category for r in records)
        answers = Counter(r.answer for r in records)
        return {
            "questions": len(records),
            "images": len({r.image_id for r in records}),
            "per_category": {name: categories.get(name, 0) for name in COGBENCH_CATEGORIES},
            "answers": {letter: answers.get(letter, 0) for letter in ANSWER_LETTERS},
        }
    if config == "codis":
        categories = Counter(r.category for r in records)
        return {
            "pairs": len(records),
            "queries": 2 * len(records),
            "images": len({r.image_id for r in records}),
            "per_category": {name: categories.get(name, 0) for name in CODIS_CATEGORIES},
        }
    raise ValueError(config)


def _shard_boundaries(records: list, max_shard_bytes: int) -> list[tuple[int, int]]:
    """Split rows into consecutive shards whose image bytes stay under the limit."""
    boundaries, start, size = [], 0, 0
    for index, record in enumerate(records):
        image_size = record.image_path.stat().st_size
        if index > start and size + image_size > max_shard_bytes:
            boundaries.append((start, index))
            start, size = index, 0
        size += image_size
    boundaries.append((start, len(records)))
    return boundaries


def _write_parquet(dataset, path: Path) -> None:
    """Write a shard; small row groups let the Hub viewer page through images."""
    import pyarrow.parquet as pq

    table = dataset.with_format("arrow")[:]
    pq.write_table(table, path, row_group_size=ROW_GROUP_SIZE, compression="snappy")


def write_config(config: str, records: list, staging: Path, max_shard_bytes: int) -> dict[str, Any]:
    """Write one config's Parquet shards; return their manifest entries."""
    import datasets

    shards = _shard_boundaries(records, max_shard_bytes)
    folder = staging / "data" / config
    folder.mkdir(parents=True)
    entries, num_bytes = {}, 0
    for number, (start, stop) in enumerate(shards):
        rows = [record.to_row() for record in records[start:stop]]
        dataset = datasets.Dataset.from_list(rows, features=FEATURES[config])
        num_bytes += dataset.data.nbytes
        path = folder / f"{SPLIT}-{number:05d}-of-{len(shards):05d}.parquet"
        _write_parquet(dataset, path)
        entries[relative_name(path, staging)] = {
            "rows": stop - start,
            "bytes": path.stat().st_size,
            "sha256": sha256_file(path),
        }
    return {"shards": entries, "num_bytes": num_bytes}


def make_manifest(version: str, sources: RawSources, records: dict[str, list], written: dict[str, dict]) -> dict[str, Any]:
    raw_files = {relative_name(path, sources.root): sha256_file(path) for path in input_files(sources, records)}
    configs = {}
    for config in sorted(records):
        configs[config] = {
            "split": SPLIT,
            "rows": len(records[config]),
            "id_column": ID_COLUMN[config],
            "num_bytes": written[config]["num_bytes"],
            "counts": config_counts(config, records[config]),
            "shards": written[config]["shards"],
            "example": example_row(records[config][0].to_row()),
        }
    return {
        "manifest_format": MANIFEST_FORMAT,
        "dataset_version": version,
        "builder": "cogbench",
        "builder_version": __version__,
        "sources": {
            name: relative_name(path, sources.root)
            for name, path in (("cogbench", sources.cogbench), ("codis", sources.codis))
            if path is not None
        },
        "raw_files": raw_files,
        "configs": configs,
    }


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def _check_replaceable(out: Path) -> None:
    """Only a previous build (or an empty folder) may be replaced."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MANIFEST_FILE).is_file())):
        raise UsageError(f"{out} exists and is not a cogbench build (no {MANIFEST_FILE}); refusing to overwrite it")


def _move_into_place(staging: Path, out: Path) -> None:
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def build_release(
    raw_dir: str | os.PathLike,
    out: str | os.PathLike,
    version: str = DEFAULT_VERSION,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    render_card: Callable[[dict[str, Any]], str] | None = None,
    previous: str | os.PathLike | None = None,
    repo_id: str | None = None,
) -> BuildResult:
    """Build every config whose raw files are in ``raw_dir`` into ``out``.

    ``previous`` is the last released build: the changes since it go into the
    changelog, and a version too small for them is refused (see versions.py).
    ``repo_id`` is the Hub repo the card tells users to load from.
    """
    if not SEMVER.match(version):
        raise UsageError(f"version {version!r} is not MAJOR.MINOR.PATCH (for example 1.0.0)")
    out = Path(out)
    _check_replaceable(out)
    sources = find_sources(raw_dir)
    records = read_records(sources)
    from cogbench.validation import require_valid, validate, validate_sources

    # The release gate (issue 3): the same validators on the input and on the
    # staged output, before anything is moved into place.
    require_valid(validate_sources(sources, expected=None), "the raw data")
    if render_card is None:
        from cogbench.dataset_builders.card import render_card
    from cogbench.dataset_builders.versions import changelog_entries

    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        written = {config: write_config(config, records[config], staging, max_shard_bytes) for config in sorted(records)}
        manifest = make_manifest(version, sources, records, written)
        manifest["repo_id"] = repo_id
        manifest["changelog"] = changelog_entries(manifest, previous, staging)
        write_json(staging / MANIFEST_FILE, manifest)
        (staging / CARD_FILE).write_text(render_card(manifest), encoding="utf-8")
        require_valid(validate(staging, expected=None), f"the built release {out}")
        _move_into_place(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return BuildResult(out=out, manifest=manifest)


def load_manifest(folder: str | os.PathLike) -> dict[str, Any]:
    path = Path(folder) / MANIFEST_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CogbenchError(f"{folder} is not a cogbench build: no {MANIFEST_FILE}") from None
