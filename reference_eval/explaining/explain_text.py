"""``explain``'s output: Markdown for people, ``--json`` for programs; both say the attribution rule."""

from __future__ import annotations

import json
from typing import Any

from cogbench.numbers import fixed
from cogbench.reference_eval.explaining.explain import RULE, Explanation, stage_note
from cogbench.reference_eval.explaining.stages import STAGES, shown_fields

SHOWN = 3  # items shown side by side per stage


def as_json(explanation: Explanation) -> dict[str, Any]:
    return {
        "task": explanation.task,
        "a": explanation.a,
        "b": explanation.b,
        "rule": RULE,
        "stages": {
            stage: {
                "assigned": explanation.assigned[stage],
                "listed": explanation.listed[stage],
                "not_recorded": stage_note(explanation, stage) or None,
            }
            for stage in STAGES
        },
        "metrics": explanation.metrics,
        "contributions": explanation.contributions,
    }


def _number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    text = fixed(value, 2, sign=signed)
    return "0.00" if text in ("+0.00", "-0.00") and signed else text


def _label(run: dict[str, Any]) -> str:
    labels = f" **{' '.join(run['labels'])}**" if run["labels"] else (" **PARTIAL**" if run["partial"] else "")
    return f"{run['model']} (`{run['run']}`, {run['items']} items){labels}"


def as_markdown(explanation: Explanation) -> str:
    lines = [
        f"# Why B differs from A ({explanation.task})",
        "",
        f"- A: {_label(explanation.a)}",
        f"- B: {_label(explanation.b)}",
        "",
        f"Rule: {RULE}.",
        "",
    ]
    for name, columns in explanation.metrics.items():
        lines += [f"## {name}", "", "| column | A | B | B - A | " + " | ".join(STAGES) + " |"]
        lines.append("|" + "---|" * (4 + len(STAGES)))
        for column, row in columns.items():
            shares = row["shares"] or {}
            cells = [_number(shares.get(stage), True) if shares else "-" for stage in STAGES]
            lines.append(
                f"| {column} | {_number(row['a'])} | {_number(row['b'])} | {_number(row['difference'], True)} | "
                + " | ".join(cells)
                + " |"
            )
        lines.append("")
    lines += ["## Stages", ""]
    for stage in STAGES:
        assigned, listed = explanation.assigned[stage], explanation.listed[stage]
        note = stage_note(explanation, stage)
        lines.append(
            f"- **{stage}**: {len(assigned)} item(s) assigned here, {len(listed)} differing here"
            + (f" ({_ids(listed)})" if listed else "")
            + (f"; {note}" if note else "")
        )
    lines.append("")
    for stage in STAGES:
        assigned = explanation.assigned[stage]
        if not assigned:
            continue
        lines += [f"### {stage}: side by side (first {min(SHOWN, len(assigned))} of {len(assigned)})", ""]
        for item in _most_moved(explanation, assigned)[:SHOWN]:
            a = shown_fields(explanation.task, explanation.details_a.get(item))
            b = shown_fields(explanation.task, explanation.details_b.get(item))
            lines.append(f"- item `{item}`:")
            for answer in sorted(set(a) | set(b)):
                for key in ("gold", "prompt_sha256", "output", "refusal", "parsed", "verdict"):
                    x, y = (a.get(answer) or {}).get(key), (b.get(answer) or {}).get(key)
                    if x != y:
                        lines.append(f"  - {answer} {key}: A {_short(x)} / B {_short(y)}")
        lines.append("")
    return "\n".join(lines)


def _most_moved(explanation: Explanation, items: list[str]) -> list[str]:
    """Items in order of how far they moved the first metric's overall number."""
    first = next(iter(explanation.contributions.values()), {})
    return sorted(items, key=lambda item: (-abs(first.get(item, 0.0)), item))


def _ids(items: list[str], limit: int = 10) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return "`" + (text if len(text) <= limit else text[: limit - 3] + "...") + "`"
