"""Every PASS/FAIL bar of ``judges certify`` at and around its boundary, on hand-worked verdicts (issue 48
item 10). Fast: no run folder, no model; the mutation run of ``certifying/certify.py`` starts here.

Each model's verdicts are laid out by hand: one unit per image (or ``per_image``), the reference's and the
candidate's verdict given as counts of the four (reference, candidate) pairs. Kappa, tau and the score moves
below are worked from those counts by their textbook formulas, in the comments:

- Cohen's kappa = (p_o - p_e) / (1 - p_e), p_o the share of agreeing pairs, p_e the chance agreement from
  the two judges' shares of "right" (McHugh 2012);
- Kendall's tau-b without ties = (concordant - discordant) / (n (n - 1) / 2);
- a score move = the candidate's score - the reference's, in points.
"""

from __future__ import annotations

import dataclasses

import pytest

from cogbench.reference_eval.certifying import certify as cert
from cogbench.reference_eval.certifying.verdict_archive import JudgedAnswers
from cogbench.reference_eval.metrics import agreement
from cogbench.schemas.features import COGBENCH_CATEGORIES

CATEGORIES = list(COGBENCH_CATEGORIES)


def model(name: str, both_right: int, only_ref: int, only_cand: int, both_wrong: int, per_image: int = 1, units=None):
    """(reference, candidate) of one model on description CoRs: ``both_right`` units both judges call right,
    ``only_ref`` the reference alone, ``only_cand`` the candidate alone, ``both_wrong`` neither
    (``units``: the (reference, candidate) verdicts given one by one instead)."""
    if units is None:
        units = [(1, 1)] * both_right + [(1, 0)] * only_ref + [(0, 1)] * only_cand + [(0, 0)] * both_wrong
    ref, cand = {}, {}
    for n, (a, b) in enumerate(units):
        image, category = f"img{n // per_image}", CATEGORIES[n % len(CATEGORIES)]
        ref[(f"i{n}", category, "1")] = (image, category, a)
        cand[(f"i{n}", category, "1")] = (image, category, b)
    answers = f"answers-{name}"
    return (
        JudgedAnswers("description", name, answers, "official", f"ref/{name}", ref),
        JudgedAnswers("description", name, answers, "candidate", f"cand/{name}", cand),
    )


DEFAULT_BARS = cert.Bars()


def certified(models, bars: cert.Bars = DEFAULT_BARS, resamples: int = 50, seed: int = 0) -> dict:
    return cert.certify([r for r, _ in models], [c for _, c in models], bars, resamples, seed)


def criterion(result: dict, name: str) -> dict:
    (task,) = result["tasks"]
    return next(c for c in task["criteria"] if c["name"] == name)


def test_the_bars_are_the_documented_ones():
    assert cert.Bars() == cert.Bars(min_kappa=0.80, min_tau=0.88, max_difference=1.0)
    assert (cert.Bars().min_kappa, cert.Bars().min_tau, cert.Bars().max_difference) == (0.80, 0.88, 1.0)
    # frozen: certify's default Bars() is one object shared by every call; no caller can move its bars
    with pytest.raises(dataclasses.FrozenInstanceError):
        cert.Bars().min_kappa = 0.5


@pytest.mark.parametrize(
    "counts, kappa, passed",
    [
        # p_o = 90/100, both judges say right half the time: p_e = 0.5, kappa = 0.4 / 0.5 = 0.80: on the bar.
        ((45, 5, 5, 45), 0.80, True),
        # p_o = 91/100; right shares 0.50 and 0.51: p_e = 0.5 * 0.51 + 0.5 * 0.49 = 0.5; kappa = 0.82.
        ((46, 4, 5, 45), 0.82, True),
        # p_o = 0.89, p_e = 0.5: kappa = 0.78, inside 0.75-0.80: FAIL.
        ((45, 5, 6, 44), 0.78, False),
        # p_o = 0.88, p_e = 0.5: kappa = 0.76.
        ((44, 6, 6, 44), 0.76, False),
        # p_o = 899/1000; shares 0.500 and 0.501: p_e = 0.5; kappa = 0.399 / 0.5 = 0.798, just under.
        ((450, 50, 51, 449), 0.798, False),
    ],
)
def test_kappa_passes_from_0_80_and_fails_under_it(counts, kappa, passed):
    result = certified([model("m", *counts)])
    found = criterion(result, "kappa")
    assert found["value"] == pytest.approx(kappa, abs=1e-9)
    assert (found["passed"], found["bar"]) == (passed, ">= 0.8")
    assert result["status"] == "FAIL"  # one model: tau cannot be computed


