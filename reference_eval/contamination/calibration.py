"""The calibration of leak-scan's thresholds: harmless transforms of the benchmark's own images.

Positives: each benchmark image against a transformed copy of itself, one setting of each family per image
(settings taken in turn). Negatives: each image against every other image's copies (story pictures that look
alike are the hard negatives) and against generated distractors. A family's threshold is the largest
distance whose rate among all negatives stays at or below ``FAMILY_BUDGET`` (flagged when any family is
within its threshold, the union stays within four times that, far below the ``FPR_TARGET`` of the issue). The copies are made from the image
reduced to 512 px (a stand-in for the full-size file, 15 times cheaper) and compared with the fingerprints
of the full-size files, as a corpus would be. ``thresholds.py`` holds the numbers this gives.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from cogbench.dataset_builders.fingerprints import CANONICAL_SIDE, FAMILIES, hashes_of_image, in_threads
from cogbench.reference_eval.contamination.search import POPCOUNT, hex_codes

FPR_TARGET = 1e-3  # the bar, per transform family
# Each family's share of false positives when choosing its threshold: far below the bar, since a scan makes a
# pair of every corpus image with every benchmark image (a million images, 221 benchmark images: 2e8 pairs).
FAMILY_BUDGET = 1e-4
RECALL_TARGET = 0.95
PROXY_SIDE = 512


def _jpeg(quality: int) -> Callable:
    def apply(image):
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=quality)
        from PIL import Image

        return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")

    return apply


def _resize(scale: float) -> Callable:
    def apply(image):
        width, height = image.size
        return image.resize((max(1, round(width * scale)), max(1, round(height * scale))))

    return apply


def _crop(fraction: float, corner: bool) -> Callable:
    def apply(image):
        width, height = image.size
        dx, dy = round(width * fraction), round(height * fraction)
        box = (
            (0, 0, width - dx, height - dy)
            if corner
            else (dx // 2, dy // 2, width - dx + dx // 2, height - dy + dy // 2)
        )
        return image.crop(box)

    return apply


def _shift(pixels: int) -> Callable:
    def apply(image):
        from PIL import Image

        moved = Image.new("RGB", image.size, (0, 0, 0))
        moved.paste(image, (pixels, pixels))
        return moved

    return apply


def _pad(colour: tuple[int, int, int]) -> Callable:
    def apply(image):
        from PIL import Image

        side = max(image.size)
        square = Image.new("RGB", (side, side), colour)
        square.paste(image, ((side - image.width) // 2, (side - image.height) // 2))
        return square.resize((224, 224))

    return apply


def _enhance(kind: str, factor: float) -> Callable:
    def apply(image):
        from PIL import ImageEnhance

        return getattr(ImageEnhance, kind)(image).enhance(factor)

    return apply


def _gamma(gamma: float) -> Callable:
    def apply(image):
        table = [round(255 * (value / 255) ** gamma) for value in range(256)] * 3
        return image.point(table)

    return apply


def _mirror(image):
    from PIL import ImageOps

    return ImageOps.mirror(image)


# family -> its settings (label, transform of an RGB image), as the issue lists them.
TRANSFORMS: dict[str, list[tuple[str, Callable]]] = {
    "JPEG quality 30-95": [(f"q{q}", _jpeg(q)) for q in (30, 50, 70, 95)],
    "resize 0.5-2x": [(f"x{s}", _resize(s)) for s in (0.5, 0.75, 1.5, 2.0)],
    "crop <= 10%": [
        ("5% centre", _crop(0.05, False)),
        ("10% centre", _crop(0.10, False)),
        ("10% corner", _crop(0.10, True)),
    ],
    "2-pixel shift": [("2 px", _shift(2))],
    "pad and rescale": [("black bars to 224 px", _pad((0, 0, 0))), ("white bars to 224 px", _pad((255, 255, 255)))],
    "horizontal flip": [("mirror", _mirror)],
    "colour": [
        ("saturation 0.8", _enhance("Color", 0.8)),
        ("saturation 1.2", _enhance("Color", 1.2)),
        ("brightness 0.9", _enhance("Brightness", 0.9)),
        ("contrast 1.1", _enhance("Contrast", 1.1)),
    ],
    "gamma": [("gamma 0.8", _gamma(0.8)), ("gamma 1.25", _gamma(1.25))],
}


def canonical_of(image):
    """What ``fingerprints.canonical_image`` makes of a lossless file of this image (no JPEG draft to apply)."""
    from PIL import Image

    image = image.convert("RGB")
    image.thumbnail((CANONICAL_SIDE, CANONICAL_SIDE), Image.Resampling.BICUBIC, reducing_gap=None)
    return image


def proxy(data: bytes):
    """The 512 px stand-in of an image file, which the copies are made from."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image.draft("RGB", (PROXY_SIDE, PROXY_SIDE))
        image = image.convert("RGB")
    image.thumbnail((PROXY_SIDE, PROXY_SIDE), Image.Resampling.BICUBIC, reducing_gap=None)
    return image


