"""``render_agreement`` on a hand-made result: every line of the Markdown written out by hand.

No runs, no judges (tests/test_judge_agreement.py scores real runs): the mutation run of
``reports/judge_agreement.py`` can start with this file.
"""

from __future__ import annotations

import pytest

from cogbench.errors import UsageError
from cogbench.reference_eval.recording.run_reader import ScoredRun
from cogbench.reference_eval.reports.judge_agreement import _answers_id, render_agreement, verdicts


def kappa_row(items, kappa, interval=None, flips=0, share=None, constant=()) -> dict:
    row = {"items": items, "kappa": kappa, "interval": interval, "flips": flips, "flip_share": share}
    return {**row, "a_higher": flips, "b_higher": 0, "constant": list(constant)}


def result(images: int, ranking: dict, pairs: int = 1) -> dict:
    pair = {
        "a": {"model": "m1", "folder": "runs/a"},
        "b": {"model": "m1", "folder": "runs/b"},
        "images": images,
        "labels": [0, 1],
        "unjudged": 2,
        "kappa": {
            "Attributes": kappa_row(0, None),  # no items: not listed
            "Relationships": kappa_row(4, 0.0, None, 1, 25.0, ["A"]),
            "overall": kappa_row(94, 0.61234, [0.4, 0.8], 54, 54 / 94 * 100),
        },
        "moves": {
            "acc_q": [
                {"column": "overall", "a": 81.58, "b": 80.0, "move": -1.58, "interval": [-3.0, -0.1]},
                {"column": "Attributes", "a": None, "b": None, "move": None, "interval": None},
            ]
        },
    }
    return {
        "judge_a": "rule",
        "judge_b": "openai:gpt",
        "task": "codis",
        "method": "Cohen's kappa",
        "pairs": [pair] * pairs,
        "ranking": ranking,
    }


PAIR_LINES = [
    "## m1: runs/a (A) vs runs/b (B)",
    "",
    "",  # the images line, per test
    "",
    "| category | items | kappa | 95% CI | flips | flip % | A > B | B > A | note |",
    "|---|---|---|---|---|---|---|---|---|",
    "| Relationships | 4 | 0.00 | n/a | 1 | 25.0 | 1 | 0 | judge A gave one verdict throughout: kappa is 0 by definition |",
    "| overall | 94 | 0.61 | [0.40, 0.80] | 54 | 57.4 | 54 | 0 |  |",
    "",
    "| acc_q | A | B | B - A | 95% CI |",
    "|---|---|---|---|---|",
    "| overall | 81.58 | 80.00 | -1.58 | [-3.00, -0.10] |",
    "",
]


def test_a_pair_below_200_images_says_why_it_has_no_interval_and_two_models_rank_nothing():
    lines = render_agreement(result(199, {})).splitlines()
    assert lines[:4] == ["Judge A: rule", "Judge B: openai:gpt", "codis; Cohen's kappa.", ""]
    expected = list(PAIR_LINES)
    expected[2] = (
        "199 images; verdict labels [0, 1]; 2 item(s) left out (no verdict from one of the judges). "
        "No kappa interval below 200 images (its coverage was measured under 95%)."
    )
    assert lines[4:] == [*expected, "Kendall's tau of the rankings needs three or more models scored by both judges."]


def test_from_200_images_no_note_and_three_models_give_the_ranking_table():
    tau = {"models": 3, "tau": 1.0, "interval": None, "p_value": 1 / 3}
    lines = render_agreement(result(200, {"acc_q": tau}, pairs=3)).splitlines()
    assert lines[6] == "200 images; verdict labels [0, 1]; 2 item(s) left out (no verdict from one of the judges)."
    assert lines[-5:] == [
        "## Ranking of the models under the two judges",
        "",
        "| metric | models | Kendall's tau | 95% CI | p |",
        "|---|---|---|---|---|",
        "| acc_q | 3 | 1.00 | n/a | 0.3333 |",
    ]


