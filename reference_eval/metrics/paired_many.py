"""The paired permutation test of ``intervals`` for many pairs of runs over the same images at once.

``intervals._paired_permutation_p`` runs ``scipy.stats.permutation_test`` (``permutation_type="samples"``) on one
pair: each permutation swaps some images' A and B results, and the statistic is pooled(A) - pooled(B). Every
pair tested with the same seed over the same n images gets the same swaps: all 2^n of them when
``permutations`` reaches 2^n (the exact test), else the ``rng.permuted`` draws scipy makes from
``default_rng(seed)``. So the swaps are drawn once (``swaps``), and each pair's permuted sums are one matrix
product, ``swaps @ (B - A)``, for all pairs of a chunk together.

The p-values are those ``compare`` reports, to the bit: with whole-number hits and units (every headline
metric: questions, pairs, verdicts and entities counted) the permuted sums are exact integers whatever the
order of summation, so each permuted statistic is the same float scipy computes, and the count, the
adjustment (+1 unless exact), the two-sided doubling, the clipping and the rounding are scipy's and
``intervals``'. Fractional hits (Recognition macro) are tested pair by pair by ``intervals`` itself.
"""

from __future__ import annotations

import numpy as np

from cogbench.reference_eval.metrics.intervals import _paired_permutation_p

CHUNK = 128  # pairs per matrix product: (permutations x CHUNK) floats, about 10 MB at 9,999 permutations
EPS = np.finfo(np.float64).eps * 100  # scipy's relative tolerance for null values equal to the observed one


def swaps(n: int, permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    """((permutations or 2^n, n) of 0/1: which images each permutation swaps, exact): scipy's draws."""
    if permutations >= 2**n:  # scipy: factorial(2) ** n orderings, all enumerated
        codes = np.arange(2**n)
        return ((codes[:, None] >> np.arange(n)) & 1).astype(float), True
    indices = np.tile(np.arange(2), (permutations, n, 1))
    permuted = np.random.default_rng(seed).permuted(indices, axis=-1)
    return (permuted[:, :, 0] == 1).astype(float), False


def _whole(*arrays: np.ndarray) -> bool:
    return all(np.array_equal(a, np.round(a)) and (np.abs(a).sum() < 2**52 if a.size else True) for a in arrays)


def paired_permutation_ps(
    hits_a: np.ndarray, totals_a: np.ndarray, hits_b: np.ndarray, totals_b: np.ndarray, permutations: int, seed: int
) -> list[float]:
    """Per pair (row k of each (P, n) array: runs A and B over the same n >= 2 images), the two-sided p of
    ``intervals._paired_permutation_p`` on that pair."""
    hits_a, totals_a, hits_b, totals_b = (np.asarray(x, float) for x in (hits_a, totals_a, hits_b, totals_b))
    pairs, n = hits_a.shape
    if not _whole(hits_a, totals_a, hits_b, totals_b):
        joined = [
            (np.concatenate([hits_a[k], hits_b[k]]), np.concatenate([totals_a[k], totals_b[k]])) for k in range(pairs)
        ]
        return [_paired_permutation_p(hits, totals, n, permutations, seed) for hits, totals in joined]
    swapped, exact = swaps(n, permutations, seed)
    resamples, adjustment = len(swapped), 0 if exact else 1
    found: list[float] = []
    for start in range(0, pairs, CHUNK):
        ha, ta, hb, tb = (x[start : start + CHUNK] for x in (hits_a, totals_a, hits_b, totals_b))
        sum_ha, sum_ta, sum_hb, sum_tb = (x.sum(axis=1) for x in (ha, ta, hb, tb))
        moved_hits, moved_totals = swapped @ (hb - ha).T, swapped @ (tb - ta).T  # (resamples, pairs): B's moved to A
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = sum_ha / sum_ta - sum_hb / sum_tb
            a_side = (sum_ha + moved_hits) / (sum_ta + moved_totals)
            null = a_side - (sum_hb - moved_hits) / (sum_tb - moved_totals)
        gamma = np.abs(EPS * observed)
        less = (np.count_nonzero(null <= observed + gamma, axis=0) + adjustment) / (resamples + adjustment)
        greater = (np.count_nonzero(null >= observed - gamma, axis=0) + adjustment) / (resamples + adjustment)
        p_values = np.clip(np.minimum(less, greater) * 2, 0.0, 1.0)
        same = np.all(ha == hb, axis=1) & np.all(ta == tb, axis=1)  # every swap leaves the statistic at 0
        found += [1.0 if s else round(float(p), 6) for s, p in zip(same, p_values)]
    return found
