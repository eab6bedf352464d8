"""``cogbench compare RUN_A RUN_B``: is the difference between two runs more than noise?

Both runs must score the same items of the same dataset revision with the same
prompt template; each metric's difference A - B is then bootstrapped over the
same image resamples for both runs, and tested with a paired permutation test
over images (``metrics.intervals``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogbench.errors import UsageError
from cogbench.reference_eval.metrics import intervals
from cogbench.reference_eval.reports.read import ScoredRun, read_run
from cogbench.schemas.features import CODIS_CATEGORIES, COGBENCH_CATEGORIES


def load_run(path: str | Path) -> ScoredRun:
    """A run folder, verified (``reports.read.read_run``): only recomputable numbers are compared."""
    return read_run(path)


def _cluster_of(detail: dict[str, Any]) -> str:
    return detail.get("image_id", detail["item_id"])


def check_comparable(a: ScoredRun, b: ScoredRun) -> None:
    """Refuse pairs whose difference would not mean what it says."""
    for name, what in (("task", "tasks"), ("dataset_revision", "dataset revisions")):
        if a.scores[name] != b.scores[name]:
            raise UsageError(
                f"cannot compare runs of different {what}: {a.folder} has {name} {a.scores[name]!r}, "
                f"{b.folder} has {b.scores[name]!r}"
            )
    if a.prompt_id and b.prompt_id and a.prompt_id != b.prompt_id:
        raise UsageError(
            f"cannot compare runs made with different prompt templates: {a.folder} used {a.prompt_id!r}, "
            f"{b.folder} used {b.prompt_id!r}"
        )
    for run in (a, b):
        if any("image_id" not in d and run.scores["task"] != "description" for d in run.details):
            raise UsageError(f"{run.folder / 'details.jsonl'}: lines have no image_id; score the run again with this version")
    items_a, items_b = {d["item_id"] for d in a.details}, {d["item_id"] for d in b.details}
    if items_a != items_b:
        raise UsageError(
            f"the runs scored different items ({len(items_a - items_b)} only in {a.folder}, "
            f"{len(items_b - items_a)} only in {b.folder}); a paired comparison needs the same items"
        )


def compare_runs(a: ScoredRun, b: ScoredRun, resamples: int = intervals.DEFAULT_RESAMPLES,
                 seed: int = intervals.DEFAULT_SEED, permutations: int = 9999) -> dict[str, Any]:
    """Per metric and column (categories, overall): A, B, A - B, its 95% interval and p-value."""
    check_comparable(a, b)
    task = a.scores["task"]
    categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
    clusters = sorted({_cluster_of(d) for d in a.details})
    tables_a = intervals.metric_tables(task, a.details, categories, clusters)
    tables_b = intervals.metric_tables(task, b.details, categories, clusters)
    metrics = {
        name: intervals.paired_difference(tables_a[name], tables_b[name], resamples, seed, permutations)
        for name in tables_a if name in tables_b
    }
    notes = []
    if not (a.prompt_id and b.prompt_id):
        notes.append("the prompt template of a run is not recorded (official-format predictions); not checked")
    if a.scores["judge"] != b.scores["judge"] and a.scores["judge"].get("kind") != b.scores["judge"].get("kind"):
        notes.append(f"the runs were judged differently ({a.scores['judge']['kind']} vs {b.scores['judge']['kind']})")
    return {
        "task": task, "dataset_revision": a.scores["dataset_revision"],
        "a": {"folder": str(a.folder), "model": a.scores["model"]},
        "b": {"folder": str(b.folder), "model": b.scores["model"]},
        "method": f"paired {intervals.METHOD}; p-value: paired permutation test over images",
        "resamples": resamples, "permutations": permutations, "seed": seed, "clusters": len(clusters),
        "metrics": metrics, "notes": notes,
    }


def render_comparison(result: dict[str, Any], alpha: float = 0.05) -> str:
    """A Markdown table: one row per metric and column, significant differences starred."""
    lines = [
        f"A: {result['a']['model']} ({result['a']['folder']})",
        f"B: {result['b']['model']} ({result['b']['folder']})",
        f"{result['task']}, {result['clusters']} images; {result['method']}, {result['resamples']} resamples, "
        f"{result['permutations']} permutations, seed {result['seed']}. * = p < {alpha}.",
        "",
        "| metric | column | A | B | A - B | 95% CI | p |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rows in result["metrics"].items():
        for row in rows:
            if row["difference"] is None:
                continue
            star = " *" if row["p_value"] is not None and row["p_value"] < alpha else ""
            low, high = row["interval"]
            lines.append(
                f"| {name} | {row['column']} | {row['a']:.1f} | {row['b']:.1f} | {row['difference']:+.1f}{star} | "
                f"[{low:+.1f}, {high:+.1f}] | {row['p_value']:.4f} |"
            )
    lines += [f"note: {note}" for note in result["notes"]]
    return "\n".join(lines) + "\n"
