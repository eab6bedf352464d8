"""Every chart of ``cogbench report`` at 2, 6 and 17 models: readable, and drawing the scores it was given.

Readable: matplotlib's own text extents (``get_window_extent`` with the figure's renderer) say
that no two labels overlap, every label lies inside the figure, the radar's category labels stay
off the plot and the legend never narrows the axes (issue 24, items 13-15). Right: the artists
are read back (bar heights and positions, radar vertices, tick and legend labels, value labels)
and compared with the scores, so a chart that plots every value as zero fails (issue 26, item 4).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from conftest import needs_real_data
from test_intervals import codis_example, score_codis, swap_pairs
from test_runs_report import vqa_run

from cogbench.cli import main

matplotlib.use("Agg")
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.text import Text

from cogbench.reference_eval.recording.run_files import CODIS_SHORT
from cogbench.reference_eval.reports import charts
from cogbench.reference_eval.reports.compare import ScoredRun
from cogbench.reference_eval.reports.probe_sections import NO_LETTER, draw_position_bias, position_bias_series
from cogbench.reference_eval.reports.report_charts import METRIC_LABEL
from cogbench.reference_eval.reports.report_runs import ReportRun
from cogbench.schemas.features import ANSWER_LETTERS, CATEGORY_LABEL, CODIS_CATEGORIES, COGBENCH_CATEGORIES

SIZES = (2, 6, 17)


def PNG_DIR(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("COGBENCH_CHART_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


RADAR_AXES = [CATEGORY_LABEL[c] for c in COGBENCH_CATEGORIES]
VQA_GROUPS = [METRIC_LABEL["accuracy"], METRIC_LABEL["accuracy_official"]]
METRIC_OF_LABEL = {label: name for name, label in METRIC_LABEL.items()}
CODIS_GROUPS = [*(CODIS_SHORT[c] for c in CODIS_CATEGORIES), "Overall"]


def scores(n_models: int, n_values: int, seed: int) -> list[list[float | None]]:
    """Distinct scores in [0, 100] with one exact 0 and one missing value (None) when there is room."""
    rng = np.random.default_rng(seed)
    table = [[round(float(v), 1) for v in rng.uniform(5, 100, n_values)] for _ in range(n_models)]
    table[0][0] = 0.0
    table[-1][-1] = None
    return table


def make_series(table, long_names: bool = True, published: int = 0) -> list[charts.Series]:
    series = []
    for i, values in enumerate(table):
        name = f"org/vision-language-model-{i:02d}-7b-instruct" if long_names else f"m{i}"
        intervals = [None if v is None else [max(v - 4, 0), min(v + 4, 100)] for v in values]
        series.append(charts.Series(name, values, intervals, published=i >= len(table) - published))
    return series


def labels(fig) -> list[Text]:
    """Every text drawn: figure texts and legend, each axes' titles, axis labels, tick labels in view, texts."""
    found = [*fig.texts, *(t for legend in fig.legends for t in legend.get_texts())]
    found += [t for t in (fig._suptitle, fig._supxlabel) if t is not None]
    for ax in fig.axes:
        found += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        found += [*ax.get_xticklabels(), *ax.get_yticklabels()]  # the ticks inside the view only
    found += [legend.get_title() for legend in fig.legends]
    unique = {id(t): t for t in found}.values()  # the suptitle is also one of fig.texts
    return [t for t in unique if t.get_visible() and t.get_text().strip()]


EDGE = 2  # pixels: no text within this of the figure's edges (touching is as bad as leaving)


def check_readable(fig) -> None:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    figure_box = fig.bbox
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels(fig)]
    for text, box in boxes:
        assert box.x0 >= figure_box.x0 + EDGE and box.y0 >= figure_box.y0 + EDGE, f"{text!r} at an edge: {box}"
        assert box.x1 <= figure_box.x1 - EDGE and box.y1 <= figure_box.y1 - EDGE, f"{text!r} at an edge: {box}"
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        overlap_w = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        overlap_h = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        assert overlap_w <= 0.5 or overlap_h <= 0.5, f"labels overlap: {a!r} {box_a} and {b!r} {box_b}"
    legend = fig.legends[0].get_window_extent(renderer) if fig.legends else None
    for ax in fig.axes:
        assert ax.bbox.width > 0.55 * figure_box.width / len(fig.axes), "the plot is squeezed"
        if legend is not None:
            assert legend.y1 <= ax.bbox.y0, "the legend covers or squeezes the plot"


