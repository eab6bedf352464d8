"""leak-scan's thresholds and transform profiles: the one place they are written, with where they come from.

Provenance: ``calibration.calibrate`` on the 221 images of the public build (216 CODIS, 5 CogBench samples;
``../shared/data``), 300 generated distractors (``calibration.distractors(300)``, seed 0) and the 8 transform
families of ``calibration.TRANSFORMS``; each family's threshold is the largest Hamming distance whose rate
among all 455,260 negative pairs is at most ``calibration.FAMILY_BUDGET`` (1e-4). Measured with imagehash
4.3.2, pdqhash 0.2.8, Pillow 13.0.0. ``tests/test_calibration.py`` recomputes them (slow tier) and the table
in docs/contamination.md; its default-tier test checks them on a subset.
"""

from __future__ import annotations

# A corpus image is a near duplicate of a benchmark image when any family's distance is at most its threshold.
THRESHOLDS = {"phash": 15, "dhash": 9, "whash": 3, "pdq": 89}

# The transform families whose recall is >= 0.95 at a false positive rate <= 1e-3 (docs/contamination.md);
# crop <= 10% (recall 0.71) and pad-and-rescale (0.39) are not claimed. Horizontal flip only with PDQ.
CLAIMED = ("JPEG quality 30-95", "resize 0.5-2x", "2-pixel shift", "horizontal flip", "colour", "gamma")

# Mean distance of each family over the calibration's positives, per transform family: a match is said to
# resemble the family whose profile is nearest (distances scaled by each hash's width).
PROFILES = {
    "JPEG quality 30-95": {"phash": 0.3, "dhash": 0.4, "whash": 0.2, "pdq": 3.2},
    "resize 0.5-2x": {"phash": 0.2, "dhash": 0.3, "whash": 0.1, "pdq": 2.9},
    "crop <= 10%": {"phash": 12.3, "dhash": 10.5, "whash": 7.3, "pdq": 80.4},
    "2-pixel shift": {"phash": 3.2, "dhash": 2.7, "whash": 2.0, "pdq": 20.9},
    "pad and rescale": {"phash": 16.6, "dhash": 16.5, "whash": 19.3, "pdq": 96.0},
    "horizontal flip": {"phash": 31.5, "dhash": 28.6, "whash": 23.7, "pdq": 28.1},
    "colour": {"phash": 0.4, "dhash": 0.7, "whash": 0.3, "pdq": 3.1},
    "gamma": {"phash": 1.5, "dhash": 1.0, "whash": 0.8, "pdq": 6.9},
}
