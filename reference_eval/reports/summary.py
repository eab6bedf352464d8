"""The one-screen table `score` and `eval` print at the end: metrics as columns, categories as rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogbench.numbers import fixed
from cogbench.reference_eval.metrics.captioning import CAPTIONING_METRICS, COLUMN_LABEL
from cogbench.reference_eval.run.completeness import (
    coverage_label,
    run_labels,
    scale_text,
    shown_value,
    unscored_text,
)
from cogbench.schemas.vocabulary import CATEGORY_LABEL


def _cell(value: float | None) -> str:
    return "-" if value is None else fixed(value)


def render_summary(scores: dict[str, Any], out: Path) -> str:
    metrics = scores["metrics"]
    judge = scores["judge"]
    judge_text = judge["kind"] + (
        f":{judge['model']} ({judge.get('parsing', 'tolerant')} parsing)" if judge.get("model") else ""
    )
    state = " · ".join(run_labels(scores)) or "complete"
    lines = [f"{scores['task']} · {scores['model']} · judge {judge_text} · {state}"]
    names = list(metrics)
    categories = list(dict.fromkeys(c for m in metrics.values() for c in m["per_category"]))
    labels = {c: CATEGORY_LABEL.get(c, c) for c in categories}
    first = max([len("Overall"), *(len(label) for label in labels.values())])
    widths = [max(7, len(name)) for name in names]
    lines.append(" " * first + "  " + "  ".join(name.rjust(w) for name, w in zip(names, widths)))
    for category in categories:
        cells = [_cell(metrics[n]["per_category"].get(category)) for n in names]
        lines.append(labels[category].ljust(first) + "  " + "  ".join(c.rjust(w) for c, w in zip(cells, widths)))
    overall = [_cell(shown_value(metrics[n])) + ("*" if metrics[n].get("partial") else "") for n in names]
    lines.append("Overall".ljust(first) + "  " + "  ".join(c.rjust(w) for c, w in zip(overall, widths)))
    counted = [
        f"{n} {m['judged']}/{m['denominator']} {m['unit']}" + (f", {unscored_text(m)}" if "unscored" in m else "")
        for n, m in metrics.items()
        if "judged" in m
    ]
    if counted:
        lines.append("counted: " + "; ".join(counted))
    lines += partial_lines(scores)
    caption = (scores.get("analyses") or {}).get("captioning")
    if caption:
        numbers = ", ".join(f"{COLUMN_LABEL[m]} {fixed(caption['scores'][m], 3)}" for m in CAPTIONING_METRICS)
        lines.append(
            f"captioning (CogBench Appendix E, Table 7; {caption['items']} descriptions, {caption['mode']}): {numbers}"
        )
    comparison = judge.get("parsing_comparison")
    if comparison:
        numbers = ", ".join(f"{k} {_cell(v)}{scale_text(v)}" for k, v in comparison["metrics"].items())
        lines.append(
            f"{comparison['mode']} parsing reads {comparison['differing_verdicts']} verdict(s) differently: {numbers}"
        )
    lines.append(f"wrote {out / 'scores.json'}, details.jsonl and report.md")
    return "\n".join(lines)


def partial_lines(scores: dict[str, Any]) -> list[str]:
    """Why numbers are partial, in the metrics' own units: ``PARTIAL (5/64 questions): accuracy 40.0*, ...``."""
    metrics = scores["metrics"]
    by_label: dict[str, list[str]] = {}
    for name, metric in metrics.items():
        if metric.get("partial"):
            by_label.setdefault(coverage_label(metric), []).append(f"{name} {_cell(shown_value(metric))}")
    lines = [
        f"{label}: {', '.join(values)} (* counted on these units only, not the config's score)"
        for label, values in by_label.items()
    ]
    missing = scores["counts"].get("missing_predictions") or []
    if missing:
        unit = {"codis": "queries", "description": "images"}.get(
            scores["task"], "responses" if scores.get("circular") else "questions"
        )
        lines.append(f"  {len(missing)} {unit} of the config have no prediction and were not scored")
    failed = {m["unit"]: m["failed"] for m in metrics.values() if m.get("failed")}
    if failed:
        lines.append("  without a verdict (failures): " + ", ".join(f"{n} {unit}" for unit, n in failed.items()))
    return lines
