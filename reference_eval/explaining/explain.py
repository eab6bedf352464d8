"""``cogbench explain A B``: every difference between two scorings of one task, split into pipeline stages.

The attribution rule, stated once (docs/explain.md repeats it):

1. Each item is put in the first stage, in pipeline order items -> prompt -> image -> generation -> output ->
   parse -> judge, where its two scorings differ (``stages.compare_item``); it is listed under every
   stage where they differ. An item scored by one run only is an ``items`` item. An item whose
   recorded stages are all equal but whose counted units still differ is a ``metric`` item.
2. B - A is split by switching A's per-item units (``metrics.intervals.units_from_details``, the
   units every pooled score counts) to B's one item at a time, the stages in pipeline order, the
   items of a stage in id order (items stage: changed gold first, then B's new items, then A's
   dropped ones). Each switch's change of the pooled number is that item's share; a stage's share
   is the sum of its items'. The shares telescope from A's number to B's, so they add up exactly;
   where the denominator stays the same (a verdict flips) an item's share is (B's hits - A's
   hits) / units x 100 whatever the order. A switch that leaves a column with no unit counts 0 and
   the next one takes the change from the last defined number.
3. ``metric`` gets, besides its items, the residual: B - A as scores.json states them minus the
   recomputed difference (pooling or metric code that differs while the verdicts do not).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cogbench.errors import UsageError
from cogbench.reference_eval.explaining.stages import NOT_RECORDED, STAGES, compare_item, generation_of
from cogbench.reference_eval.metrics import intervals
from cogbench.reference_eval.recording.run_reader import ScoredRun
from cogbench.reference_eval.run.completeness import run_labels
from cogbench.schemas.vocabulary import CODIS_CATEGORIES, COGBENCH_CATEGORIES

RULE = (
    "each item goes to the first stage, in pipeline order items > prompt > image > generation > output > parse > judge, "
    "where its two scorings differ, and is listed under every stage where they differ; B - A is split by "
    "switching A's per-item units to B's one item at a time (stages in that order, items in id order), each "
    "switch's change of the pooled number being that item's share, so the shares add up to B - A exactly; "
    "metric: items whose recorded stages agree but whose units differ, plus the stated numbers' residual"
)


@dataclass
class Explanation:
    """What ``explain`` found: per metric and column the shares of B - A by stage, and the items behind them."""

    task: str
    a: dict[str, Any]
    b: dict[str, Any]
    assigned: dict[str, list[str]]  # stage -> items put there (first differing stage)
    listed: dict[str, list[str]]  # stage -> every item differing there
    not_recorded: dict[str, int]  # stage -> shared items for which one scoring did not record it
    metrics: dict[str, dict[str, dict[str, Any]]]  # metric -> column -> {a, b, difference, shares}
    contributions: dict[str, dict[str, float]]  # metric -> item -> its share of the overall difference
    details_a: dict[str, dict[str, Any]] = field(default_factory=dict)
    details_b: dict[str, dict[str, Any]] = field(default_factory=dict)


def run_summary(run: ScoredRun, shown: str | None = None) -> dict[str, Any]:
    labels = run_labels(run.scores)
    return {
        "run": shown or str(run.folder),
        "model": run.scores["model"],
        "items": len(run.details),
        "labels": labels,
        "partial": bool(labels) or run.scores.get("complete") is False,
    }


def categories_of(task: str) -> list[str]:
    return list(CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES)


def item_vectors(task: str, details: dict[str, dict[str, Any]], columns: dict[str, list[str]]):
    """metric -> item -> (hits, totals) over the metric's columns (categories..., overall)."""
    vectors: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {name: {} for name in columns}
    for item, detail in details.items():
        units = intervals.units_from_details(task, [detail])
        for name, names in columns.items():
            table = intervals.cluster_table(units.get(name, []), names[:-1], [detail.get("image_id", item)])
            vectors[name][item] = (table.hits[0], table.totals[0])
    return vectors


def order_items(
    shared_first: dict[str, str | None], only_a: list[str], only_b: list[str], gold: list[str]
) -> list[tuple[str, str]]:
    """(stage, item) in switching order: the pipeline's stages, items by id (rule 2 of the docstring)."""
    order = [("items", item) for item in sorted(gold)]
    order += [("items", item) for item in sorted(only_b)] + [("items", item) for item in sorted(only_a)]
    for stage in STAGES[1:]:
        order += [(stage, item) for item in sorted(shared_first) if shared_first[item] == stage]
    return order


