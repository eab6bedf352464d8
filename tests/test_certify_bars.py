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

from cogbench.errors import UsageError
from cogbench.reference_eval.certifying import certify as cert
from cogbench.reference_eval.certifying.verdict_archive import JudgedAnswers
from cogbench.reference_eval.metrics import agreement
from cogbench.schemas.features import CODIS_CATEGORIES, COGBENCH_CATEGORIES

CATEGORIES = list(COGBENCH_CATEGORIES)
# The task as read from a run folder or archive: built at run time, an equal string but never the very object
# of certify's literal "codis" (so `is` for `==` there would be seen).
CODIS = "".join(list("codis"))


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


def refusal(references, candidates) -> str:
    with pytest.raises(UsageError) as raised:
        cert.certify(references, candidates)
    return str(raised.value)


def test_what_cannot_be_paired_is_refused_in_one_line_naming_it():
    """Each refusal of ``pair_verdicts`` (and ``certify``'s own), on one-unit verdict sets made by hand."""
    unit = {("i0", CATEGORIES[0], "1"): ("img0", CATEGORIES[0], 1)}

    def judged(judge, where, answers="x", task="description"):
        # labels built at run time, as those read from run folders are: equal strings, never the same object
        return JudgedAnswers(task, "m", answers, "".join(list(judge)), where, unit)

    ref, cand = judged("official", "ref/a"), judged("cand", "cand/a")
    assert refusal([], [cand]).startswith("certify needs reference verdicts (--reference)")
    assert refusal([ref], []).startswith("certify needs reference verdicts (--reference)")
    assert refusal([ref], [cand, judged("other", "cand/b")]) == (
        "certify one candidate judge at a time (the candidate runs hold cand; other)"
    )
    assert refusal([judged("cand", "ref/own")], [cand]) == (
        "ref/own: the reference was judged by the candidate itself (cand)"
    )
    # a reference judge that sorts before the candidate is another judge all the same
    accepted = cert.certify([judged("alpha", "ref/a")], [judged("beta", "cand/a")], resamples=50, seed=0)
    assert accepted["reference_judges"] == ["alpha"] and accepted["candidate_judge"] == "beta"
    assert refusal([ref, judged("official", "ref/b")], [cand]) == (
        "ref/b and ref/a: two reference verdict sets for the same answers"
    )
    # the same reference given twice (read twice: equal, two objects) is refused too
    assert refusal([ref, judged("official", "ref/a")], [cand]) == (
        "ref/a and ref/a: two reference verdict sets for the same answers"
    )
    assert refusal([ref], [judged("cand", "cand/y", answers="0123456789abcdef")]).startswith(
        "cand/y: no reference verdicts for these answers (description, model m, answers_sha256 0123456789ab);"
    )
    # the same answers under another task are other answers: no reference for them either
    assert refusal([ref], [judged("cand", "cand/v", task="vqa")]).startswith("cand/v: no reference verdicts")
    assert refusal([ref], [cand, judged("cand", "cand/again")]) == (
        "cand/again: the candidate judged these answers twice; give one run per model"
    )
    two = [ref, judged("second", "ref/z", answers="z")]
    assert refusal(two, [cand, judged("cand", "cand/z", answers="z")]) == (
        "description: the references were judged by different judges (official; second)"
    )


def codis_model(reference_judge: str = "official", candidate_judge: str = "cand"):
    """The CODIS model of the test below: its reference and candidate verdicts."""
    c0, c1 = CODIS_CATEGORIES[0], CODIS_CATEGORIES[1]
    verdicts = {  # key: (reference, candidate)
        ("p0", c0, "1"): ("img0", 1, 1),
        ("p0", c0, "2"): ("img0", 1, 0),
        ("p1", c1, "1"): ("img1", 1, 1),
        ("p1", c1, "2"): ("img1", 0, 0),
        ("p2", c0, "2"): ("img2", None, 1),  # before p2/1: a unit left out does not end the reading
        ("p2", c0, "1"): ("img2", 1, 1),
    }
    ref = {key: (image, key[1], a) for key, (image, a, _) in verdicts.items()}
    cand = {key: (image, key[1], b) for key, (image, _, b) in verdicts.items()}
    cand[("p3", c1, "1")] = ("img3", c1, 1)
    return (
        JudgedAnswers(CODIS, "m", "ans", reference_judge, "ref/m", ref),
        JudgedAnswers(CODIS, "m", "ans", candidate_judge, "cand/m", cand),
    )


