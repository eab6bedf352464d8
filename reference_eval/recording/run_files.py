"""The run folder of ``cogbench score``: scores.json (checked against its schema),
details.jsonl (one line per scored item) and report.md (tables laid out like the
papers': CogBench Tables 2, 3 and 5, CODIS Table 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.writes import locked_folder, remove_temporaries, write_file
from cogbench.numbers import fixed
from cogbench.reference_eval.recording.file_names import LEGACY_TEMPORARIES, RUN_FILES
from cogbench.reference_eval.recording.panel_text import render_panel
from cogbench.reference_eval.recording.run_kind import MODE_LABEL, description_mode, judge_identity, judge_name
from cogbench.reference_eval.recording.run_reader import schema
from cogbench.reference_eval.run.completeness import (
    SCALE_LABEL,
    coverage_label,
    run_labels,
    scale_text,
    shown_value,
    unscored_text,
)
from cogbench.reference_eval.scoring.analyses import render as render_analyses
from cogbench.schemas.vocabulary import CATEGORY_LABEL, CODIS_CATEGORIES, COGBENCH_CATEGORIES

# Column headings of CODIS Table 3.
CODIS_SHORT = {
    "Location and Orientation": "Loc & Ori",
    "Temporal Information": "Temporal",
    "Cultural Background": "Cultural",
    "Attributes": "Attributes",
    "Relationships": "Relationships",
}


def scores_schema() -> dict[str, Any]:
    return schema("scores.schema.json")


def write_run(out: Path, scores: dict[str, Any], details: list[dict[str, Any]]) -> None:
    import jsonschema

    jsonschema.validate(scores, scores_schema())
    with locked_folder(out):  # one score writes at a time: a killed one's temporaries are cleaned, a running one's kept
        remove_temporaries(out, RUN_FILES, LEGACY_TEMPORARIES)
        write_file(out / "details.jsonl", "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in details))
        write_file(out / "report.md", render_report(scores))
        write_file(out / "scores.json", json.dumps(scores, indent=2, ensure_ascii=False) + "\n")


def _cell(value: float | None) -> str:
    return "-" if value is None else fixed(value)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def render_report(scores: dict[str, Any]) -> str:
    metrics, counts, model = scores["metrics"], scores["counts"], scores["model"]
    parts = [
        f"# {scores['task']} scores: {model}\n",
        f"Dataset `{scores['dataset']}` at `{scores['dataset_revision']}`; predictions `{scores['predictions']}`; "
        f"judge `{judge_name(scores)}`"
        + (f" ({judge_identity(scores)[2]} parsing)" if judge_identity(scores)[2] else "")
        + (f"; description mode: {MODE_LABEL[description_mode(scores)]}" if scores["task"] == "description" else "")
        + ". Numbers are % (0-100).\n",
    ]
    parts += coverage_paragraph(scores)
    if scores["task"] == "description":
        parts.append("## Recognition Score (CogBench Table 2)\n")
        parts.append(
            _table(
                ["Model", "Recognition Score (micro)", "macro"],
                [
                    [
                        model,
                        _cell(metrics["recognition_micro"]["overall"]),
                        _cell(metrics["recognition_macro"]["overall"]),
                    ]
                ],
            )
        )
        parts.append(
            f"\n{counts.get('entities_recognized', 0)} of {counts.get('entities', 0)} annotated entities recognised.\n"
        )
        if "cognition" in metrics:
            cognition = metrics["cognition"]
            parts.append("\n## Cognition Score (CogBench Table 3)\n")
            parts.append(
                _table(
                    ["Model", *(CATEGORY_LABEL[c] for c in COGBENCH_CATEGORIES), "Overall"],
                    [
                        [
                            model,
                            *(_cell(cognition["per_category"].get(c)) for c in COGBENCH_CATEGORIES),
                            _cell(cognition["overall"]) + scale_text(cognition["overall"]),
                        ]
                    ],
                )
            )
            parts.append(
                f"\n{counts['cors_judged']} of {counts['cors']} CoRs judged; judge failures: {counts['judge_failures']}"
                + _beside(unscored_text(cognition))
                + ".\n"
            )
    elif scores["task"] == "vqa":
        parts.append("## VQA accuracy (CogBench Table 5)\n")
        parts.append(
            _table(
                ["Model", "Extractor", *(CATEGORY_LABEL[c] for c in COGBENCH_CATEGORIES), "Overall"],
                [
                    [
                        model,
                        label,
                        *(_cell(metrics[name]["per_category"].get(c)) for c in COGBENCH_CATEGORIES),
                        _cell(metrics[name]["overall"]),
                    ]
                    for name, label in (("accuracy", "robust"), ("accuracy_official", "official"))
                ],
            )
        )
        parts.append(
            f"\nUnparseable responses (counted wrong): robust {counts['unparseable']}, "
            f"official {counts['unparseable_official']} of {counts['items']}.\n"
        )
    else:
        header = ["Model"]
        for category in CODIS_CATEGORIES:
            header += [f"{CODIS_SHORT[category]} Acc_p", f"{CODIS_SHORT[category]} Acc_q"]
        header += ["Overall Acc_p", "Overall Acc_q", "Context Awareness"]
        row = [model]
        for category in CODIS_CATEGORIES:
            row += [
                _cell(metrics["acc_p"]["per_category"].get(category)),
                _cell(metrics["acc_q"]["per_category"].get(category)),
            ]
        row += [
            _cell(metrics["acc_p"]["overall"]),
            _cell(metrics["acc_q"]["overall"]),
            _cell(metrics["context_awareness"]["overall"]),
        ]
        parts.append("## CODIS (CODIS Table 3)\n")
        parts.append(_table(header, [row]))
        parts.append(
            f"\nJudge failures: {counts['judge_failures']} of {counts['queries']} queries"
            + _beside(unscored_text(metrics["acc_q"]))
            + (
                f"; on image variants: {counts['variant_judge_failures']} of {counts['variant_queries']} queries"
                if "variant_queries" in counts
                else ""
            )
            + ".\n"
        )
        if scores["judge_agreement"] is not None:
            parts.append(f"Agreement of the LLM judge with the rule judge: {_cell(scores['judge_agreement'])}%.\n")
    if scores.get("analyses"):
        parts.append("\n" + render_analyses(scores))
    judge = scores["judge"]
    if judge["kind"] == "openai":
        parts.append(judge_line(judge))
    if scores.get("panel"):
        parts.append(render_panel(scores))
    comparison = judge.get("parsing_comparison")
    if comparison:
        numbers = ", ".join(
            f"{name} {_cell(value)}{scale_text(value)}" for name, value in comparison["metrics"].items()
        )
        parts.append(
            f"Judge replies read with `{judge.get('parsing')}` parsing; `{comparison['mode']}` parsing reads "
            f"{comparison['differing_verdicts']} verdict(s) differently and gives {numbers}.\n"
        )
    missing, unknown = counts["missing_predictions"], counts["unknown_predictions"]
    if missing or unknown:
        parts.append(
            f"\n**Partial run**: {len(missing)} item(s) without prediction, {len(unknown)} unknown prediction(s) ignored.\n"
        )
    if scores.get("intervals"):
        parts.append(render_intervals(scores))
    return "\n".join(parts)


def _beside(unscored: str) -> str:
    """The replies constrained parsing left unscored, beside the judge failures (they are neither)."""
    return f"; {unscored}" if unscored else ""


def judge_line(judge: dict[str, Any]) -> str:
    """An ``openai`` judge's cost line (prompts, cache hits, HTTP requests, tokens) from what its block states:
    the schema requires only ``kind``, so a scores.json written by another tool (or an older cogbench) may
    lack any count or ``usage``."""
    counts = [
        f"{judge[key]} {label}"
        for key, label in (("prompts", "prompts"), ("cache_hits", "from cache"), ("calls", "HTTP requests"))
        if key in judge
    ]
    # Its failures are not repeated here: the task's section gives them once, in its own units (queries,
    # CoRs), beside the replies constrained parsing left unscored.
    usage = judge.get("usage") or {}
    tokens = [
        f"{usage[key]} {label}"
        for key, label in (("prompt_tokens", "in"), ("completion_tokens", "out"))
        if key in usage
    ]
    text = f"\nJudge `{judge.get('model', 'openai')}`" + (f": {', '.join(counts)}" if counts else "")
    return text + (f"; tokens {', '.join(tokens)}" if tokens else "") + ".\n"


def coverage_paragraph(scores: dict[str, Any]) -> list[str]:
    """The report's first word on what the numbers cover: PARTIAL metrics (with their subset values) and SAMPLE."""
    labels = run_labels(scores)
    if not labels:
        return []
    partial = [
        f"`{name}` {coverage_label(m)}: {_cell(shown_value(m))} on those units"
        for name, m in scores["metrics"].items()
        if m.get("partial")
    ]
    text = f"**{' · '.join(labels)}**: "
    if partial:
        text += (
            "these metrics were counted on a subset of the config, so their overall numbers are left out "
            "of the tables (shown as -): " + "; ".join(partial) + ". "
        )
    over = [name for name, m in scores["metrics"].items() if m.get("exceeds_scale")]
    if over:
        text += (
            f"`{'`, `'.join(over)}` {SCALE_LABEL}: official parsing counts a judge verdict `[2]` as 2, as the "
            "authors' cognition_score.py sums it, so these numbers are not percentages of the CoRs. "
        )
    if any(label.startswith("SAMPLE") for label in labels):
        text += "The dataset build is not the full release the papers score (CogBench Table 1, CODIS Section 3); "
        text += "its numbers are not comparable with published ones."
    return [text + "\n"]