def bar_readback(ax) -> dict[str, tuple[list[float], list[float]]]:
    """label -> (bar centres, heights), as drawn."""
    drawn = {}
    for container in ax.containers:
        if isinstance(container, BarContainer):
            drawn[container.get_label()] = (
                [p.get_x() + p.get_width() / 2 for p in container],
                [p.get_height() for p in container],
            )
    return drawn


def whisker_readback(ax) -> list[tuple[float, float, float]]:
    """(x, low, high) of every whisker drawn, from the errorbars' vertical segments."""
    found = []
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            for collection in container.lines[2]:
                found += [
                    (seg[0][0], min(seg[0][1], seg[1][1]), max(seg[0][1], seg[1][1]))
                    for seg in collection.get_segments()
                ]
    return found


def check_bars(ax, groups, series, value_labels: bool = True) -> None:
    drawn = bar_readback(ax)
    assert [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()] == list(groups)
    assert list(drawn) == [f"{s.label} (published)" if s.published else s.label for s in series]
    texts = [(t.get_position(), t.get_text()) for t in ax.texts]
    previous = None
    for s in series:
        centres, heights = drawn[f"{s.label} (published)" if s.published else s.label]
        assert heights == pytest.approx([0.0 if v is None else v for v in s.values])
        for group, (centre, value) in enumerate(zip(centres, s.values)):
            assert group - 0.4 < centre < group + 0.4  # in its group, models in the order given
            here = [text for (x, _), text in texts if abs(x - centre) < 1e-9]
            if value is None:
                assert "not scored" in here, "a missing value must not look like a zero"
            else:
                assert here == ([f"{value:.0f}"] if value_labels else []), f"{s.label}, {groups[group]}: {here}"
        if previous is not None:
            assert all(a < b for a, b in zip(previous, centres))
        previous = centres
    # A whisker exactly where a value has an interval, spanning it; none (not a flat cap) elsewhere.
    expected = sorted(
        (centre, ci[0], ci[1])
        for s in series
        for centre, value, ci in zip(
            drawn[f"{s.label} (published)" if s.published else s.label][0], s.values, s.intervals
        )
        if ci and value is not None
    )
    drawn_whiskers = sorted(whisker_readback(ax))
    assert len(drawn_whiskers) == len(expected)
    for got, want in zip(drawn_whiskers, expected):
        assert got == pytest.approx(want)


@pytest.mark.parametrize("n_models", SIZES)
def test_radar_is_readable_and_draws_each_score(n_models, tmp_path):
    table = scores(n_models, len(RADAR_AXES), seed=n_models)
    series = make_series(table, published=min(3, n_models - 1))
    colours = charts.model_colours(
        [s.label for s in series if not s.published], [s.label for s in series if s.published]
    )
    fig = charts.draw_radar("VQA accuracy (%) per reasoning category — CogBench", RADAR_AXES, series, colours)
    check_readable(fig)
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.lines}
    for s, values in zip(series, table):
        line = lines[f"{s.label} (published)" if s.published else s.label]
        # a value not scored is a gap (NaN), never drawn as 0
        assert list(line.get_ydata()[:-1]) == pytest.approx([math.nan if v is None else v for v in values], nan_ok=True)
        assert list(line.get_xdata()[:-1]) == pytest.approx(np.linspace(0, 2 * np.pi, 8, endpoint=False))
    assert "A gap in a line: a category not scored." in fig.legends[0].get_title().get_text().replace("\n", " ")
    category_texts = list(ax.texts)
    assert [t.get_text().replace("\n", " ") for t in category_texts] == RADAR_AXES
    # Off the plot: every category label lies outside the rim circle.
    renderer = fig.canvas.get_renderer()
    cx, cy = ax.transAxes.transform((0.5, 0.5))
    radius = ax.bbox.width / 2
    for text in category_texts:
        box = text.get_window_extent(renderer)
        nearest = (min(max(cx, box.x0), box.x1), min(max(cy, box.y0), box.y1))
        assert math.dist(nearest, (cx, cy)) > radius, f"{text.get_text()!r} overlaps the plot"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(lines)
    charts._save(fig, PNG_DIR(tmp_path) / f"radar_{n_models}.png")


