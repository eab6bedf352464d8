"""Image checks: every referenced image decodes, none is a decompression bomb,
no file is left unreferenced, byte-identical images are reported."""

from __future__ import annotations

import hashlib
import io
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image

from cogbench.dataset_builders.raw import IMAGE_EXTENSIONS
from cogbench.validation.contents import ImageRef
from cogbench.validation.findings import Finding, finding

# 40 megapixels: far above any benchmark photo (CODIS's largest is about 12 MP),
# far below what exhausts memory when decoded (Pillow's own guard is 89 MP).
MAX_PIXELS = 40_000_000


def decode_problem(data: bytes, max_pixels: int) -> tuple[str, str] | None:
    """(code, message) when the bytes are not a safe, decodable image; else None.

    The size is read from the header before anything is decoded, then
    ``verify()`` checks the file's structure and ``load()`` decodes every pixel
    (verify alone misses truncated pixel data).
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
                image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        return "image.too_large", str(error)
    except Exception as error:  # Pillow raises many types for corrupt files
        return "image.undecodable", f"{type(error).__name__}: {error}"
    return None


def check_images(refs: list[ImageRef], max_pixels: int = MAX_PIXELS) -> tuple[list[Finding], dict]:
    """Decode each distinct image once (threads: Pillow decodes without the GIL)."""
    found: list[Finding] = []
    first_by_digest: dict[str, ImageRef] = {}
    to_decode: list[tuple[ImageRef, bytes]] = []
    for ref in refs:
        try:
            data = ref.read()
        except OSError as error:
            found.append(finding("image.undecodable", ref.file, ref.record, ref.field, f"cannot read {ref.name}: {error}"))
            continue
        digest = hashlib.sha256(data).hexdigest()
        first = first_by_digest.get(digest)
        if first is None:
            first_by_digest[digest] = ref
            to_decode.append((ref, data))
        elif first.name != ref.name:
            found.append(finding("image.duplicate", ref.file, ref.record, ref.field, f"{ref.name} has the same bytes as {first.name} (record {first.record})"))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        problems = list(pool.map(lambda item: decode_problem(item[1], max_pixels), to_decode))
    for (ref, _), problem in zip(to_decode, problems):
        if problem:
            found.append(finding(problem[0], ref.file, ref.record, ref.field, f"{ref.name}: {problem[1]}"))
    return found, {"decoded": len(to_decode)}


def check_orphans(folders: list[tuple[str, Path]], refs: list[ImageRef]) -> list[Finding]:
    """Image files in a raw images/ folder that no record names."""
    referenced = {ref.name for ref in refs}
    found = []
    for shown, folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() in IMAGE_EXTENSIONS and path.name not in referenced:
                found.append(finding("image.orphan", f"{shown}/{path.name}", None, None, "no record refers to this image"))
    return found