def test_a_run_without_its_answers_hash_is_refused_naming_its_scores_file(tmp_path):
    """Which answers were judged is their hash: a run scored before it was recorded cannot be paired."""
    run = ScoredRun(tmp_path / "run", {"task": "codis", "provenance": {}}, [], None)
    with pytest.raises(UsageError) as raised:
        _answers_id(run)
    assert str(raised.value) == (
        f"{tmp_path / 'run' / 'scores.json'}: provenance.answers_sha256 is missing, so it cannot be told which "
        "answers were judged; score the predictions again with this version of cogbench"
    )
    with pytest.raises(UsageError, match=r": vqa answers are read by rule, with no judge to compare$"):
        verdicts(ScoredRun(tmp_path / "run", {"task": "vqa"}, [], None))


def test_the_chart_is_two_inches_plus_nine_tenths_per_category_wide(tmp_path):
    """Two categories with items (Relationships, overall): 2.0 + 0.9 * 2 = 3.8 inches at 130 dpi."""
    from PIL import Image

    from cogbench.reference_eval.reports.judge_agreement import agreement_chart

    path = agreement_chart(tmp_path / "agreement.png", result(200, {}))
    with Image.open(path) as image:
        assert image.size[0] == round(3.8 * 130)


def test_the_chart_draws_each_kappa_in_the_models_colour_above_the_legend(tmp_path):
    """The plot's markers are in the model's colour; the legend below repeats it once."""
    import numpy as np
    from PIL import Image

    from cogbench.reference_eval.reports import charts
    from cogbench.reference_eval.reports.judge_agreement import agreement_chart

    path = agreement_chart(tmp_path / "agreement.png", result(200, {}))
    colour = tuple(round(255 * v) for v in charts.model_colours(["m1"])["m1"][:3])
    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"))
    rows = np.nonzero((pixels == colour).all(axis=-1))[0]
    assert (rows < 0.7 * pixels.shape[0]).sum() > 20  # the plot area: the two categories' markers and whiskers


def test_two_models_kappas_stand_side_by_side_three_tenths_of_a_category_apart(tmp_path):
    """Two pairs: each category's markers at x - 0.15 and x + 0.15 (step 0.3), so never on each other."""
    import copy

    import numpy as np
    from PIL import Image

    from cogbench.reference_eval.reports import charts
    from cogbench.reference_eval.reports.judge_agreement import agreement_chart

    both = result(200, {}, pairs=2)
    both["pairs"] = [copy.deepcopy(pair) for pair in both["pairs"]]
    both["pairs"][1]["a"]["model"] = "m2"
    with Image.open(agreement_chart(tmp_path / "agreement.png", both)) as image:
        pixels = np.asarray(image.convert("RGB"))
    centres = {}
    for model, colour in charts.model_colours(["m1", "m2"]).items():
        rows, xs = np.nonzero((pixels == tuple(round(255 * v) for v in colour[:3])).all(axis=-1))
        xs = xs[rows < 0.7 * pixels.shape[0]]  # the plot area, above the legend
        middle = (xs.min() + xs.max()) / 2
        centres[model] = (xs[xs < middle].mean(), xs[xs >= middle].mean())  # the two categories
    one_category = centres["m1"][1] - centres["m1"][0]
    assert (centres["m2"][0] - centres["m1"][0]) / one_category == pytest.approx(0.3, abs=0.03)


def test_the_note_names_each_constant_judge_and_a_score_one_judge_lacks_is_still_listed():
    """B alone constant; both constant; a move row with a score under B only (A had no unit) is kept."""
    both = result(1000, {})
    pair = both["pairs"][0]
    pair["kappa"]["Attributes"] = kappa_row(3, 0.0, None, 1, 100 / 3, ["B"])
    pair["kappa"]["Relationships"] = kappa_row(2, None, None, 0, 0.0, ["A", "B"])
    pair["moves"]["acc_q"][1] = {"column": "Attributes", "a": None, "b": 50.0, "move": None, "interval": None}
    text = render_agreement(both)
    lines = text.splitlines()
    assert lines[6] == "1000 images; verdict labels [0, 1]; 2 item(s) left out (no verdict from one of the judges)."
    assert lines[10:12] == [
        "| Attributes | 3 | 0.00 | n/a | 1 | 33.3 | 1 | 0 | judge B gave one verdict throughout: kappa is 0 by definition |",
        "| Relationships | 2 | n/a | n/a | 0 | 0.0 | 0 | 0 | both judges gave one verdict throughout |",
    ]
    assert lines[-3:] == [
        "| Attributes | n/a | 50.00 | n/a | n/a |",
        "",
        "Kendall's tau of the rankings needs three or more models scored by both judges.",
    ]
    assert text.endswith(".\n")