def decompose(
    order: list[tuple[str, str]],
    vectors_a: dict[str, tuple[np.ndarray, np.ndarray]],
    vectors_b: dict[str, tuple[np.ndarray, np.ndarray]],
    width: int,
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(A's pooled numbers, B's, per stage its share, per item its share): rule 2, per column."""
    zero = (np.zeros(width), np.zeros(width))
    hits = sum((v[0] for v in vectors_a.values()), np.zeros(width))
    totals = sum((v[1] for v in vectors_a.values()), np.zeros(width))
    start = pooled(hits, totals)
    previous = start.copy()
    shares = {stage: np.zeros(width) for stage in STAGES}
    per_item: dict[str, np.ndarray] = {}
    for stage, item in order:
        old, new = vectors_a.get(item, zero), vectors_b.get(item, zero)
        hits, totals = hits + new[0] - old[0], totals + new[1] - old[1]
        value = pooled(hits, totals)
        step = np.where(np.isnan(value) | np.isnan(previous), 0.0, value - previous)
        previous = np.where(np.isnan(value), previous, value)
        shares[stage] += step
        per_item[item] = step
    return start, pooled(hits, totals), shares, per_item


def pooled(hits: np.ndarray, totals: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, 100.0 * hits / np.where(totals > 0, totals, 1.0), np.nan)


def explain_runs(a: ScoredRun, b: ScoredRun, shown: tuple[str, str] | None = None) -> Explanation:
    """Runs read through ``run_reader.read_run`` (or ``explain_inputs``, which names them: ``shown``);
    refuses two tasks in one line."""
    task = a.scores["task"]
    name_a, name_b = shown or (str(a.folder), str(b.folder))
    if b.scores["task"] != task:
        raise UsageError(
            f"cannot explain {name_a} against {name_b}: they score different tasks ({task!r} and {b.scores['task']!r})"
        )
    details_a = {d["item_id"]: d for d in a.details}
    details_b = {d["item_id"]: d for d in b.details}
    generation_a, generation_b = generation_of(a.run_record), generation_of(b.run_record)
    assigned: dict[str, list[str]] = {stage: [] for stage in STAGES}
    listed: dict[str, list[str]] = {stage: [] for stage in STAGES}
    not_recorded = dict.fromkeys(STAGES, 0)
    shared_first: dict[str, str | None] = {}
    gold = []
    only_a = sorted(set(details_a) - set(details_b))
    only_b = sorted(set(details_b) - set(details_a))
    for item in sorted(set(details_a) & set(details_b)):
        found = compare_item(task, details_a[item], details_b[item], generation_a, generation_b)
        for stage in found.differing:
            listed[stage].append(item)
        for stage in found.unrecorded:
            not_recorded[stage] += 1
        if found.first == "items":
            gold.append(item)
        else:
            shared_first[item] = found.first
    categories = categories_of(task)
    names = [name for name in b.scores["metrics"] if name in a.scores["metrics"]]
    tables_a = intervals.metric_tables(task, a.details, categories)
    names = [name for name in names if name in tables_a]
    columns = {name: [*tables_a[name].columns] for name in names}
    vectors_a = item_vectors(task, details_a, columns)
    vectors_b = item_vectors(task, details_b, columns)
    # Shared items equal in every recorded stage whose units differ all the same: the metric stage.
    for item, first in shared_first.items():
        if first is None and any(_differs(vectors_a[n][item], vectors_b[n][item]) for n in names):
            shared_first[item] = "metric"
            listed["metric"].append(item)
    for item in only_a + only_b:
        listed["items"].append(item)
    listed["items"].sort()
    order = order_items(shared_first, only_a, only_b, gold)
    for stage, item in order:
        assigned[stage].append(item)
    metrics: dict[str, dict[str, dict[str, Any]]] = {}
    contributions: dict[str, dict[str, float]] = {}
    for name in names:
        width = len(columns[name])
        start, end, shares, per_item = decompose(order, vectors_a[name], vectors_b[name], width)
        metrics[name] = {}
        for k, column in enumerate(columns[name]):
            stated_a = stated(a.scores["metrics"][name], column)
            stated_b = stated(b.scores["metrics"][name], column)
            value_a = stated_a if stated_a is not None else _number(start[k])
            value_b = stated_b if stated_b is not None else _number(end[k])
            if value_a is None or value_b is None:
                metrics[name][column] = {"a": value_a, "b": value_b, "difference": None, "shares": None}
                continue
            column_shares = {stage: float(shares[stage][k]) for stage in STAGES}
            column_shares["metric"] += (value_b - value_a) - float(end[k] - start[k])
            metrics[name][column] = {
                "a": value_a,
                "b": value_b,
                "difference": value_b - value_a,
                "shares": column_shares,
            }
        contributions[name] = {item: float(step[-1]) for item, step in per_item.items() if step[-1] != 0.0}
    return Explanation(
        task,
        run_summary(a, name_a),
        run_summary(b, name_b),
        assigned,
        listed,
        not_recorded,
        metrics,
        contributions,
        details_a,
        details_b,
    )


def stated(metric: dict[str, Any], column: str) -> float | None:
    """The number scores.json states for a column (a partial run's overall is ``overall_partial``)."""
    if column == "overall":
        value = metric.get("overall")
        value = metric.get("overall_partial") if value is None else value
    else:
        value = (metric.get("per_category") or {}).get(column)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _differs(x: tuple[np.ndarray, np.ndarray], y: tuple[np.ndarray, np.ndarray]) -> bool:
    return not (np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]))


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def stage_note(explanation: Explanation, stage: str) -> str:
    """Why a stage cannot speak for some items: it was not recorded by one of the scorings."""
    count = explanation.not_recorded.get(stage, 0)
    if not count:
        return ""
    why = {
        "prompt": "a scoring keeps no rendered prompt hash (the authors' and VLMEvalKit's files keep no prompt)",
        "generation": "a scoring keeps no generation settings (a `score` run and a details dataset keep no eval "
        "run.json)",
    }.get(stage, "a scoring did not record it")
    return f"{NOT_RECORDED} for {count} shared item(s): {why}; their differences fall to the next recorded stage"
