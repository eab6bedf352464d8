"""``render_agreement`` on a hand-made result: every line of the Markdown written out by hand.

No runs, no judges (tests/test_judge_agreement.py scores real runs): the mutation run of
``reports/judge_agreement.py`` can start with this file.
"""

from __future__ import annotations

import pytest

from cogbench.errors import UsageError
from cogbench.reference_eval.reports.judge_agreement import _answers_id, render_agreement, verdicts
from cogbench.reference_eval.reports.run_reader import ScoredRun


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
