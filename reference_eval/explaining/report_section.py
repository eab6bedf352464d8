"""``cogbench report``'s section on two runs of one model: why their numbers differ, as ``explain`` says it.

Runs of one task by one model (the model ``scores.json`` names: two judges, two parsing modes, two builds
of the same predictions) are explained pairwise, the first given (A) against each later one (B). Per
headline metric (those the Hub's benchmark tasks publish, ``schemas.vocabulary.BENCHMARK_TASKS``) the
overall B - A split into the pipeline stages, then the items assigned to each stage. ``reports/cli``
hands ``explain_tables`` to ``runs.write_report`` when the command runs: the reports room sits below this one.
"""

from __future__ import annotations

import shlex

from cogbench.numbers import fixed
from cogbench.reference_eval.explaining.explain import Explanation, explain_runs, stage_note
from cogbench.reference_eval.explaining.stages import STAGES
from cogbench.reference_eval.reports.report_runs import ReportRun
from cogbench.reference_eval.reports.tables import Cell, Table
from cogbench.schemas.vocabulary import BENCHMARK_TASKS

SHOWN_ITEMS = 8  # item ids named per stage; `cogbench explain` lists them all


def headline_metrics(task: str) -> list[str]:
    return [metric for config, metric in BENCHMARK_TASKS.values() if config == task]


def _number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    text = fixed(value, 2, sign=signed)
    return text.replace("+0.00", "0.00").replace("-0.00", "0.00") if signed else text


def _items(items: list[str]) -> str:
    shown = ", ".join(f"`{item}`" for item in items[:SHOWN_ITEMS])
    return shown + (f" and {len(items) - SHOWN_ITEMS} more" if len(items) > SHOWN_ITEMS else "")


def explain_table(explanation: Explanation, a: ReportRun, b: ReportRun) -> Table:
    """One pair's headline metrics, overall, as shares of the stages; the items behind them in the note."""
    rows = []
    for name in headline_metrics(explanation.task):
        row = explanation.metrics.get(name, {}).get("overall")
        if row is None:
            continue
        shares = row["shares"] or {}
        rows.append(
            [
                Cell(name),
                Cell(_number(row["a"])),
                Cell(_number(row["b"])),
                Cell(_number(row["difference"], True)),
                *(Cell(_number(shares.get(stage), True) if shares else "-") for stage in STAGES),
            ]
        )
    stages = [
        f"{stage}: {len(explanation.assigned[stage])} item(s) ({_items(explanation.assigned[stage])})"
        for stage in STAGES
        if explanation.assigned[stage]
    ]
    notes = [f"{stage}: {note}" for stage in STAGES if (note := stage_note(explanation, stage))]
    folders = shlex.join([str(a.run.folder), str(b.run.folder)])
    note = (
        f"A: {a.legend}; B: {b.legend}. Each item goes to the first stage, in pipeline order, where its two scorings "
        "differ; the shares add up to B - A (docs/explain.md states the rule). Items behind the difference: "
        + ("; ".join(stages) if stages else "none")
        + "."
        + "".join(f" {line}." for line in notes)
        + f" Every metric and category, with items side by side: `cogbench explain {folders}`"
    )
    # named by the runs: a model's first run against each later one gives one section each (issue 48 item 9l)
    title = (
        f"Why two runs of {explanation.a['model']} differ ({explanation.task}), A {a.label} and B {b.label}: "
        "B - A by pipeline stage"
    )
    return Table(
        title, ["Metric", "A", "B", "B - A", *STAGES], rows, note=note, best_columns=set(), numbers_from_second=True
    )


def explain_tables(runs: list[ReportRun]) -> list[Table]:
    """Per task and model with two or more runs: the first run against each later one."""
    groups: dict[tuple[str, str], list[ReportRun]] = {}
    for run in runs:
        groups.setdefault((run.task, run.run.scores["model"]), []).append(run)
    tables = []
    for members in groups.values():
        first = members[0]
        for other in members[1:]:
            explanation = explain_runs(first.run, other.run, (first.label, other.label))
            tables.append(explain_table(explanation, first, other))
    return tables
