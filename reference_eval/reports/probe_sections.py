"""The bias-probe sections of ``cogbench report``: circular VQA, the blind baseline and its shared hits, and the
invariance probe (image variants)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cogbench.numbers import fixed
from cogbench.reference_eval.recording.run_files import CODIS_SHORT, interval_text
from cogbench.reference_eval.reports import charts
from cogbench.reference_eval.reports.tables import Cell, Table
from cogbench.reference_eval.run.completeness import coverage_label, shown_value
from cogbench.reference_eval.tasks.image_variants import VARIANTS
from cogbench.reference_eval.tasks.probes import CHOICE_METRICS, blind_hits
from cogbench.schemas.vocabulary import ANSWER_LETTERS, CATEGORY_LABEL, CODIS_CATEGORIES, COGBENCH_CATEGORIES

MAIN_METRIC = {"vqa": "accuracy", "codis": "acc_p", "description": "recognition_micro"}


def is_circular(run) -> bool:
    return bool(run.run.scores.get("circular"))


def is_blind(run) -> bool:
    return bool(run.run.scores.get("no_image"))


def _cell(metric: dict[str, Any] | None) -> Cell:
    if metric is None:
        return Cell("-")
    text = interval_text(shown_value(metric), (metric.get("interval") or {}).get("overall"))
    if metric.get("partial"):  # labelled, and never the best of its column
        return Cell(f"{coverage_label(metric)} {text}", None)
    return Cell(text, metric["overall"])


def circular_table(runs: Sequence) -> list[Table]:
    runs = [r for r in runs if is_circular(r)]
    if not runs:
        return []
    table = Table(
        "Circular evaluation, VQA (options rotated four times)",
        [
            "Model",
            "Accuracy (plain order)",
            "All four rotations right",
            "Answer changed by rotation",
            *(f"Share of {letter}" for letter in ANSWER_LETTERS),
        ],
        [],
        note='A question counts for "all four right" only if the answer, whose letter moves with its option, is right '
        "under every rotation. Shares of A-D are over all 4 x N responses: 25% each means no position bias. "
        "Bold: best accuracy.",
        best_columns={1, 2},
    )
    for run in runs:
        metrics = run.metrics
        table.rows.append(
            [
                Cell(run.label),
                _cell(metrics.get("accuracy")),
                _cell(metrics.get("accuracy_circular")),
                _cell(metrics.get("answer_changed")),
                *(_cell(metrics.get(name)) for name in CHOICE_METRICS),
            ]
        )
    return [table]


def _sighted_twin(blind, runs: Sequence):
    """A run of the same model and task made with images, if the report has one."""
    for run in runs:
        if run.task == blind.task and not is_blind(run) and run.run.scores["model"] == blind.run.scores["model"]:
            return run
    return None


def blind_tables(runs: Sequence) -> list[Table]:
    blind = [r for r in runs if is_blind(r)]
    if not blind:
        return []
    tables = []
    for task in ("vqa", "codis", "description"):
        task_runs = [r for r in blind if r.task == task]
        if not task_runs:
            continue
        metric = MAIN_METRIC[task]
        categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES if task == "vqa" else []
        labels = [CODIS_SHORT.get(c) or CATEGORY_LABEL.get(c, c) for c in categories]
        table = Table(
            f"Blind baseline, {task}: {metric} without the image",
            ["Model", *labels, "Overall"],
            [],
            note="Each cell: the blind score, then the same model's score with images and the share of it "
            "that survives without looking (when the report has that run).",
        )
        for run in task_runs:
            twin = _sighted_twin(run, runs)
            cells = [Cell(run.label)]
            for category in [*categories, None]:
                blind_value = (
                    run.metrics[metric]["overall"]
                    if category is None
                    else run.metrics[metric]["per_category"].get(category)
                )
                seen = None
                if twin is not None:
                    seen = (
                        twin.metrics[metric]["overall"]
                        if category is None
                        else twin.metrics[metric]["per_category"].get(category)
                    )
                text = "-" if blind_value is None else fixed(blind_value)
                if blind_value is not None and seen:
                    text += f" of {fixed(seen)} ({fixed(100 * blind_value / seen, 0)}%)"
                cells.append(Cell(text))
            table.rows.append(cells)
        tables.append(table)
        hits = blind_hits({r.label: r.run.details for r in task_runs}, at_least=2)
        hit_table = Table(
            f"Questions answered right without the image by several runs ({task})",
            ["Item", "Category", "Blind runs right"],
            [[Cell(str(h["item_id"])), Cell(str(h["category"])), Cell(", ".join(h["runs"]))] for h in hits],
            note=(
                f"{len(hits)} item(s) right in at least 2 of the {len(task_runs)} blind runs: candidates for filtering, as the "
                "CogBench authors filtered questions answerable without the image."
                if len(task_runs) >= 2
                else "Only one blind run of this task: give two or more to list the items they agree on."
            ),
        )
        tables.append(hit_table)
    return tables


NO_LETTER = "no letter"


def position_bias_series(runs: Sequence) -> tuple[list[str], list[charts.Series]]:
    """Groups A-D plus "no letter" (replies with no readable letter, % of the 4 x N responses), one series per run.

    The unparseable share is a bar of its own, so a model whose replies had no letter shows a
    tall "no letter" bar beside zeros, and a share that was never scored is marked "not scored".
    """
    series = []
    for r in runs:
        counts = r.run.scores.get("counts") or {}
        queries, unparseable = counts.get("queries"), counts.get("unparseable")
        no_letter = 100.0 * unparseable / queries if queries and unparseable is not None else None
        series.append(
            charts.Series(
                r.legend,
                [r.metrics[n]["overall"] for n in CHOICE_METRICS] + [no_letter],
                [(r.metrics[n].get("interval") or {}).get("overall") for n in CHOICE_METRICS] + [None],
            )
        )
    return [*ANSWER_LETTERS, NO_LETTER], series


POSITION_BIAS_TITLE = "Circular VQA: share of each answer letter"
POSITION_BIAS_NOTE = (
    "Dashed line: 25%, a model without position bias. 'no letter': replies without a "
    "readable letter. Whiskers: 95% interval over images."
)


def draw_position_bias(runs: Sequence, colours: dict):
    """The position-bias bars of the circular runs, as a figure (``charts.draw_grouped_bars``)."""
    groups, series = position_bias_series(runs)
    return charts.draw_grouped_bars(
        POSITION_BIAS_TITLE,
        groups,
        series,
        colours,
        ylabel="share of responses (%)",
        note=POSITION_BIAS_NOTE,
        reference=25.0,
    )


def position_bias_chart(runs: Sequence, out: Path, colours: dict) -> list[tuple[Path, str]]:
    runs = [r for r in runs if is_circular(r)]
    if not runs:
        return []
    path = charts._save(draw_position_bias(runs, colours), out / "position_bias.png")
    return [
        (
            path,
            "Position bias under circular evaluation: each letter's share of the model's choices, "
            "and the share of replies with no readable letter.",
        )
    ]


def variant_names(run) -> list[str]:
    return list((run.run.scores.get("image_variants") or {}).get("names") or [])


def image_variant_tables(runs: Sequence) -> list[Table]:
    """The invariance probe: per run, the score on the image, right under every variant, the flip rate, and each
    variant's score and flip rate (``metrics.invariance``), each with its 95% interval over images."""
    tables = []
    for task in ("vqa", "codis"):
        task_runs = [r for r in runs if r.task == task and variant_names(r)]
        if not task_runs:
            continue
        main = MAIN_METRIC[task]
        names = list(dict.fromkeys(n for r in task_runs for n in variant_names(r)))
        table = Table(
            f"Image variants, {task}: {main} under meaning-preserving changes of the image",
            [
                "Model",
                f"{main} (image)",
                "Right under every variant",
                "Flip rate (any variant)",
                *(f"{name}: {main} / flip rate" for name in names),
            ],
            [],
            note="Flip rate: share of items whose answer (VQA: the letter read; CODIS: either query's verdict) "
            "changed under a variant. Variants (docs/scoring.md, Invariance probe): "
            + "; ".join(f"{name}: {VARIANTS[name].definition}" for name in names)
            + ". Bold: best.",
            best_columns={1, 2},
        )
        for run in task_runs:
            metrics = run.metrics
            cells = [Cell(run.label), _cell(metrics.get(main)), _cell(metrics.get(f"{main}_invariant"))]
            cells.append(_cell(metrics.get("flip_rate")))
            for name in names:
                score, flips = _cell(metrics.get(f"{main}_{name}")), _cell(metrics.get(f"flip_rate_{name}"))
                cells.append(Cell(f"{score.text} / {flips.text}"))
            table.rows.append(cells)
        tables.append(table)
    return tables
