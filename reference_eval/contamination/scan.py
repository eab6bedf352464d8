"""``leak-scan``: every corpus image against the benchmark's fingerprints, streamed in batches.

Each batch of corpus images is hashed (the build's canonical form and hash families, ``fingerprints.py``)
or read as hashes already computed, searched family by family (``search.py``), and only the pairs within a
threshold are kept: per benchmark image its ``KEEP_PER_IMAGE`` closest, each with every family's distance,
the transform it most resembles, and a small copy of the corpus image for the page. Memory stays that of
one batch, whatever the corpus' size.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cogbench.dataset_builders.fingerprints import (
    DIHEDRAL,
    FAMILIES,
    FINGERPRINT_FILE,
    FINGERPRINTS_PIP,
    families_here,
    fingerprint_bytes,
    in_threads,
)
from cogbench.errors import UsageError
from cogbench.reference_eval.contamination.corpus import Source, classify, hash_batches, hash_families, items
from cogbench.reference_eval.contamination.search import LEAK_SCAN_EXTRA, closest_variant, family_index, hex_codes
from cogbench.reference_eval.contamination.thresholds import PROFILES, THRESHOLDS
from cogbench.validation.fingerprint_checks import verified_fingerprints

KEEP_PER_IMAGE = 20  # matches kept (and shown) per benchmark image, the closest; all are counted
BATCH = 512  # corpus images hashed and searched at a time
THUMB_SIDE = 160  # the corpus image as the page shows it (a JPEG data URI)


@dataclass
class Match:
    corpus: str  # path in the folder, shard:member, file:key or file:row N
    distances: dict[str, int]
    resembles: str
    exact: bool  # the same bytes (sha256), when the corpus has them
    thumb: str | None = None  # JPEG bytes as base64, for the page

    def score(self) -> float:
        return sum(d / FAMILIES[f] for f, d in self.distances.items())


@dataclass
class ImageResult:
    benchmark: str
    image_id: str
    image_file: str
    found: int = 0
    matches: list[Match] = field(default_factory=list)


@dataclass
class ScanResult:
    dataset: str
    corpus: list[dict[str, str]]
    families: list[str]
    thresholds: dict[str, int]
    scanned: int = 0
    unreadable: int = 0
    unreadable_examples: list[str] = field(default_factory=list)
    seconds: float = 0.0
    images: list[ImageResult] = field(default_factory=list)

    @property
    def flagged(self) -> list[ImageResult]:
        return [image for image in self.images if image.found]


def resembles(distances: dict[str, int], variant: int | None, exact: bool) -> str:
    """The transform class a match most resembles: exact bytes, a PDQ dihedral variant, else the nearest
    calibration profile (``thresholds.PROFILES``), distances scaled by each hash's width."""
    if exact:
        return "identical bytes"
    if variant:
        return DIHEDRAL[variant]
    if not any(distances.values()):
        return "same pixels (re-encoded or identical)"

    def gap(profile: dict[str, float]) -> float:
        return sum(((distances[f] - profile[f]) / FAMILIES[f]) ** 2 for f in distances if f in profile)

    return min(PROFILES, key=lambda name: gap(PROFILES[name]))


def thumbnail(data: bytes) -> str | None:
    import base64

    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.draft("RGB", (THUMB_SIDE, THUMB_SIDE))
            small = image.convert("RGB")
        small.thumbnail((THUMB_SIDE, THUMB_SIDE))
        buffer = io.BytesIO()
        small.save(buffer, format="JPEG", quality=80)
    except Exception:
        return None
    return base64.b64encode(buffer.getvalue()).decode("ascii")


