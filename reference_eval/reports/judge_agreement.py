"""``cogbench compare --judges RUN_A RUN_B``: two scorings of the same predictions by different judges.

Per category: Cohen's kappa with its 95% interval (images resampled), the share of verdicts that
flip, and each judge's score with the move B - A, all on the units both judges gave a verdict.
With several models (``--pair RUN_A RUN_B`` for each further model), Kendall's tau of the models'
order under the two judges, with its interval (``metrics.agreement``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cogbench.errors import UsageError
from cogbench.reference_eval.metrics import agreement
from cogbench.reference_eval.metrics.intervals import OFFLINE_KINDS
from cogbench.reference_eval.reports import charts
from cogbench.reference_eval.reports.run_reader import ScoredRun
from cogbench.reference_eval.reports.tables import Cell, Table

Verdicts = dict[tuple, tuple[str, str, bool]]  # unit key -> (image, category, verdict)


def verdict_units(task: str, details: list[dict[str, Any]]) -> Verdicts:
    """Every judged unit of a run: CODIS queries, or Cognition key points (LLM or offline judge)."""
    units: Verdicts = {}
    if task == "codis":
        for d in details:
            for q in d["queries"]:
                if q["right"] is not None:
                    units[(d["item_id"], q["query"])] = (d["image_id"], d["category"], bool(q["right"]))
        return units
    if task != "description":
        raise UsageError(f"--judges compares judge verdicts; {task} runs have no judge")
    for d in details:
        keys = ["cognition"] if "cognition" in d else [f"cognition_{k}" for k in OFFLINE_KINDS if f"cognition_{k}" in d]
        for position, cor in enumerate(d.get(keys[0], []) if keys else []):
            if cor["verdict"] is not None:
                key = (d["item_id"], cor["category"], cor.get("index", position))
                units[key] = (d["item_id"], cor["category"], bool(cor["verdict"]))
    return units


def _row(units_a: Verdicts, units_b: Verdicts, keys: list[tuple], resamples: int, seed: int) -> dict[str, Any]:
    a = [units_a[k][2] for k in keys]
    b = [units_b[k][2] for k in keys]
    images = [units_a[k][0] for k in keys]
    score_a = 100 * float(np.mean(a)) if keys else None
    score_b = 100 * float(np.mean(b)) if keys else None
    return {
        "units": len(keys),
        "images": len(set(images)),
        "kappa": agreement.cohen_kappa(a, b),
        "kappa_interval": agreement.kappa_interval(images, a, b, resamples, seed),
        "flipped": 100 * float(np.mean([x != y for x, y in zip(a, b)])) if keys else None,
        "score_a": score_a,
        "score_b": score_b,
        "move": None if score_a is None else score_b - score_a,
    }


def agreement_table(task: str, details_a, details_b, resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Per category and overall, on the units both judges judged."""
    units_a, units_b = verdict_units(task, details_a), verdict_units(task, details_b)
    shared = sorted(set(units_a) & set(units_b), key=str)
    categories = sorted({units_a[k][1] for k in shared})
    rows = {c: _row(units_a, units_b, [k for k in shared if units_a[k][1] == c], resamples, seed) for c in categories}
    rows["overall"] = _row(units_a, units_b, shared, resamples, seed)
    return {
        "shared_units": len(shared),
        "only_a": len(set(units_a) - set(units_b)),
        "only_b": len(set(units_b) - set(units_a)),
        "rows": rows,
    }


def judge_label(run: ScoredRun) -> str:
    judge = run.scores["judge"]
    return f"{judge['kind']}{':' + judge['model'] if judge.get('model') else ''}"


def ranking(pairs: list[tuple[str, str, list, list]], resamples: int, seed: int) -> dict[str, Any]:
    """Kendall's tau of the models' overall scores under judge A and judge B, with its interval."""
    tables = [(verdict_units(task, a), verdict_units(task, b)) for task, _, a, b in pairs]
    images = sorted({unit[0] for ua, _ in tables for unit in ua.values()})
    index = {image: i for i, image in enumerate(images)}
    hits_a, hits_b, totals = (np.zeros((len(pairs), len(images))) for _ in range(3))
    for m, (ua, ub) in enumerate(tables):
        for key in set(ua) & set(ub):
            i = index[ua[key][0]]
            hits_a[m, i] += ua[key][2]
            hits_b[m, i] += ub[key][2]
            totals[m, i] += 1
    scores_a = list(100 * hits_a.sum(1) / totals.sum(1))
    scores_b = list(100 * hits_b.sum(1) / totals.sum(1))
    return {
        "models": [model for _, model, _, _ in pairs],
        "scores_a": scores_a,
        "scores_b": scores_b,
        "tau": agreement.kendall_tau(scores_a, scores_b),
        "tau_interval": agreement.tau_interval(hits_a, hits_b, totals, resamples, seed),
    }