@pytest.mark.parametrize("pairs", [2, 3, 4])
def test_the_missing_ranking_is_explained_below_three_models_only(pairs):
    lines = render_agreement(result(200, {}, pairs=pairs)).splitlines()
    explained = lines[-1] == "Kendall's tau of the rankings needs three or more models scored by both judges."
    assert explained == (pairs < 3) and lines.count("## m1: runs/a (A) vs runs/b (B)") == pairs


def drawn_chart(monkeypatch, tmp_path, chart_result) -> dict:
    """What ``agreement_chart`` drew, read from its figure before it is saved and closed."""
    from cogbench.reference_eval.reports import charts
    from cogbench.reference_eval.reports.judge_agreement import agreement_chart

    drawn, save = {}, charts._save

    def keep(fig, path):
        (ax,) = fig.axes
        drawn["size"] = tuple(fig.get_size_inches())
        drawn["bars"] = []
        for container in ax.containers:
            data, caps, (whiskers,) = container.lines
            ends = [[float(v) for v in segment.ravel()] for segment in whiskers.get_segments()]
            drawn["bars"].append((data.get_xydata().ravel().tolist(), ends, caps[0].get_markersize()))
        drawn["texts"] = [(t.get_position(), t.get_text(), t.get_fontsize(), t.get_rotation()) for t in ax.texts]
        drawn["hlines"] = [
            (list(line.get_ydata()), line.get_linewidth()) for line in ax.lines if list(line.get_xdata()) == [0, 1]
        ]
        drawn["ylim"] = ax.get_ylim()
        drawn["ticks"] = [(t.get_text(), t.get_fontsize()) for t in ax.get_xticklabels()]
        drawn["xticks"] = list(ax.get_xticks())
        drawn["title"] = (ax.get_title(), ax.title.get_fontsize())
        drawn["grid"] = [line.get_alpha() for line in ax.yaxis.get_gridlines()][:1]
        return save(fig, path)

    monkeypatch.setattr(charts, "_save", keep)
    agreement_chart(tmp_path / "agreement.png", chart_result)
    return drawn


def test_one_models_chart_centres_each_kappa_on_its_category(monkeypatch, tmp_path):
    """One pair: step 0.6, offset x - 0.3 + 0.6 * 0.5 = x. Width 2.0 + 0.9 * 2 inches; height 4.2 plus two
    legend rows of 0.22 (the model, the footnote)."""
    drawn = drawn_chart(monkeypatch, tmp_path, result(200, {}))
    assert drawn["size"] == pytest.approx((3.8, 4.64))
    ((xy, ends, _cap),) = drawn["bars"]
    assert xy == pytest.approx([0.0, 0.0, 1.0, 0.61234])  # (x, kappa) of Relationships, then overall
    assert ends == [[0.0, 0.0, 0.0, 0.0], pytest.approx([1.0, 0.4, 1.0, 0.8])]


