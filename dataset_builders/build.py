"""Write typed records as a dataset folder: Parquet shards and the manifest, deterministically.

raw files -> schema check -> typed records -> Parquet shards -> manifest

``cards.release.build_release`` puts this between the validation gates and
adds the card; the finished folder is exactly what is uploaded to the Hub::

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
from collections import Counter
from pathlib import Path
from typing import Any

from cogbench import __version__
from cogbench.dataset_builders.fetch import against_release
from cogbench.dataset_builders.fingerprints import (
    FINGERPRINT_FILE,
    FINGERPRINT_FORMAT,
    families_here,
    library_versions,
    write_fingerprints,
)
from cogbench.dataset_builders.raw import RawSources, relative_name, sha256_file
from cogbench.dataset_builders.read import read_raw, sorted_records
from cogbench.dataset_builders.writes import write_file, write_with
from cogbench.errors import CogbenchError, RawDataError, UsageError
from cogbench.schemas.vocabulary import (  # noqa: F401 (DEFAULT_VERSION: the build's default, named here too)
    ANSWER_LETTERS,
    CODIS_CATEGORIES,
    COGBENCH_CATEGORIES,
    DEFAULT_VERSION,
    ID_COLUMN,
    SPLIT,
)

MANIFEST_FORMAT = 1
MANIFEST_FILE = "manifest.json"
CARD_FILE = "README.md"
# The Hub's guidance is shards of a few hundred MB; images dominate the size.
DEFAULT_MAX_SHARD_BYTES = 500 * 1024 * 1024
# Rows per Parquet row group: the value `datasets` uses for image datasets, and a cap on
# a group's image bytes, since writing or reading a group holds it in memory several times.
ROW_GROUP_SIZE = 100
ROW_GROUP_MAX_BYTES = 8 * 1024 * 1024
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
# Strings and lists in the manifest's example rows (shown in the card) are cut to
# keep them readable: top-level lists keep 3 items, nested ones (chains of reasoning) 1.
EXAMPLE_TEXT_CHARS = 160
EXAMPLE_LIST_ITEMS = (3, 1)


def read_records(sources: RawSources) -> dict[str, list]:
    """Typed records of every config whose raw files are present, sorted by id.

    Raises ``RawDataError`` listing every problem the one raw reader found;
    ``cards.release.build_release`` runs the validators on the same read instead.
    """
    read = read_raw(sources)
    if read.problems:
        raise RawDataError([str(problem) for problem in read.problems])
    return sorted_records(read.records)


def input_files(sources: RawSources, records: dict[str, list]) -> list[Path]:
    """Every raw file the build read: annotation files and referenced images."""
    files = set()
    if sources.cogbench is not None:
        files.update(
            p
            for p in (sources.cogbench / "cogbench_description.json", sources.cogbench / "cogbench_vqa.json")
            if p.is_file()
        )
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


def _groups(records: list, max_rows: int | None, max_bytes: int) -> list[tuple[int, int]]:
    """Split rows into consecutive (start, stop) slices of at most ``max_rows`` rows whose
    image bytes stay under ``max_bytes`` (a slice holds at least one row)."""
    boundaries, start, size = [], 0, 0
    for index, record in enumerate(records):
        image_size = record.image_path.stat().st_size
        if index > start and (size + image_size > max_bytes or (max_rows and index - start >= max_rows)):
            boundaries.append((start, index))
            start, size = index, 0
        size += image_size
    boundaries.append((start, len(records)))
    return boundaries


def _shard_boundaries(records: list, max_shard_bytes: int) -> list[tuple[int, int]]:
    """Split rows into consecutive shards whose image bytes stay under the limit."""
    return _groups(records, None, max_shard_bytes)


def write_shard(config: str, records: list, path: Path) -> int:
    """Write one shard row group by row group, so memory holds one group's images at a time
    (small row groups also let the Hub viewer page through images); return its Arrow size."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cogbench.schemas.features import FEATURES  # datasets' Features: imported by what writes rows, not by readers

    features = FEATURES[config]
    schema = features.arrow_schema  # carries the `datasets` features (class names) as metadata
    num_bytes = 0

    # No min/max statistics for the image column: they would copy whole images into the
    # footer. Dictionary encoding stays: it stores an image shared by consecutive rows once.
    def write(handle) -> None:
        nonlocal num_bytes
        statistics = _except(schema, "image")
        with pq.ParquetWriter(handle, schema, compression="snappy", write_statistics=statistics) as writer:
            for start, stop in _groups(records, ROW_GROUP_SIZE, ROW_GROUP_MAX_BYTES):
                rows = [features.encode_example(record.to_row()) for record in records[start:stop]]
                table = pa.Table.from_pylist(rows, schema=schema)
                num_bytes += table.nbytes
                writer.write_table(table, row_group_size=ROW_GROUP_SIZE)
                del rows, table
                pa.default_memory_pool().release_unused()  # else the pool keeps every group's peak

    write_with(path, write)  # a temporary in the staging folder, renamed into place
    return num_bytes