def test_radar_names_the_runs_drawn_on_top_of_each_other(tmp_path):
    """Identical polygons hide each other: each run has its own marker and the footnote names who coincides."""
    same = [50.0, 60.0, 70.0, 40.0, 30.0, 20.0, 10.0, 80.0]
    series = [
        charts.Series("run a [judge rule (offline)]", same),
        charts.Series("run b", list(same)),
        charts.Series("run c", [v + 5 for v in same]),
        charts.Series("Paper-Model", list(same), published=True),
    ]
    colours = charts.model_colours([s.label for s in series[:3]], ["Paper-Model"])
    fig = charts.draw_radar("VQA accuracy (%) per reasoning category — CogBench", RADAR_AXES, series, colours)
    check_readable(fig)
    note = fig.legends[0].get_title().get_text().replace("\n", " ")
    assert "run a [judge rule (offline)] = run b = Paper-Model (published)" in note and "run c" not in note
    markers = {line.get_label(): line.get_marker() for line in fig.axes[0].lines}
    assert len(set(markers.values())) == 4 and "None" not in markers.values()
    charts._save(fig, PNG_DIR(tmp_path) / "radar_coinciding.png")
    apart = charts.draw_radar("apart", RADAR_AXES, [series[0], series[2]], colours)
    assert apart.legends[0].get_title().get_text() == ""  # nothing coincides: no note
    charts._pyplot().close(apart)


def test_radar_says_which_runs_are_one_dot_at_the_centre(tmp_path):
    """All-zero runs draw no polygon, only a dot at the centre (one dot for several): the footnote names them."""
    zeros = [charts.Series("run z1", [0.0] * 8), charts.Series("run z2", [0.0] * 8)]
    colours = charts.model_colours(["run z1", "run z2", "run c"])
    for series, named in (
        (zeros[:1], "run z1"),
        (zeros, "run z1, run z2"),
        ([zeros[0], charts.Series("run c", [10.0] * 8)], "run z1"),
    ):
        fig = charts.draw_radar("VQA accuracy (%)", RADAR_AXES, series, colours)
        note = fig.legends[0].get_title().get_text().replace("\n", " ")
        assert f"At 0 on every axis, drawn as one dot at the centre: {named}." in note, note
        charts._pyplot().close(fig)


@pytest.mark.parametrize("n_models", SIZES)
def test_bars_are_readable_and_draw_each_score(n_models, tmp_path):
    table = scores(n_models, len(VQA_GROUPS), seed=100 + n_models)
    series = make_series(table)
    colours = charts.model_colours([s.label for s in series])
    fig = charts.draw_grouped_bars(
        "CogBench VQA: overall score of each run",
        VQA_GROUPS,
        series,
        colours,
        note="Whiskers: 95% bootstrap interval over images.",
    )
    check_readable(fig)
    check_bars(fig.axes[0], VQA_GROUPS, series)
    charts._save(fig, PNG_DIR(tmp_path) / f"bars_vqa_{n_models}.png")


