"""``judges certify`` beyond its bars (issue 48's mutation re-run of ``certifying/certify.py``): what cannot be
paired is refused, CODIS queries and pairs are counted by hand, several tasks make one certificate, and the
counts that decide whether tau is computed. Fast, like ``test_certify_bars.py``, whose helpers it uses: the
mutation run of ``certify.py`` runs both before the end-to-end ``test_judge_certify.py``."""

from __future__ import annotations

import pytest
from test_certify_bars import CATEGORIES, certified, criterion, model, ranked

from cogbench.errors import UsageError
from cogbench.reference_eval.certifying import certify as cert
from cogbench.reference_eval.certifying.verdict_archive import JudgedAnswers
from cogbench.schemas.features import CODIS_CATEGORIES

# The task as read from a run folder or archive: built at run time, an equal string but never the very object
# of certify's literal "codis" (so `is` for `==` there would be seen).
CODIS = "".join(list("codis"))


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


def test_a_model_with_no_answer_judged_by_both_judges_is_refused_in_one_line():
    """Before: kappa's resampling reshaped the empty table and certify ended in a ValueError traceback."""
    judged, unjudged = model("a", 0, 0, 0, 0, units=[(1, 1), (0, 0)]), model("b", 0, 0, 0, 0, units=[(1, None)])
    message = refusal([judged[0], unjudged[0]], [judged[1], unjudged[1]])
    assert message == (
        "ref/b and cand/b: model b: no description answer has a verdict from both judges; "
        "give runs whose judges each judged at least one answer"
    )
