"""Per-image fingerprints of a build: sha256 and perceptual hashes, written as ``fingerprints.parquet``.

They let anyone check a training corpus for copies of the benchmark's images (``cogbench leak-scan``)
without the images themselves. Every hash is a maintained library's: pHash, dHash and wHash from
``imagehash``, PDQ with its eight dihedral variants from ``pdqhash``, both in the ``fingerprints`` extra
(imagehash brings scipy, which the core install leaves to the ``eval`` extra; pdqhash compiles from source).
A build always writes the file with every image's sha256; it holds the hash families this install computes,
its manifest lists them (so the file is deterministic for an install), and ``publish`` refuses a build
without all four.

Each hash is computed on one canonical form of the image, so that the benchmark's side and a
corpus' side go through the same steps: the file decoded by Pillow in RGB (a JPEG in its draft
mode, at the smallest DCT scale that keeps 256 px), then ``thumbnail((256, 256))`` (bicubic): fast,
and a pure function of the file's bytes. The imagehash functions take its greyscale. PDQ's authors downsample before hashing too (PDQ filters to 64x64).
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata, util
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.writes import write_with

FINGERPRINT_FILE = "fingerprints.parquet"
FINGERPRINT_FORMAT = 1
CANONICAL_SIDE = 256  # the canonical form's longest side, in pixels: a 32x32 pHash and PDQ's 64x64 need no more
WHASH_SCALE = 64  # imagehash.whash's image_scale: fixed, so that a resized copy is hashed at the same scale
# The hash families, their width in bits, and who computes them.
FAMILIES = {"phash": 64, "dhash": 64, "whash": 64, "pdq": 256}
IMAGEHASH_FAMILIES = ("phash", "dhash", "whash")
# pdqhash.compute_dihedral's order of its eight variants (checked against PIL's transposes in the tests).
DIHEDRAL = (
    "original",
    "rotate 90",
    "rotate 180",
    "rotate 270",
    "vertical flip",
    "horizontal flip",
    "transpose",
    "transverse",
)
FINGERPRINTS_EXTRA = "fingerprints"
FINGERPRINTS_PIP = f"pip install 'cogbench-codis[{FINGERPRINTS_EXTRA}]'"
BENCHMARK_OF = {"description": "cogbench", "vqa": "cogbench", "codis": "codis"}


def pdq_available() -> bool:
    return util.find_spec("pdqhash") is not None


def imagehash_available() -> bool:
    return util.find_spec("imagehash") is not None


def families_here() -> tuple[str, ...]:
    """The families this install computes (the ``fingerprints`` extra: imagehash's three and pdqhash's PDQ)."""
    return (IMAGEHASH_FAMILIES if imagehash_available() else ()) + (("pdq",) if pdq_available() else ())


def library_versions(families: Iterable[str]) -> dict[str, str]:
    families = set(families)
    names = ["pillow"] + (["imagehash"] if families & set(IMAGEHASH_FAMILIES) else [])
    names += ["pdqhash"] if "pdq" in families else []
    return {name: metadata.version(name) for name in names}


def canonical_image(data: bytes):
    """The canonical form every hash is computed on (module docstring), and the image's own size."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        size = image.size
        image.draft("RGB", (CANONICAL_SIDE, CANONICAL_SIDE))  # a JPEG decodes at 1/2 to 1/8 scale, still >= 256 px
        canonical = image.convert("RGB")
    canonical.thumbnail((CANONICAL_SIDE, CANONICAL_SIDE), Image.Resampling.BICUBIC, reducing_gap=None)
    return canonical, size


def hashes_of_image(image, families: Iterable[str] = IMAGEHASH_FAMILIES, dihedral: bool = False) -> dict[str, Any]:
    """Hex hashes of a canonical image; ``pdq_dihedral`` (8 hex) too when ``dihedral``."""
    out: dict[str, Any] = {}
    families = tuple(families)
    if set(families) & set(IMAGEHASH_FAMILIES):
        import imagehash

        grey = image.convert("L")
        if "phash" in families:
            out["phash"] = str(imagehash.phash(grey))
        if "dhash" in families:
            out["dhash"] = str(imagehash.dhash(grey))
        if "whash" in families:
            out["whash"] = str(imagehash.whash(grey, image_scale=WHASH_SCALE))
    if "pdq" in families:
        import numpy as np
        import pdqhash

        pixels = np.asarray(image)
        if dihedral:
            vectors, quality = pdqhash.compute_dihedral(pixels)
            out["pdq"], out["pdq_quality"] = bits_hex(vectors[0]), int(quality)
            out["pdq_dihedral"] = [bits_hex(vector) for vector in vectors]
        else:
            vector, quality = pdqhash.compute(pixels)
            out["pdq"], out["pdq_quality"] = bits_hex(vector), int(quality)
    return out


