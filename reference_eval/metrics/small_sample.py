"""Confidence intervals that keep their coverage from 5 to 251 images.

A pooled score R = sum(hits) / sum(units) over G images (clusters) is a ratio
estimator; its variance is estimated by linearisation over images (Cochran,
*Sampling Techniques*, 3rd ed., 1977, Section 6.11):
``v(R) = G / (G - 1) * sum_g (y_g - R m_g)^2 / (sum_g m_g)^2``.

A Wald interval on that variance under-covers with few images (about 84% on 5
images) and collapses at 0% and 100%. The interval here is the modified
Clopper-Pearson interval of Korn and Graubard (1998, "Confidence intervals for
proportions with small expected number of positive counts estimated from survey
data", *Survey Methodology* 24(2), 193-201), the ``beta`` method of R's
``survey::svyciprop``: the effective sample size ``n_eff = R (1 - R) / v(R)``
(the unit count ``n`` when v(R) is 0, as at 0% or 100%), shrunk for the G - 1
degrees of freedom of the variance by ``(t_{n-1} / t_{G-1})^2``, then the exact
binomial (Clopper-Pearson) interval at ``R * n_eff`` successes of ``n_eff``.
It has positive width at 0% and 100%, and with one image there is no variance
between images to estimate: the interval is ``None`` ("n/a (1 image)").

The binomial reading needs hits <= units in every image. A Cognition verdict
of 2 (official parsing counts it 2, as the authors' ``cognition_score.py`` sums
it) breaks that: R can reach or pass 1 with a positive variance, and
``R (1 - R)`` is no longer a unit's variance. Such a column gets the t interval
of the linearised ratio itself, ``R +- t_{G-1} sqrt(v(R))`` (floored at 0), the
design-based interval of ``survey::svyratio``.

Differences of two runs on the same images: the paired linearised difference
with a t interval on G - 1 degrees of freedom; the same standard error gives the
minimum detectable difference at 80% power.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

LEVEL = 0.95
POWER = 0.80
METHOD = (
    "Korn-Graubard modified Clopper-Pearson interval, design effect from the images "
    "(ratio linearisation, G-1 degrees of freedom); where hits exceed units (verdicts of 2), "
    "the t interval of the linearised ratio"
)
PAIRED_METHOD = "paired ratio linearisation over images, t interval with G-1 degrees of freedom"


@lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> np.float64:
    """Student's t quantile, ``scipy.stats.t.ppf(q, df)``: the same value, computed once per (q, df) (a board
    asks it for thousands of pairs on the same number of images)."""
    quantile: np.float64 = np.float64(stats.t.ppf(q, df))
    return quantile


def _ratio_and_variance(hits: np.ndarray, totals: np.ndarray) -> tuple[float, float, int]:
    """(R, v(R), G) over the images that count in this column (units > 0)."""
    used = totals > 0
    hits, totals = hits[used], totals[used]
    groups = int(used.sum())
    ratio = float(hits.sum() / totals.sum())
    if groups < 2:
        return ratio, 0.0, groups
    residual = hits - ratio * totals
    variance = groups / (groups - 1) * float((residual**2).sum()) / float(totals.sum()) ** 2
    return ratio, variance, groups


def korn_graubard(hits: np.ndarray, totals: np.ndarray, level: float = LEVEL) -> list[float] | None:
    """[low, high] in percent for one column of per-image hits/units; None with fewer than two images."""
    hits, totals = np.asarray(hits, float), np.asarray(totals, float)
    if totals.sum() <= 0:
        return None
    ratio, variance, groups = _ratio_and_variance(hits, totals)
    if groups < 2:
        return None
    tail = (1.0 - level) / 2.0
    if (hits > totals).any():
        return _ratio_t_interval(ratio, variance, groups, tail)
    # hits <= units everywhere: v(R) is 0 at R = 0 (no hits) and at R = 1 (hits == units), so v(R) > 0 means 0 < R < 1
    units = float(totals.sum())
    n_eff = ratio * (1.0 - ratio) / variance if variance > 0 else units
    n_eff *= (t_quantile(tail, max(units - 1.0, 1.0)) / t_quantile(tail, groups - 1)) ** 2
    successes = ratio * n_eff
    low = 0.0 if successes <= 0 else stats.beta.ppf(tail, successes, n_eff - successes + 1)
    high = 1.0 if successes >= n_eff else stats.beta.ppf(1 - tail, successes + 1, n_eff - successes)
    return [round(100.0 * float(low), 4), round(100.0 * float(high), 4)]


def _ratio_t_interval(ratio: float, variance: float, groups: int, tail: float) -> list[float]:
    """R +- t sqrt(v(R)) on G - 1 degrees of freedom, in percent, for hit counts that are not binomial."""
    half = float(t_quantile(1 - tail, groups - 1)) * variance**0.5
    return [round(100.0 * max(ratio - half, 0.0), 4), round(100.0 * (ratio + half), 4)]


def column_intervals(hits: np.ndarray, totals: np.ndarray, columns: list[str]) -> dict[str, Any]:
    """``{"overall": ..., "per_category": {...}, "clusters": {...}}`` for a (G, K+1) table, "overall" last."""
    values = [korn_graubard(hits[:, k], totals[:, k]) for k in range(len(columns))]
    clusters = [int((totals[:, k] > 0).sum()) for k in range(len(columns))]
    return {
        "overall": values[-1],
        "per_category": dict(zip(columns[:-1], values[:-1])),
        "clusters": {"overall": clusters[-1], "per_category": dict(zip(columns[:-1], clusters[:-1]))},
    }


def paired_difference_t(
    hits_a: ArrayLike, totals_a: ArrayLike, hits_b: ArrayLike, totals_b: ArrayLike, level: float = LEVEL
) -> dict[str, Any]:
    """A - B in points, its t interval over the images, its standard error and the images used."""
    used = (np.asarray(totals_a) > 0) & (np.asarray(totals_b) > 0)
    ha, ta, hb, tb = (np.asarray(x, float)[used] for x in (hits_a, totals_a, hits_b, totals_b))
    groups = int(used.sum())
    if groups == 0:
        return {"difference": None, "interval": None, "se": None, "clusters": 0}
    ra, rb = ha.sum() / ta.sum(), hb.sum() / tb.sum()
    difference = 100.0 * (ra - rb)
    if groups < 2:
        return {"difference": round(difference, 4), "interval": None, "se": None, "clusters": groups}
    residual = (ha - ra * ta) / ta.sum() - (hb - rb * tb) / tb.sum()
    se = 100.0 * float(np.sqrt(groups / (groups - 1) * (residual**2).sum()))
    half = float(t_quantile(1 - (1 - level) / 2, groups - 1)) * se
    return {
        "difference": round(difference, 4),
        "interval": [round(difference - half, 4), round(difference + half, 4)],
        "se": round(se, 4),
        "clusters": groups,
    }


def min_detectable_difference(
    se: float | None, units: float, rates: tuple[float, float], groups: int, level: float = LEVEL, power: float = POWER
) -> float | None:
    """Points below which a true difference is missed more often than 1 - ``power`` (two-sided ``level`` test).

    ``(t_{1-alpha/2} + t_{power}) * SE`` on G - 1 degrees of freedom; where the runs agree on every image
    (SE 0) the binomial SE of two independent rates of ``units`` units stands in, so the line never says 0.
    """
    if groups < 2 or units <= 0:
        return None
    if not se:
        floor = 0.5 / units
        p = [min(max(r, floor), 1 - floor) for r in rates]
        se = 100.0 * float(np.sqrt(sum(x * (1 - x) for x in p) / units))
    factor = t_quantile(1 - (1 - level) / 2, groups - 1) + t_quantile(power, groups - 1)
    return round(float(factor * se), 1)
