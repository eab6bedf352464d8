"""``cogbench compare RUN_A RUN_B``: is the difference between two runs more than noise?

Both runs must be comparable (``comparable``: same items, dataset version and
fingerprint, generation settings) or ``--allow-mismatch`` compares the shared
items, labelled so on every line. Each metric's difference A - B gets a t
interval over the images on G - 1 degrees of freedom (``metrics.small_sample``)
and a paired permutation test over images (``metrics.intervals``); a minimum
detectable difference says which differences these sizes cannot resolve.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cogbench.errors import UsageError
from cogbench.numbers import fixed
from cogbench.reference_eval.metrics import intervals, paired_many, small_sample
from cogbench.reference_eval.recording.run_kind import JUDGED_METRICS, judge_difference, judge_label
from cogbench.reference_eval.recording.run_reader import ScoredRun, read_run
from cogbench.reference_eval.reports.comparable import Mismatch, check_or_refuse, generation_settings
from cogbench.reference_eval.run.completeness import coverage_label
from cogbench.schemas.vocabulary import CATEGORY_LABEL, CODIS_CATEGORIES, COGBENCH_CATEGORIES


def load_run(path: str | Path) -> ScoredRun:
    """A run folder, verified (``recording.run_reader.read_run``): only recomputable numbers are compared."""
    return read_run(path)


def _cluster_of(detail: dict[str, Any]) -> str:
    return detail.get("image_id", detail["item_id"])


def check_comparable(a: ScoredRun, b: ScoredRun, allow_mismatch: bool = False, settings=None) -> Mismatch:
    """Refuse pairs whose difference would not mean what it says (``comparable``); returns what differs.
    ``settings``: both runs' ``comparable.generation_settings``, when read already."""
    for run in (a, b):
        if any("image_id" not in d and run.scores["task"] != "description" for d in run.details):
            raise UsageError(
                f"{run.folder / 'details.jsonl'}: lines have no image_id; score the run again with this version"
            )
    return check_or_refuse(a, b, allow_mismatch, settings=settings)


def compare_runs(
    a: ScoredRun,
    b: ScoredRun,
    resamples: int = intervals.DEFAULT_RESAMPLES,
    seed: int = intervals.DEFAULT_SEED,
    permutations: int = intervals.DEFAULT_PERMUTATIONS,
    allow_mismatch: bool = False,
) -> dict[str, Any]:
    """Per metric and column (categories, overall): A, B, A - B, its 95% interval and p-value."""
    mismatch = check_comparable(a, b, allow_mismatch)
    task = a.scores["task"]
    categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
    details_a = [d for d in a.details if d["item_id"] in mismatch.shared]
    details_b = [d for d in b.details if d["item_id"] in mismatch.shared]
    clusters = sorted({_cluster_of(d) for d in details_a})
    tables_a = intervals.metric_tables(task, details_a, categories, clusters)
    tables_b = intervals.metric_tables(task, details_b, categories, clusters)
    metrics = {
        name: _metric_rows(tables_a[name], tables_b[name], seed, permutations) for name in tables_a if name in tables_b
    }
    notes = []
    if not (a.prompt_id and b.prompt_id):
        notes.append("the prompt template of a run is not recorded (official-format predictions); not checked")
    judged_apart = judge_difference(a.scores, b.scores) is not None
    return {
        "task": task,
        "dataset_revision": a.scores["dataset_revision"],
        "a": {"folder": str(a.folder), "model": a.scores["model"], "coverage": _coverage(a), "judge": _judge(a)},
        "b": {"folder": str(b.folder), "model": b.scores["model"], "coverage": _coverage(b), "judge": _judge(b)},
        # --allow-mismatch over different judges: the judged metrics' lines say who judged each side
        "judged_apart": [name for name in metrics if name in JUDGED_METRICS] if judged_apart else [],
        "method": f"{small_sample.PAIRED_METHOD}; p-value: paired permutation test over images",
        "resamples": resamples,
        "permutations": permutations,
        "seed": seed,
        "clusters": len(clusters),
        "mismatch": mismatch.reasons,
        "shared_items": len(mismatch.shared),
        "metrics": metrics,
        "notes": notes,
    }


