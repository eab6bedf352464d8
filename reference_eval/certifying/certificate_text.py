"""The certificate as Markdown for people, and as a short block for a dataset or model card.

Every figure comes from ``certify``'s result; nothing is computed here. Each bar is named
with its source, so a reader can tell the papers' figures from the conventions.
"""

from __future__ import annotations

from typing import Any

from cogbench import __version__
from cogbench.errors import shown
from cogbench.numbers import fixed
from cogbench.reference_eval.certifying.anchor_text import anchor_section, sample_line
from cogbench.reference_eval.judges.retirement import paper_judge_text


def _value(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else fixed(value, digits)


def _interval(value: list[float] | None, digits: int = 2) -> str:
    return f"[{fixed(value[0], digits)}, {fixed(value[1], digits)}]" if value else "n/a"


def _confusion(row: dict[str, Any], labels: list[int]) -> str:
    """``ref 0: 10/2; ref 1: 1/30`` (the candidate's verdicts in label order after each slash)."""
    return "; ".join(
        f"ref {label}: {'/'.join(str(n) for n in counts)}" for label, counts in zip(labels, row["confusion"])
    )


def _cell(text: str) -> str:
    """Text in a Markdown table cell: its own pipes (``|difference|``) escaped, so they split no cell."""
    return text.replace("|", "\\|")


def criteria_table(task: dict[str, Any]) -> list[str]:
    lines = ["| criterion | value | bar | result | note |", "|---|---|---|---|---|"]
    for c in task["criteria"]:
        value = _value(c["value"], 3 if c["name"] != "difference" else 2)
        result = "pass" if c["passed"] else "FAIL"
        lines.append(f"| {_cell(c['what'])} | {value} | {c['bar']} | {result} | {_cell(c['detail'])} |")
    return lines


def anchor_lines(task: dict[str, Any]) -> list[str]:
    """The human anchor's sample in one line (certify with people's labels), for the card and the report."""
    anchor = task.get("human_anchor")
    if anchor is None:
        return []
    if anchor["sample"] is None:
        return ["Human anchor: no people's labels of this task's answers.", ""]
    return ["Human anchor: " + sample_line(task["task"], anchor["sample"]), ""]


def render_certificate(result: dict[str, Any]) -> str:
    """The whole certificate: the verdict, the bars and their sources, then per task every figure."""
    lines = [
        f"# Judge certificate: {result['status']}",
        "",
        f"Candidate judge: {shown(result['candidate_judge'])}",
        f"Reference judge: {'; '.join(shown(judge) for judge in result['reference_judges'])}",
        f"Method: {result['method']}.",
        "",
        "Bars (PASS needs every one, in every task):",
        "",
    ]
    lines += [f"- {b['name']} = {b['value']}: {b['source']}." for b in result["bars"]]
    for task in result["tasks"]:
        lines += [
            "",
            f"## {task['task']}: {task['status']}",
            "",
            f"{len(task['models'])} model(s), {task['images']} images, verdict labels {task['labels']}.",
            "",
            *criteria_table(task),
            "",
            "### Agreement per category (every model's verdicts pooled)",
            "",
            "| category | units | raw agreement % | kappa | 95% CI | right % (reference) | right % (candidate) "
            "| confusion (rows: reference; columns: candidate) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for column, row in task["agreement"].items():
            if row["items"]:
                lines.append(
                    f"| {column} | {row['items']} | {_value(row['raw_agreement'], 1)} | {_value(row['kappa'])} "
                    f"| {_interval(row['interval'])} | {_value(row['prevalence_reference'], 1)} "
                    f"| {_value(row['prevalence_candidate'], 1)} | {_confusion(row, task['labels'])} |"
                )
        lines += [
            "",
            f"### Scores per model (candidate - reference; paired interval over images at {fixed(100 * task['difference_level'], 2)}%, "
            "95% for all models together)",
            "",
            "| model | units | kappa | raw agreement % | metric | column | reference | candidate | difference | 95% CI |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for m in task["models"]:
            for name, rows in m["moves"].items():
                for r in rows:
                    lines.append(
                        f"| {_cell(shown(m['model']))} | {m['units']} | {_value(m['kappa'])} | {_value(m['raw_agreement'], 1)} "
                        f"| {name} | {r['column']} | {_value(r['reference'])} | {_value(r['candidate'])} "
                        f"| {_value(r['difference'])} | {_interval(r['interval'])} |"
                    )
        if "human_anchor" in task:
            lines += ["", *anchor_section(task["task"], task["human_anchor"])]
        if task["ranking"]:
            lines += [
                "",
                "### Rankings",
                "",
                "| metric | models | Kendall's tau-b | 95% CI | p |",
                "|---|---|---|---|---|",
            ]
            for name, tau in task["ranking"].items():
                lines.append(
                    f"| {name} | {tau['models']} | {_value(tau['tau'], 3)} | {_interval(tau['interval'])} "
                    f"| {_value(tau['p_value'], 4)} |"
                )
    return "\n".join(lines) + "\n"


def render_card_block(result: dict[str, Any]) -> str:
    """A short Markdown section for a dataset or model card: the verdict, each criterion, the bars' sources."""
    replaced = "; ".join(dict.fromkeys(paper_judge_text(task["task"]) for task in result["tasks"]))
    lines = [
        "## Judge",
        "",
        f"Scores judged by **{shown(result['candidate_judge'])}**, in place of {replaced}; certified against the verdicts "
        f"of {'; '.join(shown(judge) for judge in result['reference_judges'])}. Migration certificate (cogbench {__version__}, "
        f"`cogbench judges certify`): **{result['status']}**.",
        "",
    ]
    for task in result["tasks"]:
        lines += [f"{task['task']}: {len(task['models'])} model(s), {task['images']} images.", ""]
        lines += [*criteria_table(task), ""]
        lines += anchor_lines(task)
    lines += ["Bars and their sources:", ""]
    lines += [f"- {b['name']} = {b['value']}: {b['source']}." for b in result["bars"]]
    return "\n".join(lines) + "\n"
