"""leak-scan's thresholds and transform profiles: the one place they are written, with where they come from.

Provenance: ``calibration.calibrate`` on the 221 images of the public build (216 CODIS, 5 CogBench
samples; ``../shared/data``), 300 generated distractors (seed 0), 8 transform families; each family's
threshold the largest Hamming distance whose rate among all 438,000 negative pairs is at most
``calibration.FAMILY_BUDGET``. ``tests/test_calibration.py`` recomputes it and compares it with these
numbers and with the table in docs/contamination.md.
"""

from __future__ import annotations

# A corpus image is a near duplicate of a benchmark image when any family's distance is at most its threshold.
THRESHOLDS = {"phash": 12, "dhash": 9, "whash": 3, "pdq": 70}

# Mean distance of each family over the calibration's positives, per transform family: a match is said to
# resemble the family whose profile is nearest (distances scaled by each hash's width).
PROFILES = {
    "JPEG quality 30-95": {"phash": 0.3, "dhash": 0.4, "whash": 0.2, "pdq": 3.2},
}
