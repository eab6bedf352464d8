"""Agreement of two judges on the same predictions: Cohen's kappa, verdict flips, Kendall's tau.

Cohen (1960): kappa = (p_o - p_e) / (1 - p_e), p_o the share of units both judges call the same,
p_e = pA(right) pB(right) + pA(wrong) pB(wrong), the agreement two independent judges with these
rates would reach. Kendall's tau-b (scipy.stats.kendalltau) compares the order of several models'
scores under the two judges. Both intervals resample images (the clusters: an image's units move
together), percentile 95%, with a fixed seed, so the same inputs give the same interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

LEVEL = 0.95


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Kappa of two binary verdict lists over the same units; None when p_e = 1 (one class only)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) == 0:
        return None
    observed = float(np.mean(a == b))
    expected = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    if expected == 1.0:
        return None
    return (observed - expected) / (1 - expected)


def _counts(clusters: Sequence[str], a: Sequence[bool], b: Sequence[bool]) -> tuple[list[str], np.ndarray]:
    """Per image: units with (A, B) = (1,1), (1,0), (0,1), (0,0)."""
    names = sorted(set(clusters))
    index = {name: i for i, name in enumerate(names)}
    table = np.zeros((len(names), 4))
    for cluster, x, y in zip(clusters, a, b):
        table[index[cluster], (0 if x else 2) + (0 if y else 1)] += 1
    return names, table


def _kappa_of_counts(counts: np.ndarray) -> np.ndarray:
    """Kappa per row of summed (n11, n10, n01, n00) counts (NaN where undefined)."""
    n = counts.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (counts[..., 0] + counts[..., 3]) / n
        pa, pb = (counts[..., 0] + counts[..., 1]) / n, (counts[..., 0] + counts[..., 2]) / n
        expected = pa * pb + (1 - pa) * (1 - pb)
        return np.where(expected < 1, (observed - expected) / (1 - expected), np.nan)


def resampled_images(n_images: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, n_images) counts: how often each image is drawn in each resample."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_images, size=(resamples, n_images))
    return np.stack([np.bincount(row, minlength=n_images) for row in draws])


def kappa_interval(
    clusters: Sequence[str], a: Sequence[bool], b: Sequence[bool], resamples: int = 2000, seed: int = 0
) -> list[float] | None:
    """95% percentile interval of kappa, resampling images; None with fewer than 2 images."""
    names, table = _counts(clusters, a, b)
    if len(names) < 2:
        return None
    weights = resampled_images(len(names), resamples, seed)
    kappas = _kappa_of_counts(weights @ table)
    kappas = kappas[~np.isnan(kappas)]
    if len(kappas) == 0:
        return None
    low, high = np.quantile(kappas, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return [round(float(low), 4), round(float(high), 4)]


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b of two score lists over the same models (None with fewer than 2 models)."""
    from scipy import stats

    if len(x) < 2:
        return None
    tau = stats.kendalltau(x, y).statistic
    return None if np.isnan(tau) else float(tau)


def tau_interval(
    hits_a: np.ndarray, hits_b: np.ndarray, totals: np.ndarray, resamples: int = 2000, seed: int = 0
) -> list[float] | None:
    """95% interval of tau between the models' scores under judge A and judge B, resampling images.

    ``hits_a``, ``hits_b``: (models, images) units judged right; ``totals``: (models, images) units.
    """
    from scipy import stats

    if hits_a.shape[0] < 2 or hits_a.shape[1] < 2:
        return None
    weights = resampled_images(hits_a.shape[1], resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        score_a = (weights @ hits_a.T) / (weights @ totals.T)  # (resamples, models)
        score_b = (weights @ hits_b.T) / (weights @ totals.T)
    taus = np.array([stats.kendalltau(x, y).statistic for x, y in zip(score_a, score_b)])
    taus = taus[~np.isnan(taus)]
    if len(taus) == 0:
        return None
    low, high = np.quantile(taus, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return [round(float(low), 4), round(float(high), 4)]
