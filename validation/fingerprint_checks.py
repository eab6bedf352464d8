"""``fingerprints.parquet`` against the build it describes: schema, one row per image, sha256 and pHash.

The file's own sha256 is checked with the shards (``integrity.check_files``); here its contents are
checked against the images embedded in the shards, so a file that matches its manifest but not the
images (a rebuilt manifest, another build's file) fails too. The sha256 of every image is recomputed,
and its pHash (about 4 ms an image on the canonical form: 1 s for the 221 images of the public build).
"""

from __future__ import annotations

import hashlib
import json
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
from cogbench.dataset_builders.output import build_command
from cogbench.errors import UsageError
from cogbench.validation.findings import Finding, finding
from cogbench.validation.integrity import BuildNotVerified, verify_build

CODE = "fingerprints.mismatch"


def shard_images(folder: Path, manifest: dict[str, Any]) -> dict[tuple[str, str], bytes]:
    """Each distinct image (benchmark, image id) of the shards, its bytes read one batch at a time,
    the first row's bytes kept (a later row with other bytes is reported by the caller's digest check)."""
    import pyarrow.parquet as pq

    images: dict[tuple[str, str], bytes] = {}
    for config, entry in sorted(manifest["configs"].items()):
        for name in sorted(entry.get("shards", {})):
            path = folder / name
            if not path.is_file():
                continue  # files.missing
            try:
                batches = pq.ParquetFile(path).iter_batches(columns=["image_id", "image"], batch_size=100)
                for batch in batches:
                    for image_id, image in zip(batch.column("image_id").to_pylist(), batch.column("image").to_pylist()):
                        key = (BENCHMARK_OF[config], image_id)
                        if key not in images and image and image.get("bytes") is not None:
                            images[key] = image["bytes"]
            except Exception:  # a damaged shard: its hash check and loading report it
                continue
    return images


def check_fingerprints(folder: Path, manifest: dict[str, Any]) -> list[Finding]:
    """The fingerprint file's schema and rows against the shards' images (module docstring)."""
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
    expected = arrow_schema(families)
    if not table.schema.remove_metadata().equals(expected):
        return [finding(CODE, FINGERPRINT_FILE, None, None, f"schema differs from the build's: {table.schema.names}")]
    rows = table.to_pylist()
    found = []
    seen: set[tuple[str, str]] = set()
    for row in rows:
        key = (row["benchmark"], row["image_id"])
        if key in seen:
            found.append(finding(CODE, FINGERPRINT_FILE, row["image_id"], "image_id", f"{key[0]} image listed twice"))
        seen.add(key)
    images = shard_images(folder, manifest)
    for key in sorted(set(images) - seen):
        found.append(finding(CODE, FINGERPRINT_FILE, key[1], "image_id", f"{key[0]} image of the shards has no row"))
    for key in sorted(seen - set(images)):
        found.append(
            finding(CODE, FINGERPRINT_FILE, key[1], "image_id", f"no {key[0]} image of the shards has this id")
        )
    listed = [row for row in rows if (row["benchmark"], row["image_id"]) in images]

    phash = "phash" in families and imagehash_available()
    if "phash" in families and not phash:
        found.append(
            finding(
                "fingerprints.not_rechecked",
                FINGERPRINT_FILE,
                None,
                "phash",
                f"imagehash is not installed, so the pHashes were not recomputed ({FINGERPRINTS_PIP})",
            )
        )

    def recomputed(row: dict[str, Any]) -> tuple[str, str | None]:
        data = images[(row["benchmark"], row["image_id"])]
        ours = hashes_of_image(canonical_image(data)[0], ("phash",))["phash"] if phash else None
        return hashlib.sha256(data).hexdigest(), ours

    versions = ", ".join(f"{k} {v}" for k, v in sorted((entry.get("libraries") or {}).items()))
    for row, (digest, ours) in zip(listed, in_threads(recomputed, listed)):
        if digest != row["sha256"]:
            found.append(finding(CODE, FINGERPRINT_FILE, row["image_id"], "sha256", "differs from the image's bytes"))
        if phash and ours != row["phash"]:
            found.append(
                finding(
                    CODE,
                    FINGERPRINT_FILE,
                    row["image_id"],
                    "phash",
                    f"{row['phash']}, recomputed {ours} (built with {versions or 'unknown versions'})",
                )
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
            f"{folder}: built by a cogbench without fingerprints; rebuild it with `{build_command(folder)}`"
        )
    return entry, pq.read_table(folder / FINGERPRINT_FILE).to_pylist()
