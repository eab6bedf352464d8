"""Confidence intervals and paired tests for the pooled scores, resampling images.

The papers' scores are pooled ratios: the hits over all counted units (questions,
CoRs, CODIS pairs or queries, annotated entities), overall and per category. The
units of one image are not independent (one image carries several questions and
CoRs; CODIS has 353 pairs over 216 images), so the bootstrap resamples whole
images (clusters) with replacement and recomputes the pooled ratio on each
resample: a percentile interval of the clustered, non-parametric bootstrap.
Each resample is the count of draws of every image, so all resamples of all
columns (categories and overall) are one matrix product.

For two runs on the same items, the paired difference is bootstrapped with the
same image counts for both runs, and its p-value comes from a paired
permutation test (``scipy.stats.permutation_test``): under the null hypothesis
the two runs' results on an image are exchangeable, so each image's pair is
swapped at random.

Everything here works on "units": ``Unit(cluster, category, hits, total)``;
``units_from_details`` makes them from the per-item lines of details.jsonl.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cogbench.option_types import DEFAULT_PERMUTATIONS, DEFAULT_RESAMPLES, DEFAULT_SEED
from cogbench.reference_eval.metrics import invariance, small_sample

LEVEL = 0.95
METHOD = "percentile bootstrap, clustered by image"


@dataclass(frozen=True)
class Unit:
    """One counted thing of a pooled score: ``hits`` out of ``total`` on image ``cluster``."""

    cluster: str
    category: str | None
    hits: float
    total: float = 1.0


@dataclass(frozen=True)
class ClusterTable:
    """Per image (rows) and per column (each category, then "overall"): summed hits and totals."""

    clusters: list[str]
    columns: list[str]  # categories..., "overall"
    hits: np.ndarray  # (C, K+1)
    totals: np.ndarray  # (C, K+1)

    def pooled(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Pooled percent per column; with ``weights`` (B, C) one row per resample. NaN where nothing counts."""
        hits = self.hits.sum(axis=0) if weights is None else weights @ self.hits
        totals = self.totals.sum(axis=0) if weights is None else weights @ self.totals
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(totals > 0, 100.0 * hits / np.where(totals > 0, totals, 1.0), np.nan)


def cluster_table(
    units: Iterable[Unit], categories: Sequence[str], clusters: Sequence[str] | None = None
) -> ClusterTable:
    """Sum the units per image and column; ``clusters`` fixes the row order (and may add empty images)."""
    units = list(units)
    names = list(clusters) if clusters is not None else sorted({u.cluster for u in units})
    row = {name: i for i, name in enumerate(names)}
    column = {name: i for i, name in enumerate(categories)}
    hits = np.zeros((len(names), len(categories) + 1))
    totals = np.zeros_like(hits)
    for unit in units:
        r = row[unit.cluster]
        for c in ([column[unit.category]] if unit.category in column else []) + [len(categories)]:
            hits[r, c] += unit.hits
            totals[r, c] += unit.total
    return ClusterTable(names, [*categories, "overall"], hits, totals)