def test_kappa_on_a_bar_of_its_own_value_passes():
    """``>=``: a kappa equal to the bar passes; a bar a hair above fails."""
    one = [model("m", 45, 5, 6, 44)]  # kappa 0.78 (above)
    assert criterion(certified(one, cert.Bars(min_kappa=0.78)), "kappa")["passed"] is True
    assert criterion(certified(one, cert.Bars(min_kappa=0.7801)), "kappa")["passed"] is False


def ranked(ref_scores, cand_scores):
    """One model per score pair, 100 units each on 100 images: the reference calls ``r`` right, the candidate
    ``c`` (the candidate's extra rights are the reference's wrongs, its extra wrongs the reference's rights)."""
    models = []
    for m, (r, c) in enumerate(zip(ref_scores, cand_scores)):
        both = min(r, c)
        models.append(model(f"m{m}", both, r - both, c - both, 100 - max(r, c)))
    return models


@pytest.mark.parametrize(
    "cand_scores, tau, passed",
    [
        # Five models, one adjacent swap: 9 concordant pairs, 1 discordant of 10: tau = 8/10 = 0.80: FAIL.
        ((20, 30, 50, 40, 60), 0.80, False),
        # Six models, one swap: (14 - 1) / 15 = 0.8667: FAIL, just under 0.88.
        ((20, 30, 50, 40, 60, 70), 13 / 15, False),
        # Seven models, one swap: (20 - 1) / 21 = 0.9048: PASS, just over.
        ((20, 30, 50, 40, 60, 70, 80), 19 / 21, True),
        # Five models, the order kept: tau = 1.
        ((21, 31, 41, 51, 61), 1.0, True),
    ],
)
def test_tau_passes_from_0_88_and_one_swap_among_five_models_fails(cand_scores, tau, passed):
    ref_scores = tuple(range(20, 20 + 10 * len(cand_scores), 10))
    found = criterion(certified(ranked(ref_scores, cand_scores)), "tau")
    assert found["value"] == pytest.approx(tau, abs=1e-4)
    assert (found["passed"], found["bar"]) == (passed, ">= 0.88")


def test_tau_on_a_bar_of_its_own_value_passes():
    models = ranked((20, 30, 40, 50, 60), (20, 30, 50, 40, 60))  # tau 0.80
    assert criterion(certified(models, cert.Bars(min_tau=0.8)), "tau")["passed"] is True
    assert criterion(certified(models, cert.Bars(min_tau=0.8001)), "tau")["passed"] is False


@pytest.mark.parametrize(
    "counts, move, over, outside",
    [
        # 100 units: the candidate calls one of the reference's wrongs right: +1.00 point, on the bar.
        # One image moves: the t interval over 100 images is about 1 +- 2 and covers 0: PASS.
        ((50, 0, 1, 49), 1.0, False, False),
        # 200 units, 3 more rights: +1.50 points, over the bar; 3 images move, the interval covers 0.
        ((100, 0, 3, 97), 1.5, True, False),
        # 100 units, 2 more rights: +2.00 points.
        ((50, 0, 2, 48), 2.0, True, False),
        # 2 fewer of 200: -1.00 point: on the bar, in either direction.
        ((98, 2, 0, 100), -1.0, False, False),
    ],
)
def test_a_score_move_passes_up_to_one_point(counts, move, over, outside):
    result = certified([model("m", *counts)])
    found = criterion(result, "difference")
    (row,) = [r for r in result["tasks"][0]["models"][0]["moves"]["cognition"] if r["column"] == "overall"]
    assert row["difference"] == pytest.approx(move, abs=1e-9)
    assert found["value"] == pytest.approx(abs(move), abs=1e-9)
    assert row["interval"][0] <= 0 <= row["interval"][1]
    assert found["passed"] is not over and ("over the bar: m" in found["detail"]) is over, found
    assert "interval excludes 0" not in found["detail"]


def test_a_consistent_bias_under_a_point_fails():
    """40 images of 200 units, the reference calls 100 right on each; the candidate one more on the even
    images, two more on the odd: +0.5 and +1.0 points per image, +0.75 points overall. Every image moves
    the same way, so the interval over images excludes 0: FAIL, though 0.75 is under the bar."""
    units = []
    for image in range(40):
        extra = 1 + image % 2
        units += [(1, 1)] * 100 + [(0, 1)] * extra + [(0, 0)] * (100 - extra)
    result = certified([model("m", 0, 0, 0, 0, per_image=200, units=units)])
    found = criterion(result, "difference")
    (row,) = [r for r in result["tasks"][0]["models"][0]["moves"]["cognition"] if r["column"] == "overall"]
    assert row["difference"] == pytest.approx(0.75, abs=1e-9) and row["interval"][0] > 0
    assert found["passed"] is False and found["value"] == pytest.approx(0.75, abs=1e-9)
    assert found["detail"] == "largest: m; interval excludes 0: m"