class Scanner:
    """The benchmark's indexes and what the scan has kept so far."""

    def __init__(self, dataset: str, rows: list[dict[str, Any]], families: tuple[str, ...], thresholds: dict[str, int]):
        self.families = families
        self.thresholds = {f: thresholds[f] for f in families}
        self.codes = {}
        for family in families:
            hexes = [h for row in rows for h in (row["pdq_dihedral"] if family == "pdq" else [row[family]])]
            variants = len(DIHEDRAL) if family == "pdq" else 1
            self.codes[family] = hex_codes(hexes, FAMILIES[family], family).reshape(len(rows), variants, -1)
        self.indexes = {f: family_index(f, self.codes[f], self.codes[f].shape[1], self.thresholds[f]) for f in families}
        self.digests = {row["sha256"]: index for index, row in enumerate(rows)}
        self.result = ScanResult(dataset, [], list(families), dict(self.thresholds))
        self.result.images = [ImageResult(r["benchmark"], r["image_id"], r["image_file"]) for r in rows]

    def search(self, keys: list[str], codes: dict[str, np.ndarray], digests: list | None, data: list | None) -> None:
        """One batch: ``codes`` per family (n, bytes); ``digests`` and ``data`` (image bytes) when there are images."""
        families = [f for f in self.families if f in codes]
        pairs: set[tuple[int, int]] = set()
        for family in families:
            rows, images, _ = self.indexes[family].pairs(codes[family])
            pairs.update(zip(rows.tolist(), images.tolist()))
        if digests is not None:
            pairs.update((row, self.digests[d]) for row, d in enumerate(digests) if d in self.digests)
        for row, image in sorted(pairs):
            found, variant = {}, None
            for family in families:
                best, found[family] = closest_variant(codes[family][row], self.codes[family][image])
                if family == "pdq":
                    variant = best
            exact = digests is not None and self.digests.get(digests[row]) == image
            match = Match(str(keys[row]), found, resembles(found, variant, exact), exact)
            self.keep(self.result.images[image], match, data[row] if data is not None else None)

    def keep(self, image: ImageResult, match: Match, data: bytes | None) -> None:
        image.found += 1
        if len(image.matches) >= KEEP_PER_IMAGE:
            worst = max(image.matches, key=Match.score)
            if match.score() >= worst.score():
                return
            image.matches.remove(worst)
        match.thumb = thumbnail(data) if data is not None else None
        image.matches.append(match)
        image.matches.sort(key=Match.score)


def batches(stream: Iterable, size: int) -> Iterator[list]:
    batch = []
    for item in stream:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def scan_images(scanner: Scanner, source: Source) -> None:
    def hashed(item: tuple[str, bytes]) -> dict[str, Any] | None:
        try:
            return fingerprint_bytes(item[1], scanner.families, dihedral=False)
        except Exception:  # an undecodable file in someone's corpus: counted and named, never fatal
            return None

    for batch in batches(items(source), BATCH):
        rows = list(in_threads(hashed, batch))
        good = [(item, row) for item, row in zip(batch, rows) if row is not None]
        for (key, _), row in zip(batch, rows):
            if row is None:
                scanner.result.unreadable += 1
                if len(scanner.result.unreadable_examples) < 5:
                    scanner.result.unreadable_examples.append(key)
        scanner.result.scanned += len(good)
        if not good:
            continue
        codes = {f: hex_codes([row[f] for _, row in good], FAMILIES[f], f) for f in scanner.families}
        scanner.search(
            [key for (key, _), _ in good], codes, [row["sha256"] for _, row in good], [data for (_, data), _ in good]
        )


def scan_hashes(scanner: Scanner, source: Source) -> None:
    families = tuple(f for f in scanner.families if f in hash_families(source))
    if not families:
        raise UsageError(f"{source.path}: no hash column the benchmark has ({', '.join(scanner.families)})")
    for batch in hash_batches(source, families):
        codes = {f: hex_codes(batch["families"][f], FAMILIES[f], f"{source.path}: column {f}") for f in families}
        scanner.result.scanned += len(batch["keys"])
        scanner.search([f"{source.path.name}:{key}" for key in batch["keys"]], codes, None, None)


def leak_scan(
    corpus: list[str | Path],
    dataset: str | Path,
    image_column: str | None = None,
    thresholds: dict[str, int] = THRESHOLDS,
) -> ScanResult:
    """Scan every CORPUS path for near duplicates of the build's images (module docstring)."""
    started = time.perf_counter()
    sources = [classify(Path(path), image_column) for path in corpus]  # every argument checked before any work
    entry, rows = verified_fingerprints(dataset)
    families = tuple(entry["families"])
    if not families:
        raise UsageError(
            f"{dataset}: its {FINGERPRINT_FILE} holds no perceptual hash (built without the `fingerprints` extra); "
            f"{FINGERPRINTS_PIP}, then rebuild it"
        )
    if any(s.kind != "parquet-hashes" for s in sources):  # the corpus' images are hashed here, with what is here
        families = tuple(f for f in families if f in families_here())
        if not families:
            raise UsageError(
                f"hashing the corpus' images needs imagehash: pip install 'cogbench-codis[{LEAK_SCAN_EXTRA}]'"
            )
    scanner = Scanner(str(dataset), rows, families, thresholds)
    for source in sources:
        scanner.result.corpus.append({"path": str(source.path), "kind": source.kind})
        (scan_hashes if source.kind == "parquet-hashes" else scan_images)(scanner, source)
    scanner.result.seconds = round(time.perf_counter() - started, 2)
    return scanner.result