def _except(schema, column: str) -> list[str]:
    """Leaf column paths of ``schema`` outside ``column`` (Parquet per-column writer options)."""
    import pyarrow as pa

    def leaves(field, prefix):
        name = f"{prefix}{field.name}"
        if pa.types.is_struct(field.type):
            return [leaf for child in field.type for leaf in leaves(child, name + ".")]
        if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
            return leaves(field.type.value_field, name + ".list.")
        return [name]

    return [leaf for field in schema if field.name != column for leaf in leaves(field, "")]


def write_config(config: str, records: list, staging: Path, max_shard_bytes: int) -> dict[str, Any]:
    """Write one config's Parquet shards; return their manifest entries."""
    shards = _shard_boundaries(records, max_shard_bytes)
    folder = staging / "data" / config
    folder.mkdir(parents=True)
    entries, num_bytes = {}, 0
    for number, (start, stop) in enumerate(shards):
        path = folder / f"{SPLIT}-{number:05d}-of-{len(shards):05d}.parquet"
        num_bytes += write_shard(config, records[start:stop], path)
        entries[relative_name(path, staging)] = {
            "rows": stop - start,
            "bytes": path.stat().st_size,
            "sha256": sha256_file(path),
        }
    return {"shards": entries, "num_bytes": num_bytes}


def example_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row as shown in the card: the image replaced by its file name, long values cut."""

    def shorten(value: Any, nested: bool) -> Any:
        if isinstance(value, str) and len(value) > EXAMPLE_TEXT_CHARS:
            return value[:EXAMPLE_TEXT_CHARS] + "..."
        if isinstance(value, list):
            limit = EXAMPLE_LIST_ITEMS[nested]
            kept = [shorten(item, True) for item in value[:limit]]
            return kept + ([f"... {len(value) - limit} more"] if len(value) > limit else [])
        if isinstance(value, dict):
            return {key: shorten(item, True) for key, item in value.items()}
        return value

    shown = {key: shorten(value, False) for key, value in row.items() if key != "image"}
    if "image" in row:
        shown["image"] = f"<image {row['image']['path']}>"
    return shown


def make_manifest(
    version: str, sources: RawSources, records: dict[str, list], written: dict[str, dict]
) -> dict[str, Any]:
    hashes = {path: sha256_file(path) for path in input_files(sources, records)}
    raw_files = {relative_name(path, sources.root): digest for path, digest in hashes.items()}
    folders = {name: path for name, path in (("cogbench", sources.cogbench), ("codis", sources.codis)) if path}
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
        "raw_release": against_release(folders, hashes),
        "configs": configs,
    }


def write_json(path: Path, data: Any) -> None:
    """Keys in the order the build made them, so the card renders the same from the file
    as from memory (``publish`` re-renders it to catch an edited card)."""
    write_file(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def check_version(version: str) -> None:
    if not SEMVER.match(version):
        raise UsageError(f"version {version!r} is not MAJOR.MINOR.PATCH (for example 1.0.0)")


def write_dataset(
    staging: Path,
    version: str,
    sources: RawSources,
    records: dict[str, list],
    max_shard_bytes: int,
    repo_id: str | None,
) -> dict[str, Any]:
    """Write every config's shards into ``staging``; return the manifest (not yet written)."""
    written = {config: write_config(config, records[config], staging, max_shard_bytes) for config in sorted(records)}
    manifest = make_manifest(version, sources, records, written)
    manifest["repo_id"] = repo_id
    manifest["fingerprints"] = write_fingerprint_file(staging, records)
    return manifest


def write_fingerprint_file(staging: Path, records: dict[str, list]) -> dict[str, Any]:
    """``fingerprints.parquet`` (``fingerprints.py``) and its manifest entry: what validate checks it against."""
    families = families_here()
    path = staging / FINGERPRINT_FILE
    rows = write_fingerprints(path, records, families)
    return {
        "file": FINGERPRINT_FILE,
        "format": FINGERPRINT_FORMAT,
        "rows": rows,
        "bytes": path.stat().st_size,
        "sha256": sha256_file(path),
        "families": list(families),
        "libraries": library_versions(families),
    }


def load_manifest(folder: str | os.PathLike) -> dict[str, Any]:
    path = Path(folder) / MANIFEST_FILE
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{folder} is not a cogbench build: no {MANIFEST_FILE}") from None
    except (OSError, ValueError, RecursionError) as error:
        raise CogbenchError(f"{path}: not a readable manifest ({type(error).__name__}); rebuild the folder") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("configs"), dict):
        raise CogbenchError(f"{path}: no 'configs' object; rebuild the folder")
    return manifest