def distractors(count: int, seed: int = 0) -> list:
    """Generated images (no download): gradients, shapes, lines and noise at photo-like sizes."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    made = []
    for _ in range(count):
        width, height = int(rng.integers(128, 320)), int(rng.integers(128, 320))
        ramp = np.linspace(0, 1, width)[None, :, None] * rng.uniform(-120, 120, 3) + rng.uniform(60, 200, 3)
        noise = rng.integers(-20, 21, (height, width, 1), dtype=np.int16)
        image = Image.fromarray(np.clip(ramp + noise, 0, 255).astype(np.uint8), "RGB")
        draw = ImageDraw.Draw(image)
        for _ in range(int(rng.integers(3, 25))):
            x0, y0 = int(rng.integers(0, width)), int(rng.integers(0, height))
            x1, y1 = x0 + int(rng.integers(5, width)), y0 + int(rng.integers(5, height))
            colour = tuple(int(c) for c in rng.integers(0, 256, 3))
            shape = int(rng.integers(0, 3))
            if shape == 0:
                draw.ellipse((x0, y0, x1, y1), fill=colour)
            elif shape == 1:
                draw.rectangle((x0, y0, x1, y1), fill=colour)
            else:
                draw.line((x0, y0, x1, y1), fill=colour, width=int(rng.integers(1, 12)))
        made.append(image)
    return made


def codes_of(image, families: tuple[str, ...], dihedral: bool = False) -> dict[str, np.ndarray]:
    """Each family's code of a canonical image: (variants, bytes) uint8 (PDQ's 8 variants with ``dihedral``)."""
    hashes = hashes_of_image(image, families, dihedral)
    out = {}
    for family in families:
        hexes = hashes["pdq_dihedral"] if family == "pdq" and dihedral else [hashes[family]]
        out[family] = hex_codes(hexes, FAMILIES[family], family)
    return out


def stacked(rows: list[dict[str, np.ndarray]], family: str) -> np.ndarray:
    return np.stack([row[family] for row in rows])  # (n, variants, bytes)


def distance_matrix(queries: np.ndarray, benchmark: np.ndarray) -> np.ndarray:
    """(n, 1, B) query codes against (m, v, B) benchmark codes: (n, m) distances, the closest variant."""
    xor = queries[:, None, :, :] ^ benchmark[None, :, :, :]  # (n, m, v, B): queries have one variant
    return POPCOUNT[xor].sum(axis=-1, dtype=np.int64).min(axis=-1)


@dataclass
class Calibration:
    families: tuple[str, ...]
    images: int
    distractors: int
    thresholds: dict[str, int]
    rows: list[dict] = field(default_factory=list)  # one per transform family
    profiles: dict[str, dict[str, float]] = field(default_factory=dict)  # mean positive distance per family


def calibrate(
    image_bytes: list[bytes],
    fingerprints: list[dict[str, np.ndarray]],
    distractor_images: list,
    families: tuple[str, ...],
    thresholds: dict[str, int] | None = None,
) -> Calibration:
    """Recall and false positives per transform family, at ``thresholds`` or at those chosen here."""
    measured = measure(image_bytes, fingerprints, distractor_images, families)
    return table(measured, thresholds or choose_thresholds(measured))


def measure(
    image_bytes: list[bytes],
    fingerprints: list[dict[str, np.ndarray]],
    distractor_images: list,
    families: tuple[str, ...],
) -> Measured:
    """Every positive and negative distance (module docstring). ``fingerprints``: the benchmark images' codes
    (PDQ's 8 variants), as the build wrote them."""
    proxies = list(in_threads(proxy, image_bytes))
    benchmark = {family: stacked(fingerprints, family) for family in families}
    copies: dict[str, list[dict[str, np.ndarray]]] = {}
    for name, settings in TRANSFORMS.items():
        jobs = [(image, settings[index % len(settings)][1]) for index, image in enumerate(proxies)]
        copies[name] = list(in_threads(lambda job: codes_of(canonical_of(job[1](job[0])), families), jobs))
    decoys = list(in_threads(lambda image: codes_of(canonical_of(image), families), distractor_images))
    n = len(image_bytes)
    positives, negatives = {}, {}
    decoy_distances = {f: distance_matrix(stacked(decoys, f), benchmark[f]).ravel() for f in families}
    for name in TRANSFORMS:
        matrices = {f: distance_matrix(stacked(copies[name], f), benchmark[f]) for f in families}
        positives[name] = {f: np.diagonal(m).copy() for f, m in matrices.items()}
        off = ~np.eye(n, dtype=bool)
        negatives[name] = {f: np.concatenate([m[off], decoy_distances[f]]) for f, m in matrices.items()}
    return Measured(n, len(distractor_images), families, positives, negatives, decoy_distances)


@dataclass
class Measured:
    """The calibration's distances: per transform family and hash family, positives (n) and negatives."""

    images: int
    distractors: int
    families: tuple[str, ...]
    positives: dict[str, dict[str, np.ndarray]]
    negatives: dict[str, dict[str, np.ndarray]]  # that family's cross pairs, then the distractor pairs
    decoys: dict[str, np.ndarray]


def choose_thresholds(measured: Measured, budget: float = FAMILY_BUDGET) -> dict[str, int]:
    """Per hash family, the largest distance whose rate among all negatives (every transform family's cross
    pairs and the distractor pairs, each pair once) is at most ``budget``."""
    n = measured.images
    thresholds = {}
    for f in measured.families:
        pooled = np.concatenate(
            [measured.negatives[name][f][: n * (n - 1)] for name in TRANSFORMS] + [measured.decoys[f]]
        )
        rate = np.bincount(pooled, minlength=FAMILIES[f] + 1).cumsum() / len(pooled)
        thresholds[f] = int(np.flatnonzero(rate <= budget).max(initial=-1))
    return thresholds


def table(measured: Measured, thresholds: dict[str, int]) -> Calibration:
    """Recall and false positives of each transform family at ``thresholds``."""
    families, n = measured.families, measured.images
    positives, negatives = measured.positives, measured.negatives
    result = Calibration(families, n, measured.distractors, dict(thresholds))
    for name, settings in TRANSFORMS.items():
        hit = {f: positives[name][f] <= thresholds[f] for f in families}
        flagged = np.logical_or.reduce([negatives[name][f] <= thresholds[f] for f in families])
        recall = float(np.logical_or.reduce(list(hit.values())).mean())
        fpr = float(flagged.mean())
        result.rows.append(
            {
                "family": name,
                "settings": ", ".join(label for label, _ in settings),
                "positives": n,
                "negatives": int(flagged.size),
                "recall": {f: float(hit[f].mean()) for f in families},
                "recall_any": recall,
                "false_positives": int(flagged.sum()),
                "fpr": fpr,
                "claimed": recall >= RECALL_TARGET and fpr <= FPR_TARGET,
            }
        )
        result.profiles[name] = {f: round(float(positives[name][f].mean()), 1) for f in families}
    return result


def markdown_table(calibration: Calibration) -> str:
    """The table docs/contamination.md shows (``tests/test_calibration.py`` recomputes and compares it)."""
    labels = {"phash": "pHash", "dhash": "dHash", "whash": "wHash", "pdq": "PDQ"}
    families = calibration.families
    header = ["transform family", "settings", *(f"recall {labels[f]}" for f in families)]
    header += ["recall (any)", "false positives", "FPR (any)", "claimed"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in calibration.rows:
        cells = [row["family"], row["settings"], *(f"{row['recall'][f]:.3f}" for f in families)]
        cells += [
            f"{row['recall_any']:.3f}",
            f"{row['false_positives']} of {row['negatives']:,}",
            f"{row['fpr']:.1e}",
            "yes" if row["claimed"] else "**NOT claimed**",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
