"""``fingerprints.parquet`` against the build it describes: schema, one row per image, sha256 and pHash.

The file's own sha256 is checked with the shards (``integrity.check_files``); here its contents are
checked against the images embedded in the shards, so a file that matches its manifest but not the
images (a rebuilt manifest, another build's file) fails too. The sha256 of every image is recomputed,
and its pHash (decoded at a reduced scale: about 2.8 s of CPU for the 221 images of the public build, which
the build's own gate leaves out: it computed them a moment before).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.build import MANIFEST_FILE
from cogbench.dataset_builders.fingerprints import (
    BENCHMARK_OF,
    FAMILIES,
    FINGERPRINT_FILE,
    FINGERPRINTS_PIP,
    arrow_schema,
    canonical_image,
    hashes_of_image,
    imagehash_available,
    in_threads,
)
from cogbench.errors import UsageError
from cogbench.validation.findings import Finding, finding
from cogbench.validation.integrity import BuildNotVerified, verify_build

CODE = "fingerprints.mismatch"


def shard_images(folder: Path, manifest: dict[str, Any]) -> Iterator[tuple[tuple[str, str], bytes]]:
    """Each distinct image (benchmark, image id) of the shards with its bytes, read one batch at a time
    (the first row's bytes of an image: the build embeds the same file in every row of it)."""
    import pyarrow.parquet as pq

    seen: set[tuple[str, str]] = set()
    for config, entry in sorted(manifest["configs"].items()):
        for name in sorted(entry.get("shards", {})):
            path = folder / name
            if not path.is_file():
                continue  # files.missing
            try:
                batches = pq.ParquetFile(path).iter_batches(columns=["image_id", "image"], batch_size=32)
                for batch in batches:
                    for image_id, image in zip(batch.column("image_id").to_pylist(), batch.column("image").to_pylist()):
                        key = (BENCHMARK_OF[config], image_id)
                        if key not in seen and image and image.get("bytes") is not None:
                            seen.add(key)
                            yield key, image["bytes"]
            except Exception:  # a damaged shard: its hash check and loading report it
                continue


def check_fingerprints(folder: Path, manifest: dict[str, Any], recompute_hashes: bool = True) -> list[Finding]:
    """The fingerprint file's schema and rows against the shards' images (module docstring), the images
    streamed past (memory holds a batch of them, never the build's)."""
    import pyarrow.parquet as pq

    entry = manifest.get("fingerprints")
    if not isinstance(entry, dict):
        return [
            finding(CODE, "manifest.json", None, "fingerprints", "no fingerprints entry: a build always writes one")
        ]
    path = folder / FINGERPRINT_FILE
    if not path.is_file():
        return []  # files.missing, from check_files
    families = entry.get("families")
    if not isinstance(families, list) or not set(families) <= set(FAMILIES) or len(set(families)) != len(families):
        return [finding(CODE, "manifest.json", None, "fingerprints.families", f"{families!r} is not a set of families")]
    try:
        table = pq.read_table(path)
    except Exception as error:
        return [finding(CODE, FINGERPRINT_FILE, None, None, f"not a readable Parquet file: {type(error).__name__}")]
    if not table.schema.remove_metadata().equals(arrow_schema(families)):
        return [finding(CODE, FINGERPRINT_FILE, None, None, f"schema differs from the build's: {table.schema.names}")]
    found = []
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for row in table.select(
        [c for c in ("benchmark", "image_id", "sha256", "phash") if c in table.column_names]
    ).to_pylist():
        key = (row["benchmark"], row["image_id"])
        if key in rows:
            found.append(finding(CODE, FINGERPRINT_FILE, key[1], "image_id", f"{key[0]} image listed twice"))
        rows[key] = row
    phash = "phash" in families and imagehash_available() and recompute_hashes
    if "phash" in families and recompute_hashes and not phash:
        found.append(
            finding(
                "fingerprints.not_rechecked",
                FINGERPRINT_FILE,
                None,
                "phash",
                f"imagehash is not installed, so the pHashes were not recomputed ({FINGERPRINTS_PIP})",
            )
        )

    def recomputed(item: tuple[tuple[str, str], bytes]) -> tuple[tuple[str, str], str, str | None]:
        key, data = item
        ours = hashes_of_image(canonical_image(data)[0], ("phash",))["phash"] if phash and key in rows else None
        return key, hashlib.sha256(data).hexdigest(), ours

    versions = ", ".join(f"{k} {v}" for k, v in sorted((entry.get("libraries") or {}).items()))
    images: set[tuple[str, str]] = set()
    for key, digest, ours in in_threads(recomputed, shard_images(folder, manifest)):
        images.add(key)
        row = rows.get(key)
        if row is None:
            found.append(
                finding(CODE, FINGERPRINT_FILE, key[1], "image_id", f"{key[0]} image of the shards has no row")
            )
            continue
        if digest != row["sha256"]:
            found.append(finding(CODE, FINGERPRINT_FILE, key[1], "sha256", "differs from the image's bytes"))
        if phash and ours != row["phash"]:
            found.append(
                finding(
                    CODE,
                    FINGERPRINT_FILE,
                    key[1],
                    "phash",
                    f"{row['phash']}, recomputed {ours} (built with {versions or 'unknown versions'})",
                )
            )
    for key in sorted(set(rows) - images):
        found.append(
            finding(CODE, FINGERPRINT_FILE, key[1], "image_id", f"no {key[0]} image of the shards has this id")
        )
    return found


def verified_fingerprints(folder: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A local build's manifest entry and fingerprint rows, after ``verify_build`` (the file's sha256 included)."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such folder; give a folder made by `cogbench build`")
    verify_build(folder)
    manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    entry = manifest.get("fingerprints")
    if not isinstance(entry, dict):
        raise BuildNotVerified(
            f"{folder}: built by a cogbench without fingerprints.parquet; rebuild it with this cogbench (`cogbench build`)"
        )
    return entry, pq.read_table(folder / FINGERPRINT_FILE).to_pylist()