def test_two_models_chart_kappas_whiskers_and_na_marks_at_hand_computed_places(monkeypatch, tmp_path):
    """Two pairs: step 0.3, model 0 at x - 0.15, model 1 at x + 0.15; whiskers from each interval's ends;
    an undefined kappa is an "n/a" (7 pt, upright) at y -0.95; kappa's scale -1.05..1.05."""
    long = "Object counts extra"  # wrapped at 12 characters: "Object counts" (13) breaks, "counts extra" (12) fits
    first = {
        long: kappa_row(5, None),
        "Relationships": kappa_row(4, 0.2, [-0.1, 0.6]),
        "overall": kappa_row(9, 0.6, [0.45, 0.8]),
    }
    second = {long: kappa_row(5, 0.5), "Relationships": kappa_row(4, None), "overall": kappa_row(9, 0.3, [0.1, 0.35])}
    chart = result(200, {}, pairs=2)
    chart["pairs"] = [
        {**chart["pairs"][0], "kappa": first},
        {**chart["pairs"][0], "a": {"model": "m2"}, "kappa": second},
    ]
    drawn = drawn_chart(monkeypatch, tmp_path, chart)
    (xy0, ends0, cap0), (xy1, ends1, cap1) = drawn["bars"]
    assert xy0 == pytest.approx([0.85, 0.2, 1.85, 0.6]) and xy1 == pytest.approx([0.15, 0.5, 2.15, 0.3])
    whiskers = [[0.85, -0.1, 0.85, 0.6], [1.85, 0.45, 1.85, 0.8], [0.15, 0.5, 0.15, 0.5], [2.15, 0.1, 2.15, 0.35]]
    assert len(ends0 + ends1) == 4 and all(e == pytest.approx(w) for e, w in zip(ends0 + ends1, whiskers))
    assert (cap0, cap1) == (6.0, 6.0)  # capsize 3: caps of twice that
    assert [(text, size, angle) for _, text, size, angle in drawn["texts"]] == [("n/a", 7.0, 90.0)] * 2
    assert [xy for xy, *_ in drawn["texts"]] == [pytest.approx((-0.15, -0.95)), pytest.approx((1.15, -0.95))]
    assert drawn["hlines"] == [([0, 0], 0.8)] and drawn["ylim"] == (-1.05, 1.05)
    assert drawn["xticks"] == [0, 1, 2]
    assert drawn["ticks"] == [("Object\ncounts extra", 8.0), ("Relationships", 8.0), ("overall", 8.0)]
    assert drawn["title"] == ("Judge agreement (codis)\nA: rule; B: openai:gpt", 10.0)
    assert drawn["grid"] == [0.3]
    assert drawn["size"][0] == pytest.approx(2.0 + 0.9 * 3)


def test_the_reports_tables_hold_each_models_kappas_and_overall_moves():
    """The result as ``--json`` writes it (read back): the categories with items, kappa with its interval or
    n/a; one move row per metric, its overall column only."""
    import json

    from cogbench.reference_eval.reports.judge_agreement import agreement_tables

    made = result(200, {})
    made["pairs"][0]["kappa"]["Attributes"] = kappa_row(3, None, None, 0, 0.0, ["A", "B"])
    made["pairs"][0]["moves"]["acc_q"].append({"column": "time", "a": 1.0, "b": 2.0, "move": 1.0, "interval": None})
    kappa, moves = agreement_tables(json.loads(json.dumps(made)))
    assert (kappa.title, kappa.header) == (
        "Judge agreement, codis: Cohen's kappa",
        ["model", "flips %", *made["pairs"][0]["kappa"]],
    )
    assert [[cell.text for cell in row] for row in kappa.rows] == [
        ["m1", "57.4", "n/a", "0.00 n/a", "0.61 [0.40, 0.80]"]
    ]
    assert kappa.note == (
        "A: rule; B: openai:gpt. Kappa [95% interval, percentile bootstrap, clustered by image; none below 200 "
        "images, where its coverage was measured under 95%]; kappa is 0 wherever one judge gave one verdict "
        "throughout (see flips), n/a where both did. Kendall's tau of the rankings needs three or more models "
        "scored by both judges."
    )
    assert (moves.title, moves.header) == (
        "Judge agreement, codis: scores under each judge",
        ["model", "metric", "A", "B", "B - A [95% CI]"],
    )
    assert [[cell.text for cell in row] for row in moves.rows] == [
        ["m1", "acc_q", "81.58", "80.00", "-1.58 [-3.00, -0.10]"]
    ]
    tau = {"models": 3, "tau": 0.3333, "interval": [0.1, 0.9], "p_value": 1.0}
    kappa, _ = agreement_tables(result(200, {"acc_q": tau}, pairs=3))
    assert kappa.note.endswith(" n/a where both did. Kendall's tau of the 3 models' acc_q: 0.33 [0.10, 0.90]")
