"""Agreement of two judges on the same answers: Cohen's kappa, verdict flips, Kendall's tau of rankings.

A judge swap (``gpt-4-turbo`` retired, an offline judge instead of an LLM) changes
the verdicts, so the scores and perhaps the ranking of models. Two scorings of one
set of answers give, per item, a pair of verdicts (judge A, judge B):

- Cohen's kappa (Cohen 1960): kappa = (p_o - p_e) / (1 - p_e), with p_o the share of
  items both judges gave the same verdict and p_e the share expected by chance from
  each judge's own verdict shares. Undefined (None) when p_e = 1 (both judges gave
  one and the same verdict throughout). Its 95% interval resamples whole images (the
  CoRs or CODIS queries of one image are not independent), as ``intervals`` does for
  the scores: a percentile interval of the clustered bootstrap.
- Flips: the share of items whose verdict differs, and in which direction.
- Kendall's tau-b (``scipy.stats.kendalltau``) between the models' scores under the
  two judges: does the swap reorder the models? Its interval resamples images too,
  with the same image draws for every model (they answered the same items).

The per-image confusion counts make every resample one matrix product. Below
``MIN_IMAGES`` images no interval is given: simulated with known truth
(``tests/benchmarks/kappa_coverage.py``), the percentile interval held the
population kappa in 93-95% of runs at 216 and 251 images (the full releases) but
in 64-83% at 5 images, 89-93% at 30 and 90-94% at 100.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cogbench.reference_eval.metrics import intervals

MIN_IMAGES = 200  # fewer images: no interval for kappa or tau (coverage measured under 95%: 89-94% at 100)


@dataclass(frozen=True)
class VerdictPair:
    """One item judged twice: image (cluster), category, verdict of judge A and of judge B (ints)."""

    cluster: str
    category: str
    a: int
    b: int


@dataclass(frozen=True)
class ConfusionTable:
    """Per image (rows) and column (categories..., "overall"): counts of each (A, B) verdict pair."""

    clusters: list[str]
    columns: list[str]
    labels: list[int]
    counts: np.ndarray  # (C, K+1, L, L)


def confusion_table(
    pairs: Sequence[VerdictPair], categories: Sequence[str], labels: Sequence[int] | None = None
) -> ConfusionTable:
    """The per-image counts; ``labels`` fixes the verdict labels (default: those given, or 0 and 1)."""
    clusters = sorted({p.cluster for p in pairs})
    labels = list(labels) if labels is not None else sorted({p.a for p in pairs} | {p.b for p in pairs}) or [0, 1]
    row = {c: i for i, c in enumerate(clusters)}
    column = {c: i for i, c in enumerate(categories)}
    label = {v: i for i, v in enumerate(labels)}
    counts = np.zeros((len(clusters), len(categories) + 1, len(labels), len(labels)))
    for p in pairs:
        for k in ([column[p.category]] if p.category in column else []) + [len(categories)]:
            counts[row[p.cluster], k, label[p.a], label[p.b]] += 1
    return ConfusionTable(clusters, [*categories, "overall"], labels, counts)


def kappa_from_counts(counts: np.ndarray) -> np.ndarray:
    """Cohen's kappa of confusion matrices (..., L, L); NaN where nothing counts or p_e = 1."""
    n = counts.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.trace(counts, axis1=-2, axis2=-1) / n
        expected = (counts.sum(axis=-1) * counts.sum(axis=-2)).sum(axis=-1) / n**2
        kappa = (observed - expected) / (1.0 - expected)
    return np.where((n > 0) & (expected < 1.0), kappa, np.nan)


def _number(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 4)


def kappa_with_intervals(
    table: ConfusionTable,
    resamples: int = intervals.DEFAULT_RESAMPLES,
    seed: int = intervals.DEFAULT_SEED,
    min_images: int = MIN_IMAGES,
) -> dict[str, dict[str, object]]:
    """Per column: kappa, its 95% image-clustered percentile interval (``MIN_IMAGES`` or more), items, flips."""
    pooled = table.counts.sum(axis=0)  # (K+1, L, L)
    point = kappa_from_counts(pooled)
    weights = intervals.resample_weights(len(table.clusters), resamples, seed)  # (B, C)
    flat = table.counts.reshape(len(table.clusters), -1)
    drawn = (weights @ flat).reshape(resamples, *table.counts.shape[1:])
    bounds = intervals.percentile_interval(kappa_from_counts(drawn))
    present = (table.counts.sum(axis=(-2, -1)) > 0).sum(axis=0)  # images per column
    out: dict[str, dict[str, object]] = {}
    for k, column in enumerate(table.columns):
        matrix = pooled[k]
        items = int(matrix.sum())
        agree = int(np.trace(matrix))
        out[column] = {
            "kappa": _number(point[k]),
            "interval": bounds[k] if present[k] >= min_images else None,
            "items": items,
            "flips": items - agree,
            # unrounded: rounded once, where it is printed (54/94 is 57.4, not 57.45 rounded again to 57.5)
            "flip_share": 100.0 * (items - agree) / items if items else None,
            "a_higher": int(np.tril(matrix, -1).sum()),  # rows are A: A's verdict above B's (A right, B wrong)
            "b_higher": int(np.triu(matrix, 1).sum()),
            "images": int(present[k]),
            # a judge that gave one verdict throughout caps kappa at 0 whatever the other did
            "constant": [
                side
                for side, sums in (("A", matrix.sum(axis=1)), ("B", matrix.sum(axis=0)))
                if items and sums.max() == items
            ],
        }
    return out


def pooled_scores(table: intervals.ClusterTable, weights: np.ndarray | None = None) -> np.ndarray:
    """The overall pooled percent of a metric's table, per resample when ``weights`` (B, C) is given."""
    return table.pooled(weights)[..., -1]


def kendall_tau_with_interval(
    tables_a: Sequence[intervals.ClusterTable],
    tables_b: Sequence[intervals.ClusterTable],
    resamples: int = intervals.DEFAULT_RESAMPLES,
    seed: int = intervals.DEFAULT_SEED,
    min_images: int = MIN_IMAGES,
) -> dict[str, object]:
    """Kendall's tau-b of the models' scores under judge A vs judge B, p-value, 95% image-clustered interval.

    ``tables_a[m]`` and ``tables_b[m]`` are model m's metric table under each judge, all on the same image rows.
    """
    from scipy import stats

    models = len(tables_a)
    scores_a = np.array([pooled_scores(t) for t in tables_a])
    scores_b = np.array([pooled_scores(t) for t in tables_b])
    result = stats.kendalltau(scores_a, scores_b)
    weights = intervals.resample_weights(len(tables_a[0].clusters), resamples, seed)
    drawn_a = np.array([pooled_scores(t, weights) for t in tables_a])  # (M, B)
    drawn_b = np.array([pooled_scores(t, weights) for t in tables_b])
    taus = np.array([stats.kendalltau(drawn_a[:, r], drawn_b[:, r]).statistic for r in range(resamples)])
    return {
        "models": models,
        "tau": _number(float(result.statistic)),
        "p_value": _number(float(result.pvalue)),
        "interval": intervals.percentile_interval(taus[:, None])[0]
        if len(tables_a[0].clusters) >= min_images
        else None,
        "scores_a": [_number(v) for v in scores_a],
        "scores_b": [_number(v) for v in scores_b],
    }
