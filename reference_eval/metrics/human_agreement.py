"""A judge against people: kappa, Gwet's AC1, PABAK and the constant judges, with image-clustered BCa intervals.

Two judges agreeing says little about validity: two judges share errors, and on a skewed task
(most answers right, or most wrong) Cohen's kappa collapses while a judge that always says
"right" agrees with the majority almost every time. So beside kappa, against adjudicated human
labels (rows: the people's label, columns: the judge's verdict; 1 right, 0 wrong):

- Gwet's AC1 (Gwet 2008, two raters, q = 2 labels): p_e = 2 pi (1 - pi), pi the mean of the two
  raters' shares of "right"; AC1 = (p_o - p_e) / (1 - p_e). It stays high on a skewed task.
- PABAK (Byrt, Bishop and Carlin 1993): 2 p_o - 1, kappa with prevalence and bias set to even.
- The constant judges: AC1 of "always right" and "always wrong" against the same labels. A judge
  must beat the better one (``ac1_margin``), since AC1 rewards the majority label.

Intervals: the bias-corrected and accelerated (BCa) bootstrap, resampling whole images (one
image's CoRs or queries are not independent), the same resamples and formulas as
``scipy.stats.bootstrap(method="BCa")`` on the image indices (tests/test_human_agreement.py
checks they are equal); done here with the per-image counts so that every column and
statistic is one matrix product, which keeps the coverage simulation fast. Measured by that
simulation (known labellers and judges, prevalence 0.1-0.95, tests/test_human_agreement_coverage.py
and docs/reanchoring.md), the BCa interval held the truth in 94-97% of draws from
``MIN_IMAGES`` images with ``MIN_RARER`` units of the rarer label; the percentile interval
held it in 90-94% at 60 images, so none is given below those counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cogbench.reference_eval.metrics import agreement, intervals

LABELS = (0, 1)  # wrong, right: a verdict of 2 (the authors' parsing summing two labels) counts as right
MIN_IMAGES = 80  # fewer images: no interval (BCa coverage measured 93.4-94.4% at 40-60 images)
MIN_RARER = 10  # fewer units of the rarer label: no interval (kappa's coverage 92.9% with 6 expected)
METHOD = "BCa bootstrap, clustered by image"
STATISTICS = (
    "kappa",
    "ac1",
    "pabak",
    "raw_agreement",
    "prevalence_human",
    "prevalence_judge",
    "always_right_ac1",
    "always_wrong_ac1",
    "ac1_margin",
)


def binary(verdict: int) -> int:
    """A verdict as right (1) or wrong (0): 2, where the authors' parsing summed two labels, is right."""
    return 1 if verdict >= 1 else 0


def _ac1(observed: np.ndarray, pi: np.ndarray) -> np.ndarray:
    expected = 2.0 * pi * (1.0 - pi)  # at most 0.5: never 1 with two labels
    return (observed - expected) / (1.0 - expected)


def ac1_from_counts(counts: np.ndarray) -> np.ndarray:
    """Gwet's AC1 of 2x2 matrices (..., 2, 2); NaN where nothing counts."""
    return statistics_from_counts(counts)[..., STATISTICS.index("ac1")]


def statistics_from_counts(counts: np.ndarray) -> np.ndarray:
    """Every statistic of ``STATISTICS`` (last axis) for matrices (..., 2, 2); shares as fractions, NaN where
    nothing counts. Worked on the four cells (rows: people wrong, right; columns: the judge's), which keeps the
    coverage simulation's millions of tables fast; kappa equals ``agreement.kappa_from_counts``'s."""
    both_wrong, judge_only, people_only, both_right = (counts[..., i, j] for i in (0, 1) for j in (0, 1))
    n = both_wrong + judge_only + people_only + both_right
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (both_wrong + both_right) / n
        human = (people_only + both_right) / n
        judge = (judge_only + both_right) / n
        chance = human * judge + (1.0 - human) * (1.0 - judge)
        kappa = np.where(chance < 1.0, (observed - chance) / (1.0 - chance), np.nan)  # p_e = 1: undefined
        ac1 = _ac1(observed, (human + judge) / 2.0)
        right = _ac1(human, (human + 1.0) / 2.0)  # a judge saying right throughout agrees on the people's rights
        wrong = _ac1(1.0 - human, human / 2.0)
    values = [kappa, ac1, 2.0 * observed - 1.0, observed, human, judge, right, wrong, ac1 - np.fmax(right, wrong)]
    return np.stack(values, axis=-1)