def _judge(run: ScoredRun) -> str:
    return judge_label(run.scores) or "no judge"


def _coverage(run: ScoredRun) -> dict[str, str]:
    """Per metric, its PARTIAL (n/N) label where it was counted on a subset."""
    return {name: coverage_label(m) for name, m in run.scores["metrics"].items() if m.get("partial")}


def _metric_rows(table_a, table_b, seed: int, permutations: int) -> list[dict[str, Any]]:
    """Per column: the permutation p (``intervals.paired_difference``) beside the t interval and the MDD."""
    rows = intervals.paired_difference(table_a, table_b, 1, seed, permutations)
    for k, row in enumerate(rows):
        _t_and_mdd(row, table_a, table_b, k)
    return rows


def _t_and_mdd(row: dict[str, Any], table_a, table_b, k: int) -> None:
    """Column ``k``'s row completed: the t interval, its standard error and images, and the MDD."""
    paired = small_sample.paired_difference_t(
        table_a.hits[:, k], table_a.totals[:, k], table_b.hits[:, k], table_b.totals[:, k]
    )
    row.update(interval=paired["interval"], se=paired["se"], clusters=paired["clusters"])
    if paired["clusters"] < 2:
        row["p_value"] = None  # one image: nothing to permute
    units = float(min(table_a.totals[:, k].sum(), table_b.totals[:, k].sum()))
    rates = tuple((x or 0.0) / 100.0 for x in (row["a"], row["b"]))
    row["min_detectable"] = small_sample.min_detectable_difference(paired["se"], units, rates, paired["clusters"])


def overall_rows(
    runs: Sequence[ScoredRun],
    pairs: Sequence[tuple[int, int]],
    metric: str,
    seed: int = intervals.DEFAULT_SEED,
    permutations: int = intervals.DEFAULT_PERMUTATIONS,
) -> dict[tuple[int, int], dict[str, Any]]:
    """``compare_runs(runs[i], runs[j], resamples=1, seed=seed, permutations=permutations)["metrics"][metric][-1]``
    of each pair (i, j): the same rows, each pair refused as ``compare`` refuses it, but each run's table made
    once and the permutation tests of all pairs over the same images run together (``metrics.paired_many``)."""
    tables: dict[tuple[int, tuple[str, ...]], tuple[Any, float]] = {}
    settings: dict[int, dict[str, Any]] = {}  # each run's run.json read once, not once per pair

    def table(k: int, clusters: tuple[str, ...]) -> tuple[Any, float]:
        """Run k's table of ``metric`` over ``clusters``, and its overall pooled value."""
        if (k, clusters) not in tables:
            task = runs[k].scores["task"]
            categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
            made = intervals.metric_tables(task, runs[k].details, categories, clusters)[metric]
            tables[(k, clusters)] = made, made.pooled()[-1]
        return tables[(k, clusters)]

    def settings_of(k: int) -> dict[str, Any]:
        if k not in settings:
            settings[k] = generation_settings(runs[k].folder, runs[k].scores, runs[k].prompt_id)
        return settings[k]

    rows, tested = {}, {}
    for i, j in pairs:
        # Refused unless comparable, so both runs hold the same items, all shared: each run's table is that of its
        # every detail, as compare_runs makes it from the shared ones.
        mismatch = check_comparable(runs[i], runs[j], settings=(settings_of(i), settings_of(j)))
        clusters = tuple(sorted({_cluster_of(d) for d in runs[i].details if d["item_id"] in mismatch.shared}))
        (a, pooled_a), (b, pooled_b) = table(i, clusters), table(j, clusters)
        point = pooled_a - pooled_b
        row = {"column": "overall", "a": intervals.number(pooled_a), "b": intervals.number(pooled_b)}
        row["difference"] = intervals.number(point)
        row.update(interval=None, p_value=None)
        _t_and_mdd(row, a, b, -1)
        rows[(i, j)] = row
        if not np.isnan(point) and len(clusters) >= 2 and row["clusters"] >= 2:
            tested.setdefault(clusters, []).append(((i, j), a, b))
    for found in tested.values():  # the pairs over one set of images: (pair, table A, table B)
        sides = list(zip(*((a, b) for _, a, b in found)))  # (the A tables, the B tables)
        hits_a, hits_b = (np.stack([t.hits[:, -1] for t in side]) for side in sides)
        totals_a, totals_b = (np.stack([t.totals[:, -1] for t in side]) for side in sides)
        p_values = paired_many.paired_permutation_ps(hits_a, totals_a, hits_b, totals_b, permutations, seed)
        for (pair, _, _), p_value in zip(found, p_values):
            rows[pair]["p_value"] = p_value
    return rows