def compare_judges(pairs: list[tuple[ScoredRun, ScoredRun]], resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Judge agreement per model (each pair: one model's predictions scored by judge A and judge B)."""
    first_a, first_b = pairs[0]
    labels = (judge_label(first_a), judge_label(first_b))
    for a, b in pairs:
        if a.scores["task"] != first_a.scores["task"] or (judge_label(a), judge_label(b)) != labels:
            raise UsageError("every pair must be the same task scored by the same two judges (A first, then B)")
        if a.scores["model"] != b.scores["model"] or a.scores["predictions"] != b.scores["predictions"]:
            raise UsageError(f"{a.folder} and {b.folder} score different predictions; --judges needs the same ones")
    if labels[0] == labels[1]:
        raise UsageError(f"both runs were scored by the same judge ({labels[0]}); --judges compares two judges")
    task = first_a.scores["task"]
    models = {a.scores["model"]: agreement_table(task, a.details, b.details, resamples, seed) for a, b in pairs}
    result = {"task": task, "judge_a": labels[0], "judge_b": labels[1], "models": models}
    if len(pairs) > 1:
        result["ranking"] = ranking(
            [(task, a.scores["model"], a.details, b.details) for a, b in pairs], resamples, seed
        )
    return result


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render_agreement(result: dict[str, Any]) -> str:
    lines = [f"judges: A = {result['judge_a']}, B = {result['judge_b']} ({result['task']})"]
    for model, table in result["models"].items():
        lines.append(f"\n{model}: {table['shared_units']} units judged by both")
        lines.append("| category | units | images | kappa [95% CI] | flipped % | A | B | B - A |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for name, row in table["rows"].items():
            ci = row["kappa_interval"]
            kappa = _num(row["kappa"], 3) + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
            lines.append(
                f"| {name} | {row['units']} | {row['images']} | {kappa} | {_num(row['flipped'])} "
                f"| {_num(row['score_a'])} | {_num(row['score_b'])} | {_num(row['move'])} |"
            )
    if "ranking" in result:
        ranking = result["ranking"]
        ci = ranking["tau_interval"]
        lines.append(
            f"\nKendall's tau of the {len(ranking['models'])} models' order under A and B: {_num(ranking['tau'], 3)}"
            + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
        )
    return "\n".join(lines) + "\n"


# --- in `cogbench report`: runs of the same predictions scored by two judges ------------------


def report_pairs(runs: list[Any]) -> dict[tuple[str, str, str], list[tuple[Any, Any]]]:
    """``{(task, judge A, judge B): [(run A, run B) per model]}`` among a report's runs (``ReportRun``s):
    the same task, model and predictions scored by two judges (the first two judges, by name)."""
    groups: dict[tuple, dict[str, Any]] = {}
    for r in runs:
        scores = r.run.scores
        if scores["task"] == "vqa" or scores["judge"]["kind"] == "none":
            continue
        key = (scores["task"], scores["model"], scores["predictions"])
        groups.setdefault(key, {}).setdefault(judge_label(r.run), r)
    found: dict[tuple[str, str, str], list[tuple[Any, Any]]] = {}
    for (task, _, _), judges in groups.items():
        if len(judges) >= 2:
            (label_a, a), (label_b, b) = sorted(judges.items())[:2]
            found.setdefault((task, label_a, label_b), []).append((a, b))
    return found


def agreement_tables(runs: list[Any], resamples: int = 2000, seed: int = 0) -> list[Table]:
    """One table per task and pair of judges: each model's categories and overall."""
    tables = []
    for (task, label_a, label_b), pairs in report_pairs(runs).items():
        result = compare_judges([(a.run, b.run) for a, b in pairs], resamples, seed)
        table = Table(
            f"Judge agreement, {task}: A = {label_a}, B = {label_b}",
            ["Model", "Category", "Units", "Kappa [95% CI]", "Flipped %", "Score A", "Score B", "B - A"],
            [],
            note="Cohen's kappa on the units both judges judged, 95% interval resampling images; flipped: "
            "verdicts that differ. Scores: % of those units judged right.",
            best_columns=set(),
        )
        for (a, _), table_of_model in zip(pairs, result["models"].values()):
            for name, row in table_of_model["rows"].items():
                ci = row["kappa_interval"]
                table.rows.append(
                    [
                        Cell(a.label),
                        Cell(name),
                        Cell(str(row["units"])),
                        Cell(_num(row["kappa"], 3) + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")),
                        Cell(_num(row["flipped"])),
                        Cell(_num(row["score_a"])),
                        Cell(_num(row["score_b"])),
                        Cell(_num(row["move"])),
                    ]
                )
        if "ranking" in result:
            ci = result["ranking"]["tau_interval"]
            table.note += (
                f" Kendall's tau of the {len(pairs)} models' order under A and B: {_num(result['ranking']['tau'], 3)}"
                + (f" [{ci[0]:.3f}, {ci[1]:.3f}]." if ci else ".")
            )
        tables.append(table)
    return tables


def agreement_charts(runs: list[Any], out: Path, resamples: int = 2000, seed: int = 0) -> list[tuple[Path, str]]:
    """Kappa (x100) per category, one bar per model, interval whiskers."""
    made = []
    for (task, label_a, label_b), pairs in report_pairs(runs).items():
        result = compare_judges([(a.run, b.run) for a, b in pairs], resamples, seed)
        groups = list(next(iter(result["models"].values()))["rows"])
        series = []
        for (a, _), table in zip(pairs, result["models"].values()):
            rows = [table["rows"].get(g) or {} for g in groups]
            series.append(
                charts.Series(
                    a.label,
                    [None if r.get("kappa") is None else 100 * r["kappa"] for r in rows],
                    [[100 * x for x in r["kappa_interval"]] if r.get("kappa_interval") else None for r in rows],
                )
            )
        path = charts.grouped_bars(
            out / f"judge_agreement_{task}.png",
            f"Judge agreement ({task}): {label_a} vs {label_b}",
            groups,
            series,
            charts.model_colours([s.label for s in series]),
            ylabel="Cohen's kappa x 100",
            note="Whiskers: 95% interval resampling images. Below 0 (worse than chance) is drawn at 0. "
            "'not scored': kappa undefined (both judges gave one verdict to every unit).",
        )
        made.append(
            (path, f"Agreement of {label_a} and {label_b} on the same {task} predictions: Cohen's kappa x 100.")
        )
    return made