def test_a_codis_certificate_counts_queries_and_whole_pairs_in_codis_categories():
    """One model on CODIS, worked by hand. Pair p0 (img0, category 0): the reference calls both queries right,
    the candidate the first only. p1 (img1, category 1): both judges call query 1 right, query 2 wrong. p2 (img2,
    category 0): the reference left query 2 unjudged (None), both call query 1 right. The candidate also judged a
    query p3/1 the reference has not. Judged by both: 5 queries (p0/1, p0/2, p1/1, p1/2, p2/1); left out: 2.
    Acc_q: the reference 4 of 5 right (80), the candidate 3 (60): -20 points. Acc_p counts a pair where both
    judged all its queries (p0, p1; not p2): the reference 1 of 2 (p0) = 50, the candidate 0 = 0: -50 points.
    Agreement: category 0 holds p0/1, p0/2, p2/1, agreeing on 2 of 3 (66.67%); category 1 p1's two, both agreed
    (100%); overall 4 of 5 (80%), the reference says right on 4 of 5, the candidate on 3."""
    c0, c1 = CODIS_CATEGORIES[0], CODIS_CATEGORIES[1]
    ref, cand = codis_model()
    result = cert.certify([ref], [cand], resamples=50, seed=0)
    (task,) = result["tasks"]
    assert task["task"] == "codis" and task["images"] == 3
    assert list(task["agreement"]) == [*CODIS_CATEGORIES, "overall"]
    rows = {name: task["agreement"][name] for name in (c0, c1, "overall")}
    assert [(r["items"], r["raw_agreement"]) for r in rows.values()] == [(3, 66.67), (2, 100.0), (5, 80.0)]
    empty = task["agreement"][CODIS_CATEGORIES[2]]  # no unit: nothing to divide by
    assert (empty["items"], empty["raw_agreement"], empty["prevalence_reference"], empty["prevalence_candidate"]) == (
        0,
        None,
        None,
        None,
    )
    assert (rows["overall"]["prevalence_reference"], rows["overall"]["prevalence_candidate"]) == (80.0, 60.0)
    (model_row,) = task["models"]
    assert (model_row["units"], model_row["left_out"], model_row["raw_agreement"]) == (5, 2, 80.0)
    overall = {
        name: next(r for r in model_row["moves"][name] if r["column"] == "overall") for name in ("acc_p", "acc_q")
    }
    assert [(r["reference"], r["candidate"], r["difference"]) for r in overall.values()] == [
        (50.0, 0.0, -50.0),
        (80.0, 60.0, -20.0),
    ]
    assert [r["column"] for r in model_row["moves"]["acc_q"]] == [c0, c1, "overall"]
    differences = [c for c in task["criteria"] if c["name"] == "difference"]
    assert [c["value"] for c in differences] == [50.0, 20.0] and result["status"] == "FAIL"


def test_tau_needs_three_models_and_says_how_many_were_given():
    """Two models: no ranking; the tau bar fails with the count given, whatever the verdicts."""
    found = criterion(certified(ranked((20, 30), (20, 30))), "tau")
    assert (found["value"], found["passed"]) == (None, False)
    assert found["detail"] == "needs three or more models (2 given)"


def test_two_tasks_each_certified_and_the_whole_passes_only_when_both_do():
    """Description: the three models of the boundary test above (PASS on the default bars). CODIS: the one model
    above, its reference judged by another judge (FAIL: one model, no tau). The tasks come in name order, each
    with its own reference judge; the whole FAILs. Each model's score interval is at 1 - 0.05 / models:
    0.95 for CODIS's one model, 1 - 0.05 / 3 = 0.983333 for description's three."""
    described = [model(f"m{m}", r - 4, 4, 5, 100 - r - 5) for m, r in enumerate((40, 50, 60))]
    ref, cand = codis_model(reference_judge="official-codis", candidate_judge="candidate")
    result = cert.certify([ref, *(r for r, _ in described)], [*(c for _, c in described), cand], resamples=50, seed=0)
    tasks = result["tasks"]
    assert [(t["task"], t["status"], t["reference_judge"]) for t in tasks] == [
        ("codis", "FAIL", "official-codis"),
        ("description", "PASS", "official"),
    ]
    assert [t["difference_level"] for t in tasks] == [0.95, 0.983333]
    assert [t["candidate_judge"] for t in tasks] == ["candidate", "candidate"]
    assert (result["status"], result["candidate_judge"]) == ("FAIL", "candidate")
    assert result["reference_judges"] == ["official", "official-codis"]
    assert result["bars"] == [
        {"name": "min_kappa", "value": 0.8, "source": cert.BAR_SOURCES["min_kappa"]},
        {"name": "min_tau", "value": 0.88, "source": cert.BAR_SOURCES["min_tau"]},
        {"name": "max_difference", "value": 1.0, "source": cert.BAR_SOURCES["max_difference"]},
    ]


