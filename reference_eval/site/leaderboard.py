"""The site's leaderboard: per task and metric, each run's value with its 95% interval, significance groups
among the runs that may be ranked together, the minimum detectable difference, and the papers' rows.

Runs are read by ``reports.report_runs`` (through ``run_reader.read_run``: schema-checked, every number
recomputed from details.jsonl). Which runs are ranked together follows ``report``: a NOT COMPARABLE run
(``comparable.report_mismatches``) and a PARTIAL metric are shown but never ranked; the others are ranked
within one build kind (full release or SAMPLE) and judge, as ``report`` bolds them. Each pair of ranked runs
is compared on each metric's overall value as ``compare.compare_runs`` compares it (the paired permutation test
over shared images of ``cogbench compare``; ``compare.overall_rows`` gives the same rows, every pair of a metric
tested at once), and Holm's correction runs across the pairs of one metric (``significance``).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from cogbench.numbers import fixed
from cogbench.option_types import DEFAULT_PERMUTATIONS, DEFAULT_SEED
from cogbench.reference_eval.recording.run_files import metric_interval
from cogbench.reference_eval.recording.run_kind import MODE_LABEL, PAPER_JUDGE, judge_name
from cogbench.reference_eval.reports.compare import column_label, overall_rows
from cogbench.reference_eval.reports.published import REFERENCE_MODELS, PublishedResult, published_table
from cogbench.reference_eval.reports.report_runs import ReportRun, run_line
from cogbench.reference_eval.run.completeness import (
    coverage_label,
    run_labels,
    sample_label,
    shown_value,
    unscored_text,
)
from cogbench.reference_eval.site.significance import RULE, holm, significance_groups
from cogbench.reference_eval.tasks.image_variants import VARIANTS

TASK_TITLE = {"description": "Description (CogBench)", "vqa": "VQA (CogBench)", "codis": "CODIS"}
METRIC_LABEL = {
    "recognition_micro": "Recognition Score (micro)",
    "recognition_macro": "Recognition Score (macro)",
    "cognition": "Cognition Score",
    "accuracy": "Accuracy (robust extractor)",
    "accuracy_official": "Accuracy (official extractor)",
    "acc_p": "Acc_p (both queries of a pair right)",
    "acc_q": "Acc_q (single queries right)",
    "context_awareness": "Context awareness",
    "flip_rate": "Flip rate under image variants (answer changed; lower is steadier)",
    "accuracy_invariant": "Accuracy under every image variant",
    "acc_p_invariant": "Acc_p under every image variant",
}


def metric_label(metric: str) -> str:
    """A metric's label; an image variant's own metric (``flip_rate_NAME``, ``accuracy_NAME``, ``acc_p_NAME``) names
    its variant."""
    if metric in METRIC_LABEL:
        return METRIC_LABEL[metric]
    for base in ("flip_rate", "acc_p", "accuracy"):
        name = metric.removeprefix(base + "_")
        if name != metric and name in VARIANTS:
            return f"{ {'flip_rate': 'Flip rate', 'acc_p': 'Acc_p', 'accuracy': 'Accuracy'}[base] } under image variant {name}"
    return metric


# The papers' rows beside each metric: (scores.json metric, description mode or "", source table).
PUBLISHED = {
    "recognition_micro": [("spontaneous", "CogBench Table 2"), ("directed", "CogBench Table 2")],
    "cognition": [("spontaneous", "CogBench Table 3"), ("directed", "CogBench Table 3")],
    "accuracy": [("", "CogBench Table 5")],
    "acc_p": [("", "CODIS Table 3")],
    "acc_q": [("", "CODIS Table 3")],
    "context_awareness": [("", "CODIS Table 3")],
}
TASKS = ("description", "vqa", "codis")


def thinking_setting(run: ReportRun) -> str:
    """The thinking setting the replies record (answers/reasoning.py keeps it per reply); "not recorded" else."""
    found = set()
    for detail in run.run.details:
        for answer in [detail, *detail.get("queries", []), *detail.get("rotations", [])]:
            thinking = (answer.get("reply") or {}).get("thinking")
            if thinking:
                found.add(thinking)
    return ", ".join(sorted(found)) or "not recorded"


def run_entry(index: int, run: ReportRun) -> dict[str, Any]:
    """What the site says of a run: its label, what made it and what its numbers cover."""
    scores = run.run.scores
    return {
        "index": index,
        "label": run.label,
        "legend": run.legend,
        "task": run.task,
        "model": scores["model"],
        "line": run_line(run),
        "mode": MODE_LABEL.get(run.mode, run.mode) if run.mode else "",
        "judge": judge_name(scores),
        "judge_label": run.judge or "no judge",
        "thinking": thinking_setting(run),
        "build": scores["dataset_revision"],
        "sample": sample_label(scores),
        "coverage": run_labels(scores),
        "items": scores["counts"]["items"],
        "not_comparable": run.not_comparable,
        "folder": run.run.folder.name if run.run.folder.name != "score" else run.run.folder.parent.name,
    }


def _columns(runs: list[ReportRun], metric: str) -> list[str]:
    """Overall, then every category some run has for the metric."""
    categories: list[str] = []
    for run in runs:
        for category in (run.metrics.get(metric) or {}).get("per_category") or {}:
            if category not in categories:
                categories.append(category)
    return ["overall", *categories]


def shown(value: float | None, digits: int = 1, sign: bool = False) -> str:
    """A number as the page shows it: the texts come from here, by the one rounding rule of the command line and
    report.md (cogbench/numbers.py), so the page never rounds (JavaScript's toFixed rounds ties otherwise)."""
    return "-" if value is None else fixed(value, digits, sign=sign)


def _cell(metric: dict[str, Any], column: str) -> dict[str, Any]:
    """Value, interval and images, each with its text (``t``, ``ci_t``); overall, a constrained-parsed metric's
    unscored rate beside it, as report.md."""
    category = None if column == "overall" else column
    value = shown_value(metric, category)
    interval, images = metric_interval(metric, category)
    cell = {"v": value, "ci": interval, "images": images, "t": shown(value)}
    cell["ci_t"] = (
        f"[{shown(interval[0])}, {shown(interval[1])}]" if interval else "[n/a (1 image)]" if images == 1 else ""
    )
    if category is None and "unscored" in metric:
        cell["unscored"] = unscored_text(metric)
    return cell


def rank_key(run: ReportRun, metric: str) -> tuple[Any, ...] | None:
    """Runs with the same key may be ranked together on ``metric``; None: shown, never ranked.

    The key is what ``report`` ranks by (build kind, judge) and what it shows beside a run rather than refusing
    it (description mode, circular, no image, image variants): runs that differ there are ranked apart, as ``compare``
    would refuse to pair them."""
    if run.not_comparable or (run.metrics.get(metric) or {}).get("partial"):
        return None
    scores = run.run.scores
    variants = tuple((scores.get("image_variants") or {}).get("names") or ())
    return (
        sample_label(scores),
        run.judge,
        run.mode,
        bool(scores.get("circular")),
        bool(scores.get("no_image")),
        variants,
    )


def rank_sets(runs: list[ReportRun], metric: str) -> list[list[int]]:
    """Indexes of the runs ranked together on ``metric``: one list per ``rank_key``, two runs or more."""
    sets: dict[tuple[Any, ...], list[int]] = {}
    for k, run in enumerate(runs):
        key = rank_key(run, metric) if metric in run.metrics else None
        if key is not None:
            sets.setdefault(key, []).append(k)
    return [members for members in sets.values() if len(members) > 1]


def _why_unranked(run: ReportRun, metric: str) -> str:
    if run.not_comparable:
        return f"NOT COMPARABLE: {run.not_comparable}"
    return coverage_label(run.metrics.get(metric))


def pair_tests(
    runs: list[ReportRun], sets: dict[str, list[list[int]]], permutations: int, seed: int
) -> dict[tuple[int, int], dict[str, Any]]:
    """Per metric, the overall row ``compare.compare_runs`` gives each pair (i < j) within one of its rank sets
    (``sets``: metric -> rank sets), as ``{(i, j): {"metrics": {metric: [row]}}}``: the groups read the overall
    row alone. ``compare.overall_rows`` makes them, every pair's permutation test of a metric at once."""
    tests: dict[tuple[int, int], dict[str, Any]] = {}
    scored = [run.run for run in runs]
    for metric, found in sets.items():
        pairs = sorted({pair for members in found for pair in combinations(sorted(members), 2)})
        for pair, row in overall_rows(scored, pairs, metric, seed, permutations).items():
            tests.setdefault(pair, {"metrics": {}})["metrics"][metric] = [row]
    return tests


def ranked_metric(
    runs: list[ReportRun], members: list[int], metric: str, tests: dict[tuple[int, int], dict[str, Any]], alpha: float
) -> dict[str, Any]:
    """Groups of one rank set on one metric's overall value: Holm over its pairs, letters, pairs, the MDD range."""
    values = [shown_value(runs[i].metrics[metric]) or 0.0 for i in members]
    pairs = []
    for a, b in combinations(range(len(members)), 2):
        i, j = sorted((members[a], members[b]))
        overall = tests[(i, j)]["metrics"][metric][-1]
        pairs.append(
            {
                "a": i,
                "b": j,
                "difference": overall["difference"],
                "interval": overall["interval"],
                "p": 1.0 if overall["p_value"] is None else overall["p_value"],
                "mdd": overall.get("min_detectable"),
                "difference_t": shown(overall["difference"], sign=True),
                "mdd_t": shown(overall.get("min_detectable")),
            }
        )
    for pair, adjusted in zip(pairs, holm([p["p"] for p in pairs])):
        pair["p_holm"] = adjusted
        pair["p_holm_t"] = shown(adjusted, 4)
        pair["differs"] = adjusted < alpha
    position = {run: k for k, run in enumerate(members)}
    differs = {
        (min(position[p["a"]], position[p["b"]]), max(position[p["a"]], position[p["b"]])): p["differs"] for p in pairs
    }
    letters = significance_groups(values, differs)
    mdds = [p["mdd"] for p in pairs if p["mdd"] is not None]
    return {
        "members": members,
        "letters": dict(zip(members, letters)),
        "pairs": pairs,
        "mdd": [min(mdds), max(mdds)] if mdds else None,
        "mdd_t": f"{shown(min(mdds))}–{shown(max(mdds))} points over the pairs" if mdds else "n/a",
    }


def published_rows(published: list[PublishedResult], task: str, metric: str) -> list[dict[str, Any]]:
    """The papers' rows for a metric, each labelled: published (its table and judge), human baseline or oracle."""
    rows = []
    for mode, table in PUBLISHED.get(metric, []):
        for model, values in published_table(published, metric, mode).items():
            if mode == "spontaneous" and model in REFERENCE_MODELS:
                continue  # the Oracle row is printed once, with Mode 2
            kind = {"Human": "human baseline", "Oracle": "oracle"}.get(model, "published")
            judge = PAPER_JUDGE.get(task, "")
            rows.append(
                {
                    "model": model + (f" ({MODE_LABEL[mode]})" if mode and model not in REFERENCE_MODELS else ""),
                    "kind": kind,
                    "source": f"{kind}, {table}" + (f", {judge}" if judge and metric != "recognition_micro" else ""),
                    "cells": {c: {"v": v, "t": shown(v)} for c, v in values.items()},
                }
            )
    return rows


def leaderboard(
    runs: list[ReportRun],
    published: list[PublishedResult],
    alpha: float = 0.05,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Everything the leaderboard page shows, as plain data (the site writes it as a script)."""
    tasks = []
    for task in TASKS:
        indexes = [i for i, run in enumerate(runs) if run.task == task]
        if not indexes:
            continue
        task_runs = [runs[i] for i in indexes]
        names = list(dict.fromkeys(m for run in task_runs for m in run.metrics))
        sets = {metric: rank_sets(task_runs, metric) for metric in names}
        tests = pair_tests(task_runs, sets, permutations, seed)
        metrics = []
        for metric in names:
            columns = _columns(task_runs, metric)
            groups = [ranked_metric(task_runs, members, metric, tests, alpha) for members in sets[metric]]
            rows = []
            for k, run in enumerate(task_runs):
                if metric not in run.metrics:
                    continue
                group = next((g for g in groups if k in g["members"]), None)
                rows.append(
                    {
                        "run": indexes[k],
                        "cells": {c: _cell(run.metrics[metric], c) for c in columns},
                        "letters": group["letters"][k] if group else "",
                        "rank_set": groups.index(group) if group else None,
                        "unranked": _why_unranked(run, metric)
                        or (
                            ""
                            if group
                            else "not ranked: no other run of its kind (build, judge, mode, circular, no image, "
                            "image variants)"
                        ),
                    }
                )
            for group in groups:
                group["members"] = [indexes[k] for k in group["members"]]
                group["letters"] = {indexes[k]: v for k, v in group["letters"].items()}
                for pair in group["pairs"]:
                    pair["a"], pair["b"] = indexes[pair["a"]], indexes[pair["b"]]
            metrics.append(
                {
                    "name": metric,
                    "label": metric_label(metric),
                    "columns": [{"key": c, "label": column_label(c)} for c in columns],
                    "rows": rows,
                    "groups": groups,
                    "published": published_rows(published, task, metric),
                }
            )
        tasks.append({"task": task, "title": TASK_TITLE[task], "metrics": metrics})
    return {
        "alpha": alpha,
        "permutations": permutations,
        "rule": RULE.format(alpha=alpha),
        "runs": [run_entry(i, run) for i, run in enumerate(runs)],
        "tasks": tasks,
    }