def test_a_move_on_a_bar_of_its_own_value_passes():
    one = [model("m", 50, 0, 1, 49)]  # +1.00 point
    assert criterion(certified(one, cert.Bars(max_difference=1.0)), "difference")["passed"] is True
    assert criterion(certified(one, cert.Bars(max_difference=0.99)), "difference")["passed"] is False
    # a bar of 2 points: a move of 1.5 (3 more rights of 200) is under it
    under = [model("m", 100, 0, 3, 97)]
    assert criterion(certified(under, cert.Bars(max_difference=2.0)), "difference")["passed"] is True


def test_a_judge_on_every_boundary_passes_and_one_step_past_each_fails():
    """Three models (40, 50, 60 right of 100), the candidate 4 of each's rights wrong and 5 wrongs right:
    each score +1.00 point, order kept (tau 1), and pooled p_o = 273/300 = 0.91 with right shares 0.50 and
    0.51: kappa = (0.91 - 0.5) / 0.5 = 0.82."""
    models = [model(f"m{m}", r - 4, 4, 5, 100 - r - 5) for m, r in enumerate((40, 50, 60))]
    result = certified(models, cert.Bars(min_kappa=0.82, min_tau=1.0, max_difference=1.0))
    values = {c["name"]: c["value"] for c in result["tasks"][0]["criteria"]}
    assert values == {"kappa": pytest.approx(0.82, abs=1e-9), "tau": pytest.approx(1.0), "difference": 1.0}
    assert result["status"] == "PASS" and result["tasks"][0]["status"] == "PASS"
    assert certified(models)["status"] == "PASS"  # the default bars
    for bars in (
        cert.Bars(min_kappa=0.8201, min_tau=1.0, max_difference=1.0),
        cert.Bars(min_kappa=0.82, min_tau=1.0001, max_difference=1.0),
        cert.Bars(min_kappa=0.82, min_tau=1.0, max_difference=0.9999),
    ):
        assert certified(models, bars)["status"] == "FAIL", bars


def test_the_kappa_intervals_are_drawn_with_the_seed_given():
    """Each model's and the pooled kappa interval come from the certificate's own resamples and seed, as the
    certificate states them (``settings``), so anyone re-deriving it with those gets the same bounds."""
    units = [(n % 2, (n // 3) % 2) if n % 5 else (1, 1) for n in range(240)]  # 240 images: intervals given
    models = [model("m", 0, 0, 0, 0, units=units)]
    pairs = [agreement.VerdictPair(f"img{n}", CATEGORIES[n % len(CATEGORIES)], a, b) for n, (a, b) in enumerate(units)]
    table = agreement.confusion_table(pairs, CATEGORIES)
    seen = set()
    for seed in (3, 4):
        result = certified(models, resamples=200, seed=seed)
        task = result["tasks"][0]
        expected = agreement.kappa_with_intervals(table, 200, seed)["overall"]["interval"]
        assert expected is not None
        assert task["models"][0]["kappa_interval"] == expected
        assert task["agreement"]["overall"]["interval"] == expected
        assert result["settings"] == {"resamples": 200, "seed": seed}
        seen.add(tuple(expected))
    assert len(seen) == 2  # the seed matters: a certificate drawn with another seed would not re-derive


def test_raw_agreement_and_prevalences_by_hand_to_two_decimals():
    """Three units, (right, right), (right, wrong), (wrong, wrong): the judges agree on 2 of 3 (66.67%), the
    reference says right on 2 (66.67%), the candidate on 1 (33.33%); pooled and per model alike."""
    result = certified([model("m", 1, 1, 0, 1)])
    task = result["tasks"][0]
    overall = task["agreement"]["overall"]
    assert (overall["raw_agreement"], overall["prevalence_reference"], overall["prevalence_candidate"]) == (
        66.67,
        66.67,
        33.33,
    )
    assert overall["confusion"] == [[1, 0], [1, 1]]  # rows: the reference's verdict 0, 1; columns: the candidate's
    assert task["models"][0]["raw_agreement"] == 66.67 and task["models"][0]["units"] == 3
    # per CogBench category: unit 0 (agreed) is in the first, unit 1 (not agreed) in the second
    assert list(task["agreement"]) == [*CATEGORIES, "overall"]
    assert [task["agreement"][c]["raw_agreement"] for c in CATEGORIES[:3]] == [100.0, 0.0, 100.0]
