"""``cogbench explain RUN --published MODEL``: a run beside its model's row of the papers' tables.

Per metric the papers publish for the run's task (and description mode): per category the run's
number, the published one, their difference, whether the published value lies inside the run's
95% interval, and each category's part of the overall difference (its share of the run's units
times its difference; what the categories do not account for is shown as the rest). Then the
protocol differences known for that row, each named: who judged the paper (a judge now retired,
or humans), the judge and its reply parsing the run used, the spaCy model and embedder the
Recognition Score used against the paper's, VQA's letter reading.
"""

from __future__ import annotations

from typing import Any

from cogbench.errors import UsageError
from cogbench.numbers import fixed
from cogbench.reference_eval.explaining.explain import categories_of, stated
from cogbench.reference_eval.judges.retirement import KNOWN_SHUTDOWNS
from cogbench.reference_eval.metrics import intervals
from cogbench.reference_eval.metrics.recognition import PAPER_EMBEDDER, PAPER_SPACY_MODEL
from cogbench.reference_eval.recording.run_kind import PAPER_JUDGE, description_mode, judge_identity
from cogbench.reference_eval.recording.run_reader import ScoredRun
from cogbench.reference_eval.reports.published import published_results

# The judge each paper's own scripts call (retirement.KNOWN_SHUTDOWNS holds their shutdown dates).
PAPER_SCRIPT_JUDGE = {"description": "gpt-4-turbo", "codis": "gpt-4-turbo-preview"}


def published_gap(run: ScoredRun, model: str) -> dict[str, Any]:
    task = run.scores["task"]
    mode = description_mode(run.scores, run.run_record) if task == "description" else ""
    results = published_results()
    rows = [
        r
        for r in results
        if r.model.lower() == model.lower()
        and r.metric in run.scores["metrics"]
        and (r.mode in (mode, "") if task == "description" else r.mode == "")
    ]
    if not rows:
        known = sorted({r.model for r in results})
        raise UsageError(
            f"explain --published {model!r}: the papers publish no {task} number for that model"
            + (f" in {mode} mode" if mode else "")
            + f" (models: {', '.join(known)})"
        )
    categories = categories_of(task)
    tables = intervals.metric_tables(task, run.details, categories)
    metrics: dict[str, Any] = {}
    for result in rows:
        metric = run.scores["metrics"][result.metric]
        entry = metrics.setdefault(result.metric, {"source": result.source, "columns": {}})
        value = stated(metric, result.category)
        interval = (metric.get("interval") or {}).get("overall") if result.category == "overall" else None
        if result.category != "overall":
            interval = ((metric.get("interval") or {}).get("per_category") or {}).get(result.category)
        entry["columns"][result.category] = {
            "run": value,
            "published": result.value,
            "difference": None if value is None else value - result.value,
            "interval": interval,
            "inside": None if not interval else interval[0] <= result.value <= interval[1],
        }
    for name, entry in metrics.items():
        entry["carried_by"] = _carried_by(entry["columns"], tables.get(name))
    return {
        "run": str(run.folder),
        "model": run.scores["model"],
        "published_model": rows[0].model,
        "task": task,
        "mode": mode or None,
        "metrics": metrics,
        "protocol_differences": protocol_differences(run),
    }


def _carried_by(columns: dict[str, Any], table) -> dict[str, Any] | None:
    """Each category's part of the overall difference: its share of the run's units x its difference."""
    overall = columns.get("overall", {}).get("difference")
    if overall is None or table is None or table.totals[:, -1].sum() == 0:
        return None
    weight = dict(zip(table.columns, table.totals.sum(axis=0) / table.totals[:, -1].sum()))
    parts = {
        column: float(weight[column]) * row["difference"]
        for column, row in columns.items()
        if column != "overall" and row["difference"] is not None and column in weight
    }
    if not parts:  # a metric published overall only
        return None
    ranked = dict(sorted(parts.items(), key=lambda kv: -abs(kv[1])))
    return {"categories": ranked, "rest": overall - sum(parts.values())}


def protocol_differences(run: ScoredRun) -> list[str]:
    """The known ways this run was scored unlike the paper's row, each named."""
    task, found = run.scores["task"], []
    kind, judge_model, parsing = judge_identity(run.scores)
    script_judge = PAPER_SCRIPT_JUDGE.get(task)
    if script_judge:
        shutdown = next((s for s in KNOWN_SHUTDOWNS if s.model == script_judge), None)
        retired = f", shut down {shutdown.date.isoformat()}" if shutdown else ""
        used = f"openai:{judge_model}" if kind == "openai" else kind
        found.append(
            f"judge: the paper's numbers were decided by {PAPER_JUDGE[task]}; its scripts call {script_judge}"
            f"{retired}; this run was judged by {used}"
        )
        if kind == "openai":
            found.append(f"judge reply parsing: {parsing or 'tolerant'} (the authors' scripts read replies officially)")
    if task == "vqa":
        found.append(
            "parsing mode: the paper reads the first character of the response as the letter "
            "(accuracy_official); accuracy reads letters and option texts tolerantly"
        )
    models = (run.scores.get("provenance") or {}).get("models") or {}
    if task == "description":
        spacy = (models.get("spacy") or {}).get("requested")
        embedder = (models.get("embedder") or {}).get("requested")
        for what, used, paper in (("spaCy model", spacy, PAPER_SPACY_MODEL), ("embedder", embedder, PAPER_EMBEDDER)):
            if used != paper:
                found.append(f"{what}: {used or 'not recorded'} stands in for the paper's {paper}")
    return found


def gap_markdown(gap: dict[str, Any]) -> str:
    mode = f", {gap['mode']} mode" if gap["mode"] else ""
    lines = [f"# {gap['model']} (`{gap['run']}`) beside the published {gap['published_model']} ({gap['task']}{mode})"]
    for name, entry in gap["metrics"].items():
        lines += ["", f"## {name} ({entry['source']})", "", "| column | run | published | run - published | "]
        lines[-1] += "run's 95% interval | published inside |"
        lines.append("|---|---|---|---|---|---|")
        for column, row in entry["columns"].items():
            interval = row["interval"]
            lines.append(
                f"| {column} | {_n(row['run'])} | {_n(row['published'])} | {_n(row['difference'], '+')} | "
                f"{f'[{fixed(interval[0])}, {fixed(interval[1])}]' if interval else '-'} | "
                f"{'-' if row['inside'] is None else 'yes' if row['inside'] else 'no'} |"
            )
        carried = entry["carried_by"]
        if carried:
            parts = ", ".join(f"{c} {fixed(v, 2, sign=True)}" for c, v in carried["categories"].items())
            lines += ["", f"Carried by (category share x difference, points of overall): {parts}; "]
            lines[-1] += f"not accounted for by the categories: {fixed(carried['rest'], 2, sign=True)}."
    lines += ["", "## Protocol differences known for this row", ""]
    lines += [f"- {line}" for line in gap["protocol_differences"]] or ["- none known"]
    return "\n".join(lines)


def _n(value: float | None, sign: str = "") -> str:
    return "-" if value is None else fixed(value, 2, sign=sign == "+")
