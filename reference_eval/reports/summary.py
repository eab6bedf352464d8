"""The one-screen table `score` and `eval` print at the end: metrics as columns, categories as rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogbench.reference_eval.metrics.captioning import CAPTIONING_METRICS, COLUMN_LABEL
from cogbench.schemas.features import CATEGORY_LABEL


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def render_summary(scores: dict[str, Any], out: Path) -> str:
    metrics = scores["metrics"]
    judge = scores["judge"]
    judge_text = judge["kind"] + (f":{judge['model']} ({judge.get('parsing', 'tolerant')} parsing)" if judge.get("model") else "")
    state = "complete" if scores.get("complete", True) else "PARTIAL"
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
    overall = [_cell(metrics[n]["overall"]) for n in names]
    lines.append("Overall".ljust(first) + "  " + "  ".join(c.rjust(w) for c, w in zip(overall, widths)))
    counted = [f"{n} {m['judged']}/{m['denominator']} {m['unit']}" for n, m in metrics.items() if "judged" in m]
    if counted:
        lines.append("counted: " + "; ".join(counted))
    partial = [f"{n} on the judged subset only: {_cell(m.get('overall_partial'))}" for n, m in metrics.items()
               if m.get("partial")]
    if partial:
        lines.append("PARTIAL: " + "; ".join(partial))
    missing = scores["counts"].get("missing_predictions") or []
    if missing:
        lines.append(f"PARTIAL: {len(missing)} dataset item(s) without a prediction were not scored")
    caption = (scores.get("analyses") or {}).get("captioning")
    if caption:
        numbers = ", ".join(f"{COLUMN_LABEL[m]} {caption['scores'][m]:.3f}" for m in CAPTIONING_METRICS)
        lines.append(f"captioning (CogBench Appendix E, Table 7; {caption['items']} descriptions, {caption['mode']}): {numbers}")
    comparison = judge.get("parsing_comparison")
    if comparison:
        numbers = ", ".join(f"{k} {_cell(v)}" for k, v in comparison["metrics"].items())
        lines.append(f"{comparison['mode']} parsing reads {comparison['differing_verdicts']} verdict(s) differently: {numbers}")
    lines.append(f"wrote {out / 'scores.json'}, details.jsonl and report.md")
    return "\n".join(lines)