def bca_interval(
    resampled: np.ndarray, point: np.ndarray, jackknife: np.ndarray, level: float = intervals.LEVEL
) -> np.ndarray:
    """BCa bounds (..., 2) from resamples (B, ...), the estimate (...) and leave-one-image-out values (C, ...).

    As ``scipy.stats.bootstrap``'s BCa (Efron and Tibshirani 1993, 14.3 and Eq. 15.36): z0 from the share of
    resamples below the estimate (ties half), the acceleration from the jackknife; NaN resamples are left out.
    """
    from scipy.special import ndtr, ndtri

    valid = ~np.isnan(resampled)
    count = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        below = ((resampled < point) & valid).sum(axis=0) + ((resampled <= point) & valid).sum(axis=0)
        z0 = ndtri(below / (2.0 * count))
        n = jackknife.shape[0]
        u = (n - 1) * (np.mean(jackknife, axis=0) - jackknife)
        acceleration = (np.sum(u**3, axis=0) / n**3) / 6.0 / (np.sum(u**2, axis=0) / n**2) ** 1.5
        acceleration = np.where(np.isfinite(acceleration), acceleration, 0.0)  # every jackknife value equal
        z = ndtri((1.0 - level) / 2.0)
        shares = [ndtr(z0 + (z0 + side) / (1.0 - acceleration * (z0 + side))) for side in (z, -z)]
    ordered = np.sort(resampled, axis=0)  # NaN last: the first ``count`` of each column are its resamples
    bounds = [_percentile(ordered, count, share) for share in shares]
    return np.stack(bounds, axis=-1)


def _percentile(ordered: np.ndarray, count: np.ndarray, share: np.ndarray) -> np.ndarray:
    """``np.percentile(column, 100 * share)`` (linear) of every column's first ``count`` sorted values at once."""
    usable = (count > 0) & np.isfinite(share)
    position = np.where(usable, share, 0.0) * np.maximum(count - 1, 0)
    low = np.floor(position).astype(int)
    high = np.minimum(low + 1, np.maximum(count - 1, 0))
    below = np.take_along_axis(ordered, low[None], axis=0)[0]
    above = np.take_along_axis(ordered, high[None], axis=0)[0]
    fraction = position - low
    value = np.where(fraction >= 0.5, above - (above - below) * (1 - fraction), below + (above - below) * fraction)
    return np.where(usable, value, np.nan)


def table(pairs: Sequence[agreement.VerdictPair], categories: Sequence[str]) -> agreement.ConfusionTable:
    """Per image and column the 2x2 counts (rows: the people's label ``a``, columns: the judge's ``b``)."""
    flat = [agreement.VerdictPair(p.cluster, p.category, binary(p.a), binary(p.b)) for p in pairs]
    return agreement.confusion_table(flat, categories, labels=LABELS)


def intervals_of(
    counts: np.ndarray, resamples: int, seed: int, level: float = intervals.LEVEL
) -> tuple[np.ndarray, np.ndarray]:
    """Per-image counts (C, ..., 2, 2): the statistics of the pooled counts (..., S) and their BCa bounds (..., S, 2)."""
    clusters = counts.shape[0]
    total = counts.sum(axis=0)
    point = statistics_from_counts(total)
    weights = intervals.resample_weights(clusters, resamples, seed)  # (B, C): scipy's resamples of the images
    drawn = (weights @ counts.reshape(clusters, -1)).reshape(resamples, *counts.shape[1:])
    left_out = total[None] - counts  # (C, ..., 2, 2): each image left out once
    bounds = bca_interval(statistics_from_counts(drawn), point, statistics_from_counts(left_out), level)
    return point, bounds


def _rounded(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 4) + 0.0  # + 0.0: no -0.0 (shown "-0.000")


def agreement_columns(
    confusion: agreement.ConfusionTable,
    resamples: int = intervals.DEFAULT_RESAMPLES,
    seed: int = intervals.DEFAULT_SEED,
    min_images: int = MIN_IMAGES,
    min_rarer: int = MIN_RARER,
) -> dict[str, dict[str, object]]:
    """Per column (categories..., overall): units, images, every statistic and its 95% interval, the confusion."""
    point, bounds = intervals_of(confusion.counts, resamples, seed)
    pooled = confusion.counts.sum(axis=0)
    images = (confusion.counts.sum(axis=(-2, -1)) > 0).sum(axis=0)
    out: dict[str, dict[str, object]] = {}
    for k, column in enumerate(confusion.columns):
        matrix = pooled[k]
        rarer = int(matrix.sum(axis=1).min())
        reason = (
            f"fewer than {min_images} images ({int(images[k])})"
            if images[k] < min_images
            else f"fewer than {min_rarer} units of the rarer label ({rarer})"
            if rarer < min_rarer
            else ""
        )
        row: dict[str, object] = {"units": int(matrix.sum()), "images": int(images[k])}
        for s, name in enumerate(STATISTICS):
            row[name] = _rounded(point[k, s])
            low, high = bounds[k, s]
            usable = not reason and not np.isnan(low) and not np.isnan(high)
            row[f"{name}_interval"] = [round(float(low), 4) + 0.0, round(float(high), 4) + 0.0] if usable else None
        row["no_interval"] = reason  # why no interval is given ("" when one is)
        row["confusion"] = matrix.astype(int).tolist()  # rows: people's label 0, 1; columns: the judge's
        out[column] = row
    return out