def column_label(column: str) -> str:
    """A column as the papers' tables name it, for every task: "Overall", CogBench's labels, CODIS's names."""
    return "Overall" if column == "overall" else CATEGORY_LABEL.get(column, column)


def render_comparison(result: dict[str, Any], alpha: float = 0.05) -> str:
    """A Markdown table: one row per metric and column, significant differences starred, each row's coverage."""
    shared = f"shared items only ({result['shared_items']})" if result.get("mismatch") else ""
    lines = [
        f"A: {result['a']['model']} ({result['a']['folder']})",
        f"B: {result['b']['model']} ({result['b']['folder']})",
        f"{result['task']}, {result['clusters']} images; {result['method']}, {result['permutations']} permutations, "
        f"seed {result['seed']}. * = p < {alpha}.",
    ]
    if result.get("mismatch"):
        lines.append(
            f"MISMATCH (--allow-mismatch): {'; '.join(result['mismatch'])}; every line compares the "
            f"{result['shared_items']} shared items only"
        )
    lines += ["", "| metric | column | A | B | A - B | 95% CI | p | covers |", "|---|---|---|---|---|---|---|---|"]
    for name, rows in result["metrics"].items():
        covers = (
            ", ".join(
                x
                for x in (
                    shared,
                    *(
                        [f"judged apart: A {result['a']['judge']}, B {result['b']['judge']}"]
                        if name in result.get("judged_apart", [])
                        else []
                    ),
                    *(
                        f"{side} {result[side]['coverage'][name]}"
                        for side in ("a", "b")
                        if name in result[side].get("coverage", {})
                    ),
                )
                if x
            )
            or "all items"
        )
        for row in rows:
            if row["difference"] is None:
                continue
            star = " *" if row["p_value"] is not None and row["p_value"] < alpha else ""
            ci = (
                f"[{fixed(row['interval'][0], sign=True)}, {fixed(row['interval'][1], sign=True)}]"
                if row["interval"]
                else "n/a (1 image)"
            )
            p = fixed(row["p_value"], 4) if row["p_value"] is not None else "n/a"
            lines.append(
                f"| {name} | {column_label(row['column'])} | {fixed(row['a'])} | {fixed(row['b'])} | {fixed(row['difference'], sign=True)}{star} | "
                f"{ci} | {p} | {covers} |"
            )
    for name, rows in result["metrics"].items():
        overall = rows[-1]
        if overall.get("min_detectable") is not None:
            lines.append(
                f"min detectable difference, {name} overall: with these sizes ({result['clusters']} images), "
                f"differences below {fixed(overall['min_detectable'])} points cannot be told apart at 80% power"
                + (f" ({shared})" if shared else "")
            )
    lines += [f"note: {note}" for note in result["notes"]]
    return "\n".join(lines) + "\n"
