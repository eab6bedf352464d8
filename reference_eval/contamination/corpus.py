"""A corpus as a stream: image files of a folder, WebDataset tar shards, Parquet files with an image column,
or Parquet files of hashes already computed. Nothing is extracted to disk and nothing is held whole: each
reader yields one item (key, bytes) or one batch of hashes at a time.
"""

from __future__ import annotations

import os
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.fingerprints import FAMILIES
from cogbench.errors import UsageError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".gif", ".tif", ".tiff")
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz")
KEY_COLUMNS = ("key", "__key__", "path", "url", "image_id", "id")  # a row's name in a Parquet corpus, first found
IMAGE_COLUMNS = ("image", "jpg", "png", "webp", "img", "bytes")
BATCH_ROWS = 256  # Parquet rows read at a time (image bytes); hash Parquet batches are larger


@dataclass(frozen=True)
class Source:
    """One CORPUS argument: what it is and how it is read."""

    path: Path
    kind: str  # "folder", "tar", "image", "parquet-images", "parquet-hashes"
    column: str | None = None  # the image column, or None
    key: str | None = None  # the key column of a Parquet file, or None (row number)


def image_column(schema, path: Path, asked: str | None) -> str | None:
    import pyarrow as pa

    def holds_images(field) -> bool:
        kind = field.type
        return (
            pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind)
            or (pa.types.is_struct(kind) and kind.get_field_index("bytes") >= 0)
        )

    if asked is not None:
        if asked not in schema.names:
            raise UsageError(f"{path}: no column {asked!r} (--image-column); it has {', '.join(schema.names[:10])}")
        if not holds_images(schema.field(asked)):
            raise UsageError(f"{path}: column {asked!r} holds {schema.field(asked).type}, not image bytes")
        return asked
    named = [name for name in IMAGE_COLUMNS if name in schema.names and holds_images(schema.field(name))]
    found = named or [field.name for field in schema if holds_images(field)]
    return found[0] if found else None


def classify(path: Path, image_column_name: str | None = None) -> Source:
    """What a CORPUS argument is, or a usage error saying what it is not."""
    if not path.exists():
        raise UsageError(f"{path}: no such file or folder")
    if path.is_dir():
        return Source(path, "folder")
    name = path.name.lower()
    if name.endswith(TAR_SUFFIXES):
        return Source(path, "tar")
    if name.endswith(IMAGE_SUFFIXES):
        return Source(path, "image")
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(path)
        except Exception as error:
            raise UsageError(f"{path}: not a readable Parquet file ({type(error).__name__})") from None
        key = next((column for column in KEY_COLUMNS if column in schema.names), None)
        if any(family in schema.names for family in FAMILIES) and image_column_name is None:
            return Source(path, "parquet-hashes", key=key)
        column = image_column(schema, path, image_column_name)
        if column is None:
            raise UsageError(
                f"{path}: neither an image column (bytes, or a struct with 'bytes') nor hash columns (phash, dhash, whash, pdq); "
                "name the image column with --image-column"
            )
        return Source(path, "parquet-images", column=column, key=key)
    raise UsageError(f"{path}: not a folder, a .tar shard, an image or a .parquet file")


def folder_items(folder: Path) -> Iterator[tuple[str, bytes]]:
    """Image files under ``folder`` in a stable order, keyed by their path inside it; links are not followed."""
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            if name.lower().endswith(IMAGE_SUFFIXES) and not path.is_symlink():
                yield path.relative_to(folder).as_posix(), path.read_bytes()


def tar_items(path: Path) -> Iterator[tuple[str, bytes]]:
    """The image members of a tar shard, streamed (``r|*``: one member at a time, never extracted)."""
    try:
        with tarfile.open(path, mode="r|*") as shard:
            for member in shard:
                if member.isfile() and member.name.lower().endswith(IMAGE_SUFFIXES):
                    handle = shard.extractfile(member)
                    if handle is not None:
                        yield f"{path.name}:{member.name}", handle.read()
    except tarfile.TarError as error:
        raise UsageError(f"{path}: not a readable tar shard ({error})") from None


def parquet_items(source: Source) -> Iterator[tuple[str, bytes]]:
    import pyarrow.parquet as pq

    columns = [source.column] + ([source.key] if source.key and source.key != source.column else [])
    row = 0
    for batch in pq.ParquetFile(source.path).iter_batches(columns=columns, batch_size=BATCH_ROWS):
        images = batch.column(source.column).to_pylist()
        keys = batch.column(source.key).to_pylist() if source.key else [None] * len(images)
        for key, image in zip(keys, images):
            data = image.get("bytes") if isinstance(image, dict) else image
            shown = f"{source.path.name}:{key if key is not None else f'row {row}'}"
            row += 1
            if data:
                yield shown, data


def items(source: Source) -> Iterator[tuple[str, bytes]]:
    if source.kind == "folder":
        return folder_items(source.path)
    if source.kind == "tar":
        return tar_items(source.path)
    if source.kind == "image":
        return iter([(source.path.name, source.path.read_bytes())])
    return parquet_items(source)


def hash_batches(source: Source, families: tuple[str, ...], rows: int = 65536) -> Iterator[dict[str, Any]]:
    """Batches of a hash Parquet: keys and each family's column (pyarrow string arrays), ``rows`` at a time."""
    import pyarrow.parquet as pq

    present = [family for family in families if family in pq.read_schema(source.path).names]
    columns = present + ([source.key] if source.key else [])
    first = 0
    for batch in pq.ParquetFile(source.path).iter_batches(columns=columns, batch_size=rows):
        keys = batch.column(source.key).to_pylist() if source.key else range(first, first + batch.num_rows)
        yield {
            "first": first,
            "keys": keys,
            "families": {family: batch.column(family) for family in present},
        }
        first += batch.num_rows


def hash_families(source: Source) -> tuple[str, ...]:
    import pyarrow.parquet as pq

    names = pq.read_schema(source.path).names
    return tuple(family for family in FAMILIES if family in names)
