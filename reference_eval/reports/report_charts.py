"""The PNG charts of ``cogbench report`` made from its runs: radars, bars per task, CODIS panels, position bias.

Series carry each run's legend (``report_runs.ReportRun.legend``: label, mode,
judge); the drawing itself is ``charts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cogbench.reference_eval.recording.run_files import CODIS_SHORT
from cogbench.reference_eval.recording.run_kind import METRIC_LABEL, MODE_LABEL
from cogbench.reference_eval.reports import charts
from cogbench.reference_eval.reports.probe_sections import position_bias_chart
from cogbench.reference_eval.reports.published import REFERENCE_MODELS, PublishedResult, published_table
from cogbench.reference_eval.reports.report_runs import ReportRun
from cogbench.reference_eval.run.completeness import shown_value
from cogbench.schemas.vocabulary import CATEGORY_LABEL, CODIS_CATEGORIES, COGBENCH_CATEGORIES

TASK_TITLE = {"description": "CogBench Description", "vqa": "CogBench VQA", "codis": "CODIS"}
PUBLISHED_RADAR_MODELS = 3  # the best published models drawn beside the runs, plus Human/Oracle
INTERVAL_NOTE = (
    "Whiskers: 95% interval over images (Korn-Graubard). [PARTIAL (n/N)]: counted on a subset; "
    "[SAMPLE]: not the full release."
)


def _top_published(table: dict[str, dict[str, float]], count: int) -> dict[str, dict[str, float]]:
    models = [m for m in table if m not in REFERENCE_MODELS]
    top = sorted(models, key=lambda m: table[m].get("overall", 0.0), reverse=True)[:count]
    return {m: table[m] for m in [*top, *(m for m in table if m in REFERENCE_MODELS)]}


def _category_series(run: ReportRun, metric: str, categories: Sequence[str]) -> charts.Series:
    values = run.metrics[metric]
    interval = (values.get("interval") or {}).get("per_category") or {}
    return charts.Series(
        run.legend, [values["per_category"].get(c) for c in categories], [interval.get(c) for c in categories]
    )


def make_charts(runs: list[ReportRun], published: list[PublishedResult], out: Path) -> list[tuple[Path, str]]:
    """Every chart that the runs have data for, as (file, caption)."""
    made: list[tuple[Path, str]] = []
    radar_published: dict[str, dict[str, dict[str, float]]] = {}
    vqa_runs = [r for r in runs if r.task == "vqa"]
    cognition_runs = [r for r in runs if r.task == "description" and "cognition" in r.metrics]
    if vqa_runs:
        radar_published["vqa"] = _top_published(published_table(published, "accuracy"), PUBLISHED_RADAR_MODELS)
    if cognition_runs:
        modes = {r.mode for r in cognition_runs} & {"spontaneous", "directed"}
        mode = "directed" if modes == {"directed"} else "spontaneous"
        radar_published["cognition"] = _top_published(
            published_table(published, "cognition", mode), PUBLISHED_RADAR_MODELS
        )
    colours = charts.model_colours([r.legend for r in runs], [m for table in radar_published.values() for m in table])
    axis = [CATEGORY_LABEL[c] for c in COGBENCH_CATEGORIES]
    for key, task_runs, metric, title in (
        ("vqa", vqa_runs, "accuracy", "VQA accuracy (%) per reasoning category — CogBench"),
        (
            "cognition",
            cognition_runs,
            "cognition",
            "Cognition Score (%) per reasoning category — CogBench Description"
            + (
                f"\n(published models: {MODE_LABEL[mode]}, GPT-4 judge; runs: mode and judge in the legend)"
                if cognition_runs
                else ""
            ),
        ),
    ):
        if task_runs:
            series = [_category_series(r, metric, COGBENCH_CATEGORIES) for r in task_runs]
            series += [
                charts.Series(m, [v.get(c) for c in COGBENCH_CATEGORIES], published=True)
                for m, v in radar_published[key].items()
            ]
            path = charts.radar(out / f"radar_{key}.png", title, axis, series, colours)
            made.append((path, f"{title}: runs (solid) and the best published models of the paper (dashed)."))
    for task in ("description", "vqa", "codis"):
        task_runs = [r for r in runs if r.task == task]
        if not task_runs:
            continue
        # The papers' metrics; the circular ones have their own table and chart.
        names = [n for n in dict.fromkeys(name for r in task_runs for name in r.metrics) if n in METRIC_LABEL]
        series = [
            charts.Series(
                r.legend,
                [shown_value(r.metrics[n]) if n in r.metrics else None for n in names],
                [(r.metrics[n].get("interval") or {}).get("overall") if n in r.metrics else None for n in names],
            )
            for r in task_runs
        ]
        path = charts.grouped_bars(
            out / f"bars_{task}.png",
            f"{TASK_TITLE[task]}: overall score of each run",
            [METRIC_LABEL.get(n, n) for n in names],
            series,
            colours,
            note=INTERVAL_NOTE,
        )
        made.append((path, f"{TASK_TITLE[task]}: overall score of each run per metric, with 95% intervals."))
    codis_runs = [r for r in runs if r.task == "codis"]
    if codis_runs:
        groups = [*(CODIS_SHORT[c] for c in CODIS_CATEGORIES), "Overall"]
        panels = []
        for metric, name in (
            ("acc_p", "Acc_p (both queries of a pair right)"),
            ("acc_q", "Acc_q (single queries right)"),
        ):
            series = []
            for r in codis_runs:
                s = _category_series(r, metric, CODIS_CATEGORIES)
                m = r.metrics[metric]
                s.values.append(shown_value(m))
                s.intervals.append((m.get("interval") or {}).get("overall"))
                series.append(s)
            panels.append((name, series))
        path = charts.paired_panels(
            out / "codis_categories.png",
            "CODIS: Acc_p and Acc_q per category",
            groups,
            panels,
            colours,
            note=INTERVAL_NOTE,
        )
        made.append((path, "CODIS Acc_p and Acc_q per category (CODIS Table 3 layout), with 95% intervals."))
    return made + position_bias_chart(runs, out, colours)
