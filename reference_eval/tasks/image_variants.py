"""Image variants of the invariance probe (``eval --image-variant``): fixed, meaning-preserving Pillow transforms.

Each variant is a function of the image alone, with fixed parameters and no randomness, so one Pillow
version gives the same bytes every time: the sha256 of each variant image is recorded in every variant
prediction and re-derived by ``verify`` from the build's image. Every variant keeps the image's size.
Small shifts and recompression flip answers of frontier models (arXiv 2511.11206; VLM-RobustBench): a
model that reads the image should answer the same under all of them.

Not in the registry, on purpose: a horizontal flip (CODIS's "Location and Orientation" questions and
CogBench's stories read left and right, so a flip changes the right answer), grayscale (colour
questions) and rotations (orientation).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cogbench.errors import UsageError


@dataclass(frozen=True)
class Variant:
    name: str
    definition: str  # what docs/scoring.md and report say it is
    transform: Callable  # RGB PIL image -> RGB PIL image of the same size
    jpeg_quality: int | None = None  # encoded as JPEG at this quality (the transform itself); else as PNG


def _identity(image):
    return image


def _resize50(image):
    from PIL import Image

    width, height = image.size
    half = image.resize((max(1, width // 2), max(1, height // 2)), Image.Resampling.BICUBIC)
    return half.resize((width, height), Image.Resampling.BICUBIC)


def _shift2(image):
    """Content moved 2 pixels right and down; the 2 rows and columns uncovered repeat the edge pixels."""
    from PIL import Image

    width, height = image.size
    if width <= 2 or height <= 2:
        return image.copy()
    out = Image.new("RGB", (width, height))
    out.paste(image.crop((0, 0, width - 2, height - 2)), (2, 2))
    out.paste(image.crop((0, 0, width - 2, 1)).resize((width - 2, 2), Image.Resampling.NEAREST), (2, 0))
    out.paste(out.crop((2, 0, 3, height)).resize((2, height), Image.Resampling.NEAREST), (0, 0))
    return out


def _margins(image, share: float) -> tuple[int, int]:
    width, height = image.size
    return round(width * share / 2), round(height * share / 2)


def _crop5(image):
    """5% of each side's length cut (half from each end), then resized back."""
    from PIL import Image

    width, height = image.size
    mx, my = _margins(image, 0.05)
    return image.crop((mx, my, width - mx, height - my)).resize((width, height), Image.Resampling.BICUBIC)


def _pad5(image):
    """Shrunk by 5% of each side's length and centred on mid-grey (128): the whole scene, with a border."""
    from PIL import Image

    width, height = image.size
    mx, my = _margins(image, 0.05)
    out = Image.new("RGB", (width, height), (128, 128, 128))
    out.paste(image.resize((width - 2 * mx, height - 2 * my), Image.Resampling.BICUBIC), (mx, my))
    return out


GAMMA = 0.8


def _gamma08(image):
    """Each channel value v becomes round(255 (v / 255) ^ 0.8): a slightly brighter image."""
    table = [round(255 * (v / 255) ** GAMMA) for v in range(256)]
    return image.point(table * 3)


def _jitter(image):
    """Colour jitter with fixed factors: brightness x1.1, then contrast x0.9, then saturation x1.1 (ImageEnhance)."""
    from PIL import ImageEnhance

    image = ImageEnhance.Brightness(image).enhance(1.1)
    image = ImageEnhance.Contrast(image).enhance(0.9)
    return ImageEnhance.Color(image).enhance(1.1)


VARIANTS = {
    v.name: v
    for v in (
        Variant("jpeg75", "re-encoded as JPEG at quality 75 (Pillow's default subsampling)", _identity, 75),
        Variant("jpeg30", "re-encoded as JPEG at quality 30", _identity, 30),
        Variant("resize50", "halved in each side (bicubic), then back to its size (bicubic)", _resize50),
        Variant("shift2", "moved 2 pixels right and down, the uncovered edge filled with the edge pixels", _shift2),
        Variant("crop5", "5% of each side's length cut (half at each end), resized back (bicubic)", _crop5),
        Variant("pad5", "shrunk by 5% of each side (bicubic), centred on a mid-grey (128) border", _pad5),
        Variant("gamma08", "gamma 0.8 on every channel: v -> round(255 (v/255)^0.8)", _gamma08),
        Variant("jitter", "brightness x1.1, contrast x0.9, saturation x1.1 (PIL.ImageEnhance, in that order)", _jitter),
    )
}
# Transforms that change what some questions ask about, named so that a request for them says why not.
NOT_MEANING_PRESERVING = {
    "flip": "a horizontal flip swaps left and right (CODIS 'Location and Orientation', CogBench's stories)",
    "hflip": "a horizontal flip swaps left and right (CODIS 'Location and Orientation', CogBench's stories)",
    "grayscale": "grayscale removes colour, which colour questions ask about",
    "rotate": "a rotation changes orientation, which orientation questions ask about",
}
TASKS = ("vqa", "codis")  # one answer per query to compare; a description has none


def parse_variants(text: str) -> tuple[str, ...]:
    """``NAME[,NAME...]`` as given to ``--image-variant``: known names, each once, in the order given."""
    names = [name.strip() for name in text.split(",")]
    for name in names:
        if name in NOT_MEANING_PRESERVING:
            raise UsageError(f"--image-variant {name}: not meaning-preserving ({NOT_MEANING_PRESERVING[name]})")
        if name not in VARIANTS:
            raise UsageError(f"--image-variant {name!r}: not a variant; choose from {', '.join(VARIANTS)}")
    if len(set(names)) != len(names):
        raise UsageError(f"--image-variant {text!r}: a variant named twice")
    return tuple(names)


def pillow_version() -> str:
    import PIL

    return str(PIL.__version__)


def _original_bytes(value: dict) -> bytes:
    return value["bytes"] if value.get("bytes") is not None else Path(value["path"]).read_bytes()


def variant_bytes(name: str, value: dict) -> tuple[bytes, str]:
    """The bytes of variant ``name`` of one undecoded ``datasets.Image`` value, and their MIME type."""
    from PIL import Image

    variant = VARIANTS[name]
    with Image.open(io.BytesIO(_original_bytes(value))) as original:
        image = variant.transform(original.convert("RGB"))
    buffer = io.BytesIO()
    if variant.jpeg_quality is not None:
        image.save(buffer, format="JPEG", quality=variant.jpeg_quality)
        return buffer.getvalue(), "image/jpeg"
    image.save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue(), "image/png"


def variant_sha256(name: str, value: dict) -> str:
    return hashlib.sha256(variant_bytes(name, value)[0]).hexdigest()


def open_variant(name: str, value: dict):
    """Variant ``name`` decoded as the model gets it (the encoded bytes read back), an RGB PIL image."""
    from PIL import Image

    return Image.open(io.BytesIO(variant_bytes(name, value)[0])).convert("RGB")