def bits_hex(bits) -> str:
    """A 0/1 vector as hex, most significant bit first (numpy.packbits), as imagehash writes its hashes."""
    import numpy as np

    return np.packbits(np.asarray(bits, dtype=np.uint8)).tobytes().hex()


def fingerprint_bytes(data: bytes, families: Iterable[str], dihedral: bool = True) -> dict[str, Any]:
    """sha256, the original size and every hash of one image file's bytes."""
    families = tuple(families)
    if not families:  # the size from the header alone: no pixel is decoded
        from PIL import Image

        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
        return {"sha256": hashlib.sha256(data).hexdigest(), "width": width, "height": height}
    image, (width, height) = canonical_image(data)
    row = {"sha256": hashlib.sha256(data).hexdigest(), "width": width, "height": height}
    return row | hashes_of_image(image, families, dihedral)


def in_threads(function: Callable, items: Iterable, workers: int | None = None) -> Iterator:
    """``map`` in a few threads (Pillow, scipy and pdqhash's C++ release the GIL), in order, a batch at a time."""
    workers = workers or min(os.cpu_count() or 1, 4)
    batch: list = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for item in items:
            batch.append(item)
            if len(batch) >= 4 * workers:
                yield from pool.map(function, batch)
                batch = []
        yield from pool.map(function, batch)


def arrow_schema(families: Iterable[str]):
    import pyarrow as pa

    fields = [
        pa.field("benchmark", pa.string(), nullable=False),
        pa.field("image_id", pa.string(), nullable=False),
        pa.field("image_file", pa.string(), nullable=False),
        pa.field("configs", pa.list_(pa.string()), nullable=False),
        pa.field("width", pa.int32(), nullable=False),
        pa.field("height", pa.int32(), nullable=False),
        pa.field("sha256", pa.string(), nullable=False),
    ]
    fields += [pa.field(name, pa.string(), nullable=False) for name in IMAGEHASH_FAMILIES if name in families]
    if "pdq" in families:
        fields += [
            pa.field("pdq", pa.string(), nullable=False),
            pa.field("pdq_quality", pa.int32(), nullable=False),
            pa.field("pdq_dihedral", pa.list_(pa.string()), nullable=False),
        ]
    return pa.schema(fields)


def images_of(records: dict[str, list]) -> list[dict[str, Any]]:
    """One entry per distinct image (benchmark, image id), with its file and the configs using it, sorted."""
    images: dict[tuple[str, str], dict[str, Any]] = {}
    for config in sorted(records):
        for record in records[config]:
            key = (BENCHMARK_OF[config], record.image_id)
            entry = images.setdefault(
                key,
                {
                    "benchmark": key[0],
                    "image_id": key[1],
                    "image_file": record.image_path.name,
                    "configs": [],
                    "path": record.image_path,
                },
            )
            if config not in entry["configs"]:
                entry["configs"].append(config)
    return [images[key] for key in sorted(images)]


def write_fingerprints(path: Path, records: dict[str, list], families: tuple[str, ...]) -> int:
    """Hash every distinct image of the build's records and write the Parquet file; return its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    images = images_of(records)
    hashed = in_threads(lambda entry: fingerprint_bytes(entry["path"].read_bytes(), families), images)
    rows = [
        {key: entry[key] for key in ("benchmark", "image_id", "image_file", "configs")} | row
        for entry, row in zip(images, hashed)
    ]
    table = pa.Table.from_pylist(rows, schema=arrow_schema(families))
    write_with(path, lambda handle: pq.write_table(table, handle, compression="zstd"))
    return len(rows)


def read_fingerprints(path: str | os.PathLike):
    import pyarrow.parquet as pq

    return pq.read_table(path)