def resample_weights(n_clusters: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, n_clusters) counts: how often each image is drawn when drawing n_clusters with replacement.

    Row b counts the draws ``default_rng(seed).integers(0, n, (resamples, n))[b]``: the same resamples as
    drawing indices one resample at a time, or as ``scipy.stats.bootstrap`` with that generator.
    """
    draws = np.random.default_rng(seed).integers(0, n_clusters, (resamples, n_clusters))
    offsets = (np.arange(resamples) * n_clusters)[:, None]
    counts = np.bincount((draws + offsets).ravel(), minlength=resamples * n_clusters)
    return counts.reshape(resamples, n_clusters).astype(float)


def percentile_interval(samples: np.ndarray, level: float = LEVEL) -> list[list[float] | None]:
    """Per column of (B, K) samples: [low, high] percentiles, ignoring resamples where the column is empty."""
    tail = 100.0 * (1.0 - level) / 2.0
    out: list[list[float] | None] = []
    for column in samples.T:
        column = column[~np.isnan(column)]
        if column.size == 0:
            out.append(None)
        else:
            low, high = np.percentile(column, [tail, 100.0 - tail])
            out.append([round(float(low), 4), round(float(high), 4)])
    return out


def bootstrap_intervals(
    table: ClusterTable, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """``{"overall": [lo, hi], "per_category": {name: [lo, hi]}}`` for one metric (None where nothing counts)."""
    if not table.clusters:
        return {"overall": None, "per_category": dict.fromkeys(table.columns[:-1])}
    samples = table.pooled(resample_weights(len(table.clusters), resamples, seed))
    intervals = percentile_interval(samples)
    point = table.pooled()
    intervals = [None if np.isnan(p) else ci for p, ci in zip(point, intervals)]
    return {"overall": intervals[-1], "per_category": dict(zip(table.columns[:-1], intervals[:-1]))}


def paired_difference(
    table_a: ClusterTable,
    table_b: ClusterTable,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    permutations: int = DEFAULT_PERMUTATIONS,
) -> list[dict[str, Any]]:
    """Per column: A - B, its clustered paired-bootstrap interval and a paired permutation p-value."""
    if table_a.clusters != table_b.clusters or table_a.columns != table_b.columns:
        raise ValueError("paired tables must have the same images and columns in the same order")
    n = len(table_a.clusters)
    weights = resample_weights(n, resamples, seed)
    differences = table_a.pooled(weights) - table_b.pooled(weights)
    intervals = percentile_interval(differences)
    point = table_a.pooled() - table_b.pooled()
    rows = []
    for k, name in enumerate(table_a.columns):
        hits = np.concatenate([table_a.hits[:, k], table_b.hits[:, k]])
        totals = np.concatenate([table_a.totals[:, k], table_b.totals[:, k]])
        p_value = None
        if not np.isnan(point[k]) and n >= 2:  # one image: nothing to permute
            p_value = _paired_permutation_p(hits, totals, n, permutations, seed)
        rows.append(
            {
                "column": name,
                "a": number(table_a.pooled()[k]),
                "b": number(table_b.pooled()[k]),
                "difference": number(point[k]),
                "interval": None if np.isnan(point[k]) else intervals[k],
                "p_value": p_value,
            }
        )
    return rows


def _paired_permutation_p(hits: np.ndarray, totals: np.ndarray, n: int, permutations: int, seed: int) -> float:
    """Two-sided p of pooled(A) - pooled(B), swapping each image's A and B results at random."""
    from scipy import stats

    def statistic(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            difference: np.ndarray = hits[x].sum(axis) / totals[x].sum(axis) - hits[y].sum(axis) / totals[y].sum(axis)
            return difference

    if np.array_equal(hits[:n], hits[n:]) and np.array_equal(totals[:n], totals[n:]):
        return 1.0  # every swap leaves the statistic at 0
    result = stats.permutation_test(
        (np.arange(n), np.arange(n, 2 * n)),
        statistic,
        permutation_type="samples",
        vectorized=True,
        n_resamples=permutations,
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
    )
    return round(float(result.pvalue), 6)


def number(value: float) -> float | None:
    """A pooled value or difference as compare's rows hold it: 4 decimals, None where nothing counts (NaN)."""
    return None if np.isnan(value) else round(float(value), 4)


# --- units from details.jsonl ----------------------------------------------


def units_from_details(task: str, details: Sequence[dict[str, Any]]) -> dict[str, list[Unit]]:
    """Per metric, the units its pooled score counts, from ``cogbench score``'s details lines.

    Each line must carry ``image_id`` (the cluster); the description task's item id is the image id.
    """
    units: dict[str, list[Unit]]
    if task == "vqa":
        units = {
            "accuracy": [Unit(d["image_id"], d["category"], float(d["correct"])) for d in details],
            "accuracy_official": [Unit(d["image_id"], d["category"], float(d["correct_official"])) for d in details],
        }
        if details and "rotations" in details[0]:  # circular run (metrics.circular)
            units["accuracy_circular"] = [Unit(d["image_id"], d["category"], float(d["correct_all"])) for d in details]
            units["answer_changed"] = [Unit(d["image_id"], d["category"], float(d["answer_changed"])) for d in details]
            for letter in "ABCD":
                units[f"choice_{letter}"] = [
                    Unit(d["image_id"], d["category"], float(x["extracted"] == letter))
                    for d in details
                    for x in d["rotations"]
                ]
        return units | variant_units(task, details)
    if task == "codis":
        units = {"acc_p": [], "acc_q": [], "context_awareness": []}
        for d in details:
            rights = [q["right"] for q in d["queries"]]
            units["acc_q"] += [Unit(d["image_id"], d["category"], float(r)) for r in rights if r is not None]
            if all(r is not None for r in rights):
                units["acc_p"].append(Unit(d["image_id"], d["category"], float(all(rights))))
            units["context_awareness"].append(Unit(d["image_id"], d["category"], float(d["outputs_differ"])))
        # Output variability (``score --no-context-predictions``): one unit per query compared with and
        # without its context; the LLM's reading counts the queries it judged.
        for name, key in (
            ("output_variability", "changed_without_context"),
            ("output_variability_llm", "changed_without_context_llm"),
        ):
            changed = [(d, q[key]) for d in details for q in d["queries"] if q.get(key) is not None]
            if changed:
                units[name] = [Unit(d["image_id"], d["category"], float(x)) for d, x in changed]
        return units | variant_units(task, details)
    units = {"recognition_micro": [], "recognition_macro": []}
    for d in details:
        image = d["item_id"]
        annotated, recognized = d["recognition"]["annotated"], d["recognition"]["recognized"]
        units["recognition_micro"].append(Unit(image, None, float(recognized), float(annotated)))
        if annotated:
            units["recognition_macro"].append(Unit(image, None, recognized / annotated))
        if "cognition" in d:
            units.setdefault("cognition", []).extend(
                Unit(image, c["category"], float(c["verdict"])) for c in d["cognition"] if c["verdict"] is not None
            )
        for kind in OFFLINE_KINDS:  # offline judges: the Cognition Score alone, or beside the LLM judge's
            if f"cognition_{kind}" in d:
                name = "cognition_offline" if "cognition" in d else "cognition"
                units.setdefault(name, []).extend(
                    Unit(image, c["category"], float(c["verdict"])) for c in d[f"cognition_{kind}"]
                )
    return units


OFFLINE_KINDS = ("rouge", "bertscore", "nli")


def variant_units(task: str, details: Sequence[dict[str, Any]]) -> dict[str, list[Unit]]:
    """The invariance probe's units (``metrics.invariance``; none without image variants)."""
    return {name: [Unit(*unit) for unit in found] for name, found in invariance.units(task, details).items()}


def metric_tables(
    task: str, details: Sequence[dict[str, Any]], categories: Sequence[str], clusters: Sequence[str] | None = None
) -> dict[str, ClusterTable]:
    """One ``ClusterTable`` per metric; every metric uses the same image rows."""
    units = units_from_details(task, details)
    if clusters is None:
        clusters = sorted({d.get("image_id", d["item_id"]) for d in details})
    return {
        # Recognition Scores are pooled over all images, with no categories (CogBench Table 2).
        name: cluster_table(metric_units, [] if name.startswith("recognition") else categories, clusters)
        for name, metric_units in units.items()
    }


def score_intervals(
    task: str,
    details: Sequence[dict[str, Any]],
    categories: Sequence[str],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(interval per metric, the settings to record beside them) for one scored run."""
    tables = metric_tables(task, details, categories)
    clusters = len(next(iter(tables.values())).clusters) if tables else 0
    intervals = {
        name: small_sample.column_intervals(table.hits, table.totals, table.columns) for name, table in tables.items()
    }
    # resamples and seed are those of `compare`'s permutation test; the intervals themselves are not random.
    settings = {
        "method": small_sample.METHOD,
        "level": LEVEL,
        "resamples": resamples,
        "seed": seed,
        "clusters": clusters,
    }
    return intervals, settings
