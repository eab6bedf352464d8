"""Image checks: every referenced image decodes, none is a decompression bomb,
no file is left unreferenced, byte-identical images are reported, and (raw folders) each image is
compared by sha256 with the authors' release: a JPEG with a few bytes changed may still decode."""

from __future__ import annotations

import hashlib
import io
import os
import warnings
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from cogbench.dataset_builders.fetch import RELEASE_OF, pinned_files
from cogbench.dataset_builders.raw import IMAGE_EXTENSIONS, RawSources, relative_name, sha256_file
from cogbench.dataset_builders.read import ImageRef
from cogbench.validation.findings import Finding, finding

# 40 megapixels: far above any benchmark photo (CODIS's largest is about 12 MP),
# far below what exhausts memory when decoded (Pillow's own guard is 89 MP).
MAX_PIXELS = 40_000_000


def decode_problem(data: bytes, max_pixels: int) -> tuple[str, str] | None:
    """(code, message) when the bytes are not a safe, decodable image; else None.

    The size is read from the header before anything is decoded, then
    ``verify()`` checks the file's structure and ``load()`` decodes all of the pixel data
    (verify alone misses truncated pixel data). A JPEG is loaded in Pillow's draft mode at 1/8
    scale: libjpeg still reads and entropy-decodes every byte of the scan, so a truncated or
    garbled file fails as at full scale (the same result on 460 cut and corrupted CODIS photos),
    in less than half the time.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                if width * height > max_pixels:
                    return "image.too_large", f"{width}x{height} = {width * height} pixels, limit {max_pixels}"
                image.verify()
            with Image.open(io.BytesIO(data)) as image:
                if image.format == "JPEG":
                    image.draft(image.mode, (max(1, width // 8), max(1, height // 8)))
                image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        return "image.too_large", str(error)
    except Exception as error:  # Pillow raises many types for corrupt files
        return "image.undecodable", f"{type(error).__name__}: {error}"
    return None


@dataclass
class ImageChecker:
    """Checks images as they stream past, holding at most ``batch`` images' bytes at a time.

    Each distinct image (by sha256) is decoded once, in a small thread pool
    (Pillow decodes without the GIL); workers are capped because each holds
    one decoded image, so memory stays flat however many images there are.
    """

    max_pixels: int = MAX_PIXELS
    workers: int = field(default_factory=lambda: min(os.cpu_count() or 1, 4))
    found: list[Finding] = field(default_factory=list)
    decoded: int = 0
    _first_by_digest: dict[str, ImageRef] = field(default_factory=dict)
    _pending: list[tuple[ImageRef, bytes]] = field(default_factory=list)

    def add(self, ref: ImageRef, data: bytes) -> None:
        digest = hashlib.sha256(data).hexdigest()
        first = self._first_by_digest.get(digest)
        if first is None:
            self._first_by_digest[digest] = ref
            self._pending.append((ref, data))
            if len(self._pending) >= 2 * self.workers:
                self._decode()
        elif first.name != ref.name:
            self.found.append(
                finding(
                    "image.duplicate",
                    ref.file,
                    ref.record,
                    ref.field,
                    f"{ref.name} has the same bytes as {first.name} (record {first.record})",
                )
            )

    def _decode(self) -> None:
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            problems = list(pool.map(lambda item: decode_problem(item[1], self.max_pixels), self._pending))
        for (ref, _), problem in zip(self._pending, problems):
            if problem:
                self.found.append(finding(problem[0], ref.file, ref.record, ref.field, f"{ref.name}: {problem[1]}"))
        self.decoded += len(self._pending)
        self._pending = []

    def finish(self) -> tuple[list[Finding], dict]:
        self._decode()
        return self.found, {"decoded": self.decoded}


def check_images(refs: Iterable[ImageRef], max_pixels: int = MAX_PIXELS) -> tuple[list[Finding], dict]:
    """Read and check each referenced image (files are read one batch at a time)."""
    checker = ImageChecker(max_pixels)
    for ref in refs:
        try:
            data = ref.read()
        except OSError as error:
            checker.found.append(
                finding("image.undecodable", ref.file, ref.record, ref.field, f"cannot read {ref.name}: {error}")
            )
            continue
        checker.add(ref, data)
    return checker.finish()


def check_orphans(folders: list[tuple[str, Path]], refs: list[ImageRef]) -> list[Finding]:
    """Image files in a raw images/ folder that no record names."""
    referenced = {ref.name for ref in refs}
    found = []
    for shown, folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() in IMAGE_EXTENSIONS and path.name not in referenced:
                found.append(
                    finding("image.orphan", f"{shown}/{path.name}", None, None, "no record refers to this image")
                )
    return found


def check_released(sources: RawSources) -> list[Finding]:
    """Images of a raw folder whose sha256 differs from the authors' release pinned in ``raw_files.json``
    (a warning: a folder may hold other data on purpose; ``--strict`` fails it)."""
    pins = pinned_files()
    found = []
    for benchmark, folder in (("cogbench", sources.cogbench), ("codis", sources.codis)):
        if folder is None:
            continue
        pin = pins[RELEASE_OF[benchmark]]
        for name, entry in sorted(pin["files"].items()):
            path = folder / name
            if path.suffix.lower() in IMAGE_EXTENSIONS and path.is_file() and sha256_file(path) != entry["sha256"]:
                found.append(
                    finding(
                        "image.not_released",
                        relative_name(path, sources.root),
                        None,
                        None,
                        f"sha256 differs from the authors' release {pin['repository']}@{pin['commit'][:12]} "
                        "(changed since it was downloaded? `cogbench fetch-raw` gets the released file)",
                    )
                )
    return found