def interval_text(value: float | None, interval: list[float] | None, clusters: int | None = None) -> str:
    """ "52.3 [48.1, 56.0]": a value with its confidence interval; "n/a (1 image)" where one image has no spread."""
    if value is None:
        return "-"
    if not interval and clusters == 1:
        return f"{fixed(value)} [n/a (1 image)]"
    return fixed(value) + (f" [{fixed(interval[0])}, {fixed(interval[1])}]" if interval else "")


def metric_interval(metric: dict[str, Any], category: str | None = None) -> tuple[list[float] | None, int | None]:
    """(interval, images behind it) of a metric's overall value or of one category."""
    interval = metric.get("interval") or {}
    clusters = interval.get("clusters") or {}
    if category is None:
        return interval.get("overall"), clusters.get("overall")
    return (interval.get("per_category") or {}).get(category), (clusters.get("per_category") or {}).get(category)


def render_intervals(scores: dict[str, Any]) -> str:
    """The section listing every metric with its 95% interval, overall and per category."""
    settings = scores["intervals"]
    categories = CODIS_CATEGORIES if scores["task"] == "codis" else COGBENCH_CATEGORIES
    # Only the categories some metric has (the Recognition Score has none): no column empty all the way down.
    categories = [c for c in categories if any(c in m["per_category"] for m in scores["metrics"].values())]
    header = ["Metric", "Overall", *(CODIS_SHORT.get(c, CATEGORY_LABEL.get(c, c)) for c in categories)]
    rows = []
    for name, metric in scores["metrics"].items():
        label = coverage_label(metric)
        unscored = unscored_text(metric)
        rows.append(
            [
                name + (f" ({label})" if label else ""),
                interval_text(shown_value(metric), *metric_interval(metric)) + (f" ({unscored})" if unscored else ""),
                *(
                    interval_text(metric["per_category"].get(c), *metric_interval(metric, c))
                    if c in metric["per_category"]
                    else ""
                    for c in categories
                ),
            ]
        )
    return (
        f"\n## {100 * settings['level']:.0f}% confidence intervals\n\n"
        f"{settings['method']}, over the {settings['clusters']} image(s): an image's questions, CoRs or CODIS pairs "
        "count together. A category whose units all come from one image has no interval (n/a). "
        "PARTIAL metrics: the interval of the subset's value.\n\n" + _table(header, rows)
    )


def interval_summary(scores: dict[str, Any]) -> str:
    """One line for the terminal: each metric's overall value with its interval."""
    return "; ".join(
        f"{name} {interval_text(shown_value(metric), *metric_interval(metric))}"
        + (f" {coverage_label(metric)}" if metric.get("partial") else "")
        + (f" ({unscored_text(metric)})" if "unscored" in metric else "")
        for name, metric in scores["metrics"].items()
    ) + (
        f" ({100 * scores['intervals']['level']:.0f}% CI over {scores['intervals']['clusters']} image(s))"
        if scores.get("intervals")
        else ""
    )
