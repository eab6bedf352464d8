"""The people's-labels figures as Markdown: ``judges validate``'s output and the certificate's human anchor.

Every figure comes from ``human_anchor``; nothing is computed here. Every line says what sample it
is over (units, images, which task), since the labelled units are a sample of the runs' units.
"""

from __future__ import annotations

from typing import Any

from cogbench.errors import shown
from cogbench.numbers import fixed
from cogbench.reference_eval.metrics.human_agreement import MIN_IMAGES, MIN_RARER


def _value(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else fixed(value, digits)


def _interval(value: list[float] | None, digits: int = 3) -> str:
    return f"[{fixed(value[0], digits)}, {fixed(value[1], digits)}]" if value else "n/a"


def sample_line(task: str, sample: dict[str, Any]) -> str:
    """What the people labelled, and what was left out."""
    return (
        f"{task}: a sample of {sample['units_labelled']} labelled units ({sample['units_shared']} labelled twice, "
        f"{sample['units_adjudicated']} of them differing), {sample['models']} model(s)' answers, labellers "
        f"{', '.join(sample['labellers'])}; {sample['units']} units over {sample['images']} images have a people's "
        f"label; {sample['excluded_disagreement']} left out (A and B differ, no adjudicator's label)."
    )


def _confusion(matrix: list[list[int]]) -> str:
    return f"wrong: {matrix[0][0]}/{matrix[0][1]}; right: {matrix[1][0]}/{matrix[1][1]}"


def agreement_table(columns: dict[str, dict[str, Any]], judge: bool = True) -> list[str]:
    """Per category and overall: units, images, kappa, AC1, PABAK (with intervals); the judge's constants too."""
    head = "| category | units | images | kappa | 95% CI | AC1 | 95% CI | PABAK | 95% CI | right % (people) |"
    rule = "|---|---|---|---|---|---|---|---|---|---|"
    if judge:
        head += " right % (judge) | AC1 always right | AC1 always wrong | AC1 margin | confusion (rows: people; columns: judge wrong/right) |"
        rule += "---|---|---|---|---|"
    lines = [head, rule]
    for column, row in columns.items():
        if not row["units"]:
            continue
        cells = [column, str(row["units"]), str(row["images"])]
        for name in ("kappa", "ac1", "pabak"):
            cells += [_value(row[name]), _interval(row[f"{name}_interval"])]
        cells.append(_value(None if row["prevalence_human"] is None else 100 * row["prevalence_human"], 1))
        if judge:
            cells.append(_value(None if row["prevalence_judge"] is None else 100 * row["prevalence_judge"], 1))
            cells += [_value(row["always_right_ac1"]), _value(row["always_wrong_ac1"]), _value(row["ac1_margin"])]
            cells.append(_confusion(row["confusion"]))
        lines.append("| " + " | ".join(cells) + " |")
    missing = [column for column, row in columns.items() if row["units"] and row["no_interval"]]
    if missing:
        overall = columns.get("overall", {}).get("no_interval")
        lines += [
            "",
            f"No interval in {len(missing)} of the rows: each needs {MIN_IMAGES} images and {MIN_RARER} units of the "
            f"rarer label" + (f" (overall: {overall})." if overall else "."),
        ]
    return lines


def judge_lines(figures: dict[str, Any]) -> list[str]:
    """One judge against the people's labels: counts, the table, its parse failures and the ranking."""
    failures = figures["parse_failures"]
    lines = [
        f"Judge {shown(figures['judge'])}: {figures['units']} labelled units over {figures['images']} images "
        f"({figures['no_verdict_labelled']} labelled units with no verdict left out); no verdict on "
        f"{failures['no_verdict']} of its {failures['units']} units in the runs ({_value(failures['share'], 2)}%).",
        "",
    ]
    lines += agreement_table(figures["agreement"]) if figures["agreement"] else ["No labelled unit was judged."]
    tau = figures["ranking"]
    if tau:
        models = ", ".join(f"{shown(m)} ({n} units)" for m, n in zip(tau["models_in_order"], tau["units_per_model"]))
        lines += [
            "",
            f"Models ranked by the people and by the judge, on the labelled units ({models}): Kendall's tau-b "
            f"{_value(tau['tau'])}, 95% CI {_interval(tau['interval'])}, p {_value(tau['p_value'], 4)}.",
        ]
    return lines


def human_human_lines(people: dict[str, Any]) -> list[str]:
    if not people["agreement"]:
        return ["People against people: no unit was labelled by both A and B."]
    return [
        f"People against people (A and B on the {people['units']} shared units, {people['images']} images):",
        "",
        *agreement_table(people["agreement"], judge=False),
    ]


def render_validation(result: dict[str, Any]) -> str:
    """``judges validate``'s Markdown: per task the sample, people against people, each judge."""
    lines = ["# Judges against people's labels", "", f"Method: {result['method']}.", ""]
    for task in result["tasks"]:
        lines += [f"## {task['task']}", "", sample_line(task["task"], task["sample"]), ""]
        lines += [*human_human_lines(task["human_human"]), ""]
        for figures in task["judges"]:
            lines += [*judge_lines(figures), ""]
    return "\n".join(lines)


def anchor_section(task: str, anchor: dict[str, Any]) -> list[str]:
    """The certificate's human anchor of one task."""
    lines = ["### Against people's labels (the human anchor)", ""]
    if anchor["sample"] is None:
        return [*lines, "No people's labels of this task's answers."]
    lines += [sample_line(task, anchor["sample"]), "", *human_human_lines(anchor["human_human"]), ""]
    lines += judge_lines(anchor["judge"]) if anchor["judge"] else ["The candidate judged none of the labelled units."]
    return lines