def test_a_codis_pair_an_archive_gives_one_query_is_counted_from_that_query():
    """A verdict archive is read row by row, so an item may come with one query (``read_archive`` accepts it).
    p0: two queries, both judges right on both; solo: one query, the reference right, the candidate wrong.
    Acc_p: the reference 2 of 2 pairs (100), the candidate 1 of 2 (50): -50 points."""
    c0 = CODIS_CATEGORIES[0]
    verdicts = {("p0", c0, "1"): ("img0", 1, 1), ("p0", c0, "2"): ("img0", 1, 1), ("solo", c0, "1"): ("img1", 1, 0)}
    ref = {key: (image, c0, a) for key, (image, a, _) in verdicts.items()}
    cand = {key: (image, c0, b) for key, (image, _, b) in verdicts.items()}
    result = cert.certify(
        [JudgedAnswers(CODIS, "m", "ans", "official", "archive.parquet", ref)],
        [JudgedAnswers(CODIS, "m", "ans", "cand", "cand/m", cand)],
        resamples=50,
        seed=0,
    )
    moves = result["tasks"][0]["models"][0]["moves"]["acc_p"]
    row = next(r for r in moves if r["column"] == "overall")
    assert (row["reference"], row["candidate"], row["difference"]) == (100.0, 50.0, -50.0)


def test_a_codis_pair_is_counted_under_its_first_querys_image_and_category():
    """An archive gives each query its own image and category; Acc_p counts a pair once, under its first query's.
    p0's query 1 is in category 0 on img0, its query 2 in category 1 on img1: Acc_p has a category-0 column only."""
    c0, c1 = CODIS_CATEGORIES[0], CODIS_CATEGORIES[1]
    units = {("p0", c0, "1"): ("img0", c0, 1), ("p0", c1, "2"): ("img1", c1, 1)}
    result = cert.certify(
        [JudgedAnswers(CODIS, "m", "ans", "official", "archive.parquet", units)],
        [JudgedAnswers(CODIS, "m", "ans", "cand", "cand/m", units)],
        resamples=50,
        seed=0,
    )
    moves = result["tasks"][0]["models"][0]["moves"]
    assert [r["column"] for r in moves["acc_p"]] == [c0, "overall"]
    assert [r["column"] for r in moves["acc_q"]] == [c0, c1, "overall"]


def test_a_verdict_of_2_counts_as_right_in_the_prevalences():
    """Cognition verdicts 0, 1, 2 (a 2 counts 2). Units (2, 2), (2, 1), (0, 0): the reference says right (>= 1) on 2
    of 3 (66.67%), the candidate on 2 of 3; the confusion matrix has a row and column per label 0, 1, 2."""
    result = certified([model("m", 0, 0, 0, 0, units=[(2, 2), (2, 1), (0, 0)])])
    task = result["tasks"][0]
    overall = task["agreement"]["overall"]
    assert task["labels"] == [0, 1, 2]
    assert (overall["prevalence_reference"], overall["prevalence_candidate"]) == (66.67, 66.67)
    assert overall["confusion"] == [[1, 0, 0], [0, 0, 0], [0, 1, 1]]


def test_kappa_undefined_when_both_judges_say_right_throughout_fails_and_says_why():
    """Every unit right under both judges: p_e = 1, kappa = 0 / 0, undefined: the kappa bar fails, saying why."""
    found = criterion(certified([model("m", 10, 0, 0, 0)]), "kappa")
    assert (found["value"], found["passed"]) == (None, False)
    assert found["detail"] == "undefined: a judge gave one verdict throughout"