@pytest.mark.parametrize("n_models", SIZES)
def test_codis_panels_are_readable_and_draw_each_score(n_models, tmp_path):
    panels = [
        (name, make_series(scores(n_models, len(CODIS_GROUPS), seed=seed)))
        for name, seed in (("Acc_p (both queries of a pair right)", 1), ("Acc_q (single queries right)", 2))
    ]
    colours = charts.model_colours([s.label for s in panels[0][1]])
    fig = charts.draw_paired_panels(
        "CODIS: Acc_p and Acc_q per category",
        CODIS_GROUPS,
        panels,
        colours,
        note="Whiskers: 95% bootstrap interval over images.",
    )
    check_readable(fig)
    for ax, (_, series) in zip(fig.axes, panels):
        check_bars(ax, CODIS_GROUPS, series, value_labels=False)
    charts._save(fig, PNG_DIR(tmp_path) / f"codis_{n_models}.png")


def circular_run(label: str, shares: list[float | None], queries: int, unparseable: int) -> ReportRun:
    """A scored circular run as `score --circular` writes scores.json (choice_A-D overall and interval, counts)."""
    metrics = {
        f"choice_{letter}": {"overall": share, "interval": {"overall": None if share is None else [share, share]}}
        for letter, share in zip(ANSWER_LETTERS, shares)
    }
    scores_json = {
        "task": "vqa",
        "model": label,
        "circular": True,
        "metrics": metrics,
        "counts": {"items": queries // 4, "queries": queries, "unparseable": unparseable},
    }
    return ReportRun(ScoredRun(Path(label), scores_json, [], None), label, "")


@pytest.mark.parametrize("n_models", SIZES)
def test_position_bias_marks_unparseable_and_missing(n_models, tmp_path):
    runs = [
        circular_run("all unparseable", [0.0, 0.0, 0.0, 0.0], 48, 48),
        circular_run("never scored", [None, None, None, None], 48, 0),
    ]
    runs += [circular_run(f"model {i}", [40.0, 30.0, 20.0, 5.0], 48, 2 + i) for i in range(n_models - 2)]
    groups, series = position_bias_series(runs)
    assert groups == [*ANSWER_LETTERS, NO_LETTER]
    assert series[0].values == [0.0, 0.0, 0.0, 0.0, 100.0]  # every reply unparseable: a full "no letter" bar
    assert series[1].values[:4] == [None] * 4
    for i, s in enumerate(series[2:]):
        assert s.values[4] == pytest.approx(100 * (2 + i) / 48)
    colours = charts.model_colours([r.label for r in runs])
    fig = draw_position_bias(runs, colours)  # the report's own chart, with its own title and footnote
    check_readable(fig)
    check_bars(fig.axes[0], groups, series)
    ax = fig.axes[0]
    centres, heights = bar_readback(ax)["all unparseable"]
    assert heights == [0, 0, 0, 0, 100]
    zero_labels = [t.get_text() for t in ax.texts if any(abs(t.get_position()[0] - c) < 1e-9 for c in centres[:4])]
    assert zero_labels == ["0"] * 4  # a drawn zero says 0
    charts._save(fig, PNG_DIR(tmp_path) / f"position_bias_{n_models}.png")


# --- the report's own charts, from real scored runs: what is drawn is what scores.json says ------


def labelled(drawn: dict, run: str):
    """What was drawn for one run, whose legend label may carry its coverage labels ("run [SAMPLE (...)]")."""
    (key,) = [k for k in drawn if k.split(" [")[0] == run]
    return drawn[key]


def swapped_and_repeated(out: Path) -> Path:
    """30% of the pairs swapped (both queries wrong) and 20% more with query 2's output repeated for query 1
    (one query wrong, the two outputs equal): Acc_p, Acc_q and context awareness all differ."""
    swap_pairs(codis_example(), 0.3, 1, out)
    original, pairs = json.loads(codis_example().read_text()), json.loads(out.read_text())
    untouched = [i for i, (a, b) in enumerate(zip(original, pairs)) if a["output"] == b["output"]]
    for i in random.Random(2).sample(untouched, round(0.2 * len(pairs))):
        pairs[i]["output"]["output_1"] = pairs[i]["output"]["output_2"]
    out.write_text(json.dumps(pairs))
    return out


@needs_real_data
def test_report_charts_draw_the_runs_scores(built_release, tmp_path, monkeypatch):
    """`cogbench report` on real runs: each chart's bars and polygons, read back, equal the runs' scores.json."""
    drawn: dict[str, object] = {}
    save = charts._save

    def keep(fig, path):  # the report's own figures, read before they are closed
        check_readable(fig)  # their own titles, notes and legends: inside the figure, off its edges
        drawn[Path(path).stem] = {
            "bars": [bar_readback(ax) for ax in fig.axes],
            "lines": {line.get_label(): list(line.get_ydata()[:-1]) for ax in fig.axes for line in ax.lines},
            "ticks": [[t.get_text().replace("\n", " ") for t in ax.get_xticklabels()] for ax in fig.axes],
        }
        return save(fig, path)

    monkeypatch.setattr(charts, "_save", keep)
    truth, swapped = tmp_path / "truth", tmp_path / "swapped"
    score_codis(built_release, codis_example(), truth, resamples=100)
    score_codis(built_release, swapped_and_repeated(tmp_path / "swapped.json"), swapped, resamples=100)
    good = vqa_run(built_release, tmp_path, "good", 1)
    poor = vqa_run(built_release, tmp_path, "poor", 3, "The answer is {}.")  # the first character is never a letter
    assert main(["report", str(truth), str(swapped), str(good), str(poor), "--out", str(tmp_path / "report")]) == 0
    scores = {
        folder.name: json.loads((folder / "scores.json").read_text())["metrics"]
        for folder in (truth, swapped, good, poor)
    }

    # Each bar stands under the label of the metric whose value it draws: the metric is read from the tick.
    runs_of = {"bars_vqa": ("good", "poor"), "bars_codis": ("output_example", "swapped")}
    folder_of = {"good": "good", "poor": "poor", "output_example": "truth", "swapped": "swapped"}
    for chart, names in runs_of.items():
        metrics = [METRIC_OF_LABEL[tick] for tick in drawn[chart]["ticks"][0]]
        assert len(metrics) >= 2
        for run in names:
            heights = labelled(drawn[chart]["bars"][0], run)[1]
            assert heights == pytest.approx([scores[folder_of[run]][m]["overall"] for m in metrics]), (chart, run)
        # the columns differ, so a bar drawn from another metric's column cannot pass
        assert len({round(h, 6) for h in labelled(drawn[chart]["bars"][0], names[1])[1]}) == len(metrics), chart
    assert drawn["bars_vqa"]["ticks"][0] == VQA_GROUPS
    assert scores["poor"]["accuracy"]["overall"] < 50 < scores["good"]["accuracy"]["overall"]  # not all one value
    assert scores["poor"]["accuracy_official"]["overall"] == 0.0 < scores["poor"]["accuracy"]["overall"]
    radar = drawn["radar_vqa"]["lines"]
    for run in ("good", "poor"):
        expected = [scores[run]["accuracy"]["per_category"][c] for c in COGBENCH_CATEGORIES]
        assert labelled(radar, run) == pytest.approx([math.nan if v is None else v for v in expected], nan_ok=True)
    codis_labels = {"truth": "output_example", "swapped": "swapped"}
    for panel, metric in zip(drawn["codis_categories"]["bars"], ("acc_p", "acc_q")):
        for folder, label in codis_labels.items():
            m = scores[folder][metric]
            assert labelled(panel, label)[1] == pytest.approx(
                [*(m["per_category"][c] for c in CODIS_CATEGORIES), m["overall"]]
            )
    assert drawn["codis_categories"]["ticks"][0] == CODIS_GROUPS
    bars_codis = drawn["bars_codis"]["bars"][0]
    swapped_bars = labelled(bars_codis, "swapped")[1]
    assert swapped_bars[0] == pytest.approx(scores["swapped"]["acc_p"]["overall"]) and swapped_bars[0] < 100
    # every CODIS legend names the run's judge (issue 32, item 1)
    assert all(key.endswith("[judge rule (offline)]") for key in bars_codis)