def test_tau_needs_every_model_scored():
    """Three CODIS models, the candidate judging as the reference does. m2's reference left every pair's query 2
    unjudged, so no m2 pair counts for Acc_p: Acc_p ranks two models only, and gets no tau; Acc_q ranks all three
    (50, 75 and 100, per model below), in the same order under both judges: tau 1."""
    c0 = CODIS_CATEGORIES[0]
    verdicts = {
        "m0": {"p0": (1, 1), "p1": (0, 0)},  # Acc_q 2 of 4 = 50, Acc_p 1 of 2
        "m1": {"p0": (1, 1), "p1": (1, 0)},  # Acc_q 3 of 4 = 75, Acc_p 1 of 2
        "m2": {"p0": (1, None), "p1": (1, None)},  # Acc_q 2 of 2 = 100, Acc_p none complete
    }
    refs, cands = [], []
    for name, items in verdicts.items():
        units = {
            (item, c0, str(query)): (f"{name}-{item}", c0, verdict)
            for item, pair in items.items()
            for query, verdict in enumerate(pair, 1)
        }
        refs.append(JudgedAnswers(CODIS, name, f"ans-{name}", "official", f"ref/{name}", units))
        cands.append(JudgedAnswers(CODIS, name, f"ans-{name}", "cand", f"cand/{name}", units))
    task = cert.certify(refs, cands, resamples=50, seed=0)["tasks"][0]
    assert list(task["ranking"]) == ["acc_q"] and task["ranking"]["acc_q"]["tau"] == pytest.approx(1.0)
    assert [c["value"] for c in task["criteria"] if c["name"] == "tau"] == [None, pytest.approx(1.0)]
    assert [m["moves"]["acc_p"][-1]["column"] for m in task["models"][:2]] == ["overall", "overall"]
    assert task["models"][2]["moves"]["acc_p"] == []


def test_a_judge_identical_to_the_reference_moves_no_score_and_its_zero_interval_covers_0():
    """The candidate gives the reference's verdicts: every image's difference is 0, so the t interval is
    [0, 0], which covers 0 (its ends included): the difference bar passes."""
    result = certified([model("m", 30, 0, 0, 70)])
    (row,) = [r for r in result["tasks"][0]["models"][0]["moves"]["cognition"] if r["column"] == "overall"]
    assert (row["difference"], row["interval"]) == (0.0, [0.0, 0.0])
    found = criterion(result, "difference")
    assert (found["value"], found["passed"], found["detail"]) == (0.0, True, "largest: m")


def test_a_move_within_1e_9_of_the_bar_is_on_it():
    """The bar is compared with a tolerance of 1e-9 (float sums): a move of 1.00 point passes a bar of
    1 - 1e-9, and fails a bar of 1 - 2e-9."""
    one = [model("m", 50, 0, 1, 49)]  # +1.00 point
    assert criterion(certified(one, cert.Bars(max_difference=1 - 1e-9)), "difference")["passed"] is True
    assert criterion(certified(one, cert.Bars(max_difference=1 - 2e-9)), "difference")["passed"] is False


def test_tau_over_257_models():
    """257 models (past CPython's cache of small ints, so model counts compare by value), each judged by the
    candidate as by the reference (odd models 1 of 2 units right, even ones 0 of 2): both rankings are the same,
    ties and all, so tau-b = 1."""
    models = [model(f"m{m:03d}", m % 2, 0, 0, 2 - m % 2) for m in range(257)]
    found = criterion(certified(models), "tau")
    assert found["value"] == pytest.approx(1.0) and found["passed"] is True


def test_a_pair_of_257_queries_counts_when_all_are_judged():
    """An archive item p0 with 257 queries (past CPython's cache of small ints: the counts compare by value), every
    one judged right by both, and p1 with one query judged wrong: Acc_p counts both pairs, 1 of 2 = 50."""
    c0 = CODIS_CATEGORIES[0]
    units = {("p0", c0, str(q)): ("img0", c0, 1) for q in range(257)}
    units[("p1", c0, "1")] = ("img1", c0, 0)
    result = cert.certify(
        [JudgedAnswers(CODIS, "m", "ans", "official", "archive.parquet", units)],
        [JudgedAnswers(CODIS, "m", "ans", "cand", "cand/m", units)],
        resamples=50,
        seed=0,
    )
    row = next(r for r in result["tasks"][0]["models"][0]["moves"]["acc_p"] if r["column"] == "overall")
    assert (row["reference"], row["candidate"]) == (50.0, 50.0)  # p0 right, p1 wrong
