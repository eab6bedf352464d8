"""``compare --judges`` step by step on hand-made runs: labels, verdicts, pairing, kappa, score moves, rankings.

No scoring, no judges, no files (tests/test_judge_agreement.py scores real runs end to end): every run is
written out here, passed through JSON as ``run_reader`` reads it, and every expected value is counted by
hand in the docstrings. The mutation run of ``reports/judge_agreement.py`` runs this file second.
"""

from __future__ import annotations

import json

import pytest

from cogbench.errors import UsageError
from cogbench.reference_eval.metrics import small_sample
from cogbench.reference_eval.recording.run_reader import ScoredRun
from cogbench.reference_eval.reports.judge_agreement import (
    judge_agreement,
    judge_identity,
    judge_label,
    needs_endpoint,
    pair_agreement,
    pair_runs,
    report_section,
    verdicts,
)

LOCATION, TEMPORAL = "Location and Orientation", "Temporal Information"
RULE = {"kind": "rule"}
GPT = {"kind": "openai", "model": "gpt-4o"}
HOST = {"endpoint_host": "127.0.0.1", "endpoint_id": "abc123"}


def run(folder, judge, answers="h1", details=(), task="codis", endpoint=None, analyses=None, model="m1"):
    """A scored run as ``run_reader`` returns it: its JSON read back (no string is a literal of this file)."""
    provenance = {"answers_sha256": answers} if answers else {}
    if endpoint:
        provenance["judge"] = endpoint
    scores = {"task": task, "model": model, "dataset_revision": "r1", "judge": judge, "provenance": provenance}
    if analyses:
        scores["analyses"] = analyses
    scores, details = json.loads(json.dumps([scores, list(details)]))
    return ScoredRun(folder, scores, details, None)


def codis_item(item, image, category, *rights):
    queries = [{"query": q, "right": r} for q, r in enumerate(rights, 1)]
    return {"item_id": item, "image_id": image, "category": category, "outputs_differ": False, "queries": queries}


def description_item(image, *verdicts_, key="cognition"):
    cognition = [{"category": c, "index": i, "verdict": v} for i, (c, v) in enumerate(verdicts_)]
    return {"item_id": image, "recognition": {"annotated": 1, "recognized": 1}, key: cognition}


# -- labels and identities -------------------------------------------------------------------------


def test_judge_labels_name_model_parsing_and_where_asked_the_endpoint(tmp_path):
    gpt = run(tmp_path, GPT, endpoint=HOST)
    assert judge_label(gpt) == "openai:gpt-4o, tolerant parsing"  # the parsing recorded before it was, by default
    assert judge_label(gpt, True) == "openai:gpt-4o, tolerant parsing, endpoint 127.0.0.1 #abc123"
    official = run(tmp_path, {**GPT, "parsing": "official"}, endpoint={"endpoint_host": "h"})
    assert judge_label(official, True) == "openai:gpt-4o, official parsing, endpoint h #?"
    assert judge_identity(gpt) == ("openai:gpt-4o, tolerant parsing", "abc123")  # the id, where recorded
    assert judge_identity(official) == ("openai:gpt-4o, official parsing", "h")
    assert judge_identity(run(tmp_path, RULE)) == ("rule", None)
    assert judge_identity(run(tmp_path, RULE, answers=None)) == ("rule", None)  # no provenance at all
    offline = {"offline_judge": {"model": "roberta-large", "threshold": 0.9}}
    assert (
        judge_label(run(tmp_path, {"kind": "bertscore"}, analyses=offline)) == "bertscore, roberta-large, threshold 0.9"
    )
    nli = {"offline_judge": {"model": "deberta"}}
    assert judge_label(run(tmp_path, {"kind": "nli"}, analyses=nli)) == "nli, deberta"
    rouge = {"offline_judge": {"threshold": 0.5}}
    assert judge_label(run(tmp_path, {"kind": "rouge"}, analyses=rouge)) == "rouge, threshold 0.5"
    assert judge_label(run(tmp_path, {"kind": "rouge"}, analyses={"other": 1})) == "rouge"
    assert judge_label(run(tmp_path, {"kind": "rouge"})) == "rouge"
    assert judge_label(run(tmp_path, RULE)) == "rule"


def test_the_labels_name_the_endpoints_only_where_the_judges_share_a_label(tmp_path):
    """``needs_endpoint``: a pair whose two labels are equal (one model at two endpoints), in either order."""
    gpt, rule, nli = run(tmp_path, GPT), run(tmp_path, RULE), run(tmp_path, {"kind": "nli"})
    assert needs_endpoint([(gpt, run(tmp_path, GPT, endpoint=HOST))])
    assert not needs_endpoint([(gpt, rule)]) and not needs_endpoint([(rule, gpt)])
    assert not needs_endpoint([(nli, gpt)]) and not needs_endpoint([(gpt, nli)])
    assert needs_endpoint([(gpt, rule), (rule, run(tmp_path, RULE))])


# -- verdicts ---------------------------------------------------------------------------------------


def test_codis_verdicts_are_per_query_and_a_missing_verdict_is_none(tmp_path):
    details = [codis_item("p1", "img0", LOCATION, True, False), codis_item("p2", "img1", TEMPORAL, None, True)]
    assert verdicts(run(tmp_path, RULE, details=details)) == {
        ("p1", 1): ("img0", LOCATION, 1),
        ("p1", 2): ("img0", LOCATION, 0),
        ("p2", 1): ("img1", TEMPORAL, None),
        ("p2", 2): ("img1", TEMPORAL, 1),
    }


def test_description_verdicts_are_per_key_point_from_the_llm_or_the_offline_judge(tmp_path):
    details = [
        description_item("001", ("time", True), ("mental", None)),
        description_item("002", ("event", False), key="cognition_nli"),
        {"item_id": "003", "recognition": {"annotated": 0, "recognized": 0}},  # no key points judged
    ]
    assert verdicts(run(tmp_path, GPT, details=details, task="description")) == {
        ("001", "time", 0): ("001", "time", 1),
        ("001", "mental", 1): ("001", "mental", None),
        ("002", "event", 0): ("002", "event", 0),
    }
    unjudged = run(tmp_path, GPT, details=[details[2]], task="description")
    with pytest.raises(UsageError, match=r": no Cognition verdicts \(scored with --judge none\); nothing to compare$"):
        verdicts(unjudged)


# -- pairing ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("judge_a", [RULE, GPT], ids=["A sorts after B", "A sorts before B"])
def test_runs_pair_by_answers_with_the_first_runs_judge_as_a_in_every_pair(tmp_path, judge_a):
    """Model 2's group lists B first, and runs[1] and runs[-1] are B's: A is still the first run's judge."""
    judge_b = GPT if judge_a is RULE else RULE
    a1, b1 = run(tmp_path / "a1", judge_a, "h1"), run(tmp_path / "b1", judge_b, "h1")
    a2, b2 = run(tmp_path / "a2", judge_a, "h2"), run(tmp_path / "b2", judge_b, "h2")
    pairs = pair_runs([a1, b2, a2, b1])
    assert [(a.folder.name, b.folder.name) for a, b in pairs] == [("a1", "b1"), ("a2", "b2")]


def test_pairing_refuses_groups_not_of_two_runs_and_two_runs_of_one_judge(tmp_path):
    lone = [run(tmp_path / "a", RULE, "h1"), run(tmp_path / "b", GPT, "h1"), run(tmp_path / "c", GPT, "h2")]
    with pytest.raises(UsageError) as raised:
        pair_runs(lone)
    assert str(raised.value) == (
        f"--judges: 1 run(s) judged the same answers ({tmp_path / 'c'}); give exactly two scorings "
        "(two judges) of each model's predictions"
    )
    three = [run(tmp_path / "a", RULE), run(tmp_path / "b", GPT), run(tmp_path / "c", {"kind": "nli"})]
    with pytest.raises(UsageError, match=r"^--judges: 3 run\(s\) judged the same answers \(.*/a, .*/b, .*/c\); "):
        pair_runs(three)
    alike = [run(tmp_path / "a", GPT, endpoint=HOST), run(tmp_path / "b", GPT, endpoint=HOST)]
    with pytest.raises(UsageError) as raised:
        pair_runs(alike)
    assert str(raised.value) == (
        f"--judges: {tmp_path / 'a'} and {tmp_path / 'b'} were judged alike "
        "(openai:gpt-4o, tolerant parsing, endpoint 127.0.0.1 #abc123)"
    )


def test_pairing_refuses_pairs_of_other_judges_or_of_other_tasks(tmp_path):
    nli = {"kind": "nli"}
    mixed = [run(tmp_path, RULE, "h1"), run(tmp_path, GPT, "h1", endpoint=HOST), run(tmp_path, RULE, "h2")]
    with pytest.raises(UsageError) as raised:
        pair_runs([*mixed, run(tmp_path, nli, "h2")])
    assert str(raised.value) == (
        "--judges: the pairs were judged by different judges (rule vs nli; "
        "rule vs openai:gpt-4o, tolerant parsing, endpoint 127.0.0.1 #abc123); "
        "every model's predictions must be scored by the same two judges"
    )
    llm_first = [
        run(tmp_path, GPT, "h1", endpoint=HOST),
        run(tmp_path, RULE, "h1"),
        run(tmp_path, GPT, "h2", endpoint=HOST),
    ]
    with pytest.raises(UsageError) as raised:  # judge A's endpoint is named too
        pair_runs([*llm_first, run(tmp_path, nli, "h2")])
    assert str(raised.value).startswith(
        "--judges: the pairs were judged by different judges (openai:gpt-4o, tolerant parsing, endpoint 127.0.0.1 "
        "#abc123 vs nli; openai:gpt-4o, tolerant parsing, endpoint 127.0.0.1 #abc123 vs rule); "
    )
    tasks = [run(tmp_path, RULE, "h1"), run(tmp_path, GPT, "h1"), run(tmp_path, RULE, "h2", task="description")]
    with pytest.raises(UsageError) as raised:
        pair_runs([*tasks, run(tmp_path, GPT, "h2", task="description")])
    assert str(raised.value) == "--judges: runs of different tasks (codis, description); compare one task at a time"


# -- one pair: kappa, flips and score moves ---------------------------------------------------------

# Model m1's four CODIS pairs on three images, as judge A (the rule) and judge B (an LLM) read them.
A_DETAILS = [
    codis_item("i0", "img0", LOCATION, True, True),
    codis_item("i1", "img1", LOCATION, False, True),
    codis_item("i2", "img2", TEMPORAL, True, False),
    codis_item("i3", "img2", TEMPORAL, True, None),
]
B_DETAILS = [
    codis_item("i0", "img0", LOCATION, True, False),
    codis_item("i1", "img1", LOCATION, None, True),
    codis_item("i2", "img2", TEMPORAL, False, False),
    codis_item("i3", "img2", TEMPORAL, True, True),
]
EMPTY = {"kappa": None, "interval": None, "items": 0, "flips": 0, "flip_share": None}
EMPTY = {**EMPTY, "a_higher": 0, "b_higher": 0, "images": 0, "constant": []}


def test_one_pair_kappa_flips_and_moves_counted_by_hand(tmp_path):
    """Two queries have a verdict from one judge only (i1 q1, i3 q2): left out. The other six (A, B):
    Location (1,1) (1,0) (1,1): A constant, kappa 0; Temporal (1,0) (0,0) (1,1): p_o 2/3, p_e 4/9, kappa 0.4;
    overall p_o 4/6, p_e 5/6*3/6 + 1/6*3/6 = 1/2, kappa 1/3. acc_q counts every judged query of a judge
    (A 5/7, B 4/7), acc_p the pairs both of whose queries it judged (A: i0 i1 i2, 1 right; B: i0 i2 i3, 1)."""
    a, b = run(tmp_path / "a", RULE, details=A_DETAILS), run(tmp_path / "b", GPT, details=B_DETAILS)
    result = judge_agreement([a, b], resamples=50, seed=3)
    assert {k: v for k, v in result.items() if k != "pairs"} == {
        "task": "codis",
        "judge_a": "rule",
        "judge_b": "openai:gpt-4o, tolerant parsing",
        "method": "Cohen's kappa, percentile bootstrap, clustered by image (50 resamples, seed 3); score moves "
        "B - A: paired ratio linearisation over images, t interval with G-1 degrees of freedom",
        "ranking": {},
    }
    (pair,) = result["pairs"]
    assert pair["a"] == {"folder": str(tmp_path / "a"), "model": "m1", "judge": "rule"}
    assert pair["b"] == {"folder": str(tmp_path / "b"), "model": "m1", "judge": "openai:gpt-4o, tolerant parsing"}
    assert (pair["labels"], pair["images"], pair["unjudged"]) == ([0, 1], 3, 2)
    row = {"interval": None, "b_higher": 0}
    assert pair["kappa"] == {
        LOCATION: {**row, "kappa": 0.0, "items": 3, "flips": 1, "flip_share": pytest.approx(100 / 3)}
        | {"a_higher": 1, "images": 2, "constant": ["A"]},
        TEMPORAL: {**row, "kappa": 0.4, "items": 3, "flips": 1, "flip_share": pytest.approx(100 / 3)}
        | {"a_higher": 1, "images": 1, "constant": []},
        "Cultural Background": EMPTY,
        "Attributes": EMPTY,
        "Relationships": EMPTY,
        "overall": {**row, "kappa": 0.3333, "items": 6, "flips": 2, "flip_share": pytest.approx(100 / 3)}
        | {"a_higher": 2, "images": 3, "constant": []},
    }
    moves = {name: [(r["column"], r["a"], r["b"], r["move"]) for r in rows] for name, rows in pair["moves"].items()}
    none = [(c, None, None, None) for c in ("Cultural Background", "Attributes", "Relationships")]
    assert moves == {
        "acc_p": [(LOCATION, 50.0, 0.0, -50.0), (TEMPORAL, 0.0, 50.0, 50.0), *none, ("overall", 33.3333, 33.3333, 0.0)],
        "acc_q": [
            (LOCATION, 75.0, 66.6667, -8.3333),
            (TEMPORAL, 66.6667, 50.0, -16.6667),
            *none,
            ("overall", 71.4286, 57.1429, -14.2857),
        ],
    }
    # B - A over the images img0-img2: B's right queries 1/2, 1/1, 2/4 against A's 2/2, 1/2, 2/3.
    paired = small_sample.paired_difference_t([1, 1, 2], [2, 1, 4], [2, 1, 2], [2, 2, 3])
    assert pair["moves"]["acc_q"][-1]["interval"] == paired["interval"] and paired["interval"] is not None
    assert "(2000 resamples, seed 0)" in judge_agreement([a, b])["method"]  # the defaults
    assert judge_agreement([b, a], resamples=5)["pairs"][0]["kappa"]["overall"]["b_higher"] == 2  # A is B now


def test_one_pair_of_description_runs_llm_against_an_offline_judge(tmp_path):
    """Key points (A, B): 001 time (1,1), mental (0,1); 002 time (1,0), event (1,1): p_o 1/2,
    p_e 3/4*3/4 + 1/4*1/4 = 5/8, kappa (1/2 - 5/8) / (3/8) = -1/3. Cognition: A 3/4, B 3/4."""
    a_details = [
        description_item("001", ("time", True), ("mental", False)),
        description_item("002", ("time", True), ("event", True)),
    ]
    b_details = [
        description_item("001", ("time", True), ("mental", True), key="cognition_rouge"),
        description_item("002", ("time", False), ("event", True), key="cognition_rouge"),
    ]
    a = run(tmp_path / "a", GPT, details=a_details, task="description")
    b = run(tmp_path / "b", {"kind": "rouge"}, details=b_details, task="description")
    result = judge_agreement([a, b], resamples=5)
    (pair,) = result["pairs"]
    assert list(pair["kappa"]) == [
        "time",
        "location",
        "character",
        "character_relationship",
        "event",
        "event_relationship",
        "next_event",
        "mental",
        "overall",
    ]
    assert (pair["kappa"]["overall"]["kappa"], pair["images"], pair["unjudged"]) == (-0.3333, 2, 0)
    moves = {r["column"]: (r["a"], r["b"], r["move"]) for r in pair["moves"]["cognition"]}
    assert (moves["time"], moves["mental"], moves["event"]) == (
        (100.0, 50.0, -50.0),
        (0.0, 100.0, 100.0),
        (100.0, 100.0, 0.0),
    )
    assert moves["overall"] == (75.0, 75.0, 0.0) and list(pair["moves"]) == ["cognition"]


def test_a_pair_of_two_item_sets_is_refused_and_one_model_at_two_endpoints_is_named_by_them(tmp_path):
    a = run(tmp_path / "a", RULE, details=A_DETAILS)
    with pytest.raises(UsageError, match=r"^cannot compare .*: items: 1 only in A, 0 only in B, 3 shared"):
        judge_agreement([a, run(tmp_path / "b", GPT, details=B_DETAILS[:3])], resamples=5)
    here = run(tmp_path / "a", GPT, details=A_DETAILS, endpoint=HOST)
    there = run(tmp_path / "b", GPT, details=B_DETAILS, endpoint={"endpoint_host": "10.0.0.2", "endpoint_id": "def"})
    assert pair_agreement(here, there, 5, 0)["a"]["judge"] == "openai:gpt-4o, tolerant parsing"  # not asked to
    result = judge_agreement([here, there], resamples=5)
    assert (result["judge_a"], result["judge_b"]) == (
        "openai:gpt-4o, tolerant parsing, endpoint 127.0.0.1 #abc123",
        "openai:gpt-4o, tolerant parsing, endpoint 10.0.0.2 #def",
    )
    assert result["pairs"][0]["b"]["judge"] == result["judge_b"]


# -- three or more models: the rankings ------------------------------------------------------------

# Per model, the rights of its two pairs (img0, img1) under judge A and judge B: acc_q A 100, 75, 25, 0;
# B 75, 25, 50, 0. acc_p A 100, 50, 0, 0; B 50, 0, 0, 0.
MODELS = {
    "m1": ([True, True, True, True], [True, True, True, False]),
    "m2": ([True, True, True, False], [True, False, False, False]),
    "m3": ([True, False, False, False], [True, False, True, False]),
    "m4": ([False] * 4, [False] * 4),
}


def model_runs(tmp_path, models):
    runs = []
    for model in models:
        for judge, rights in zip((RULE, GPT), MODELS[model]):
            details = [codis_item("p0", "img0", LOCATION, *rights[:2]), codis_item("p1", "img1", TEMPORAL, *rights[2:])]
            endpoint = HOST if judge is GPT else None  # an LLM judge records where it answered
            runs.append(
                run(tmp_path / f"{model}-{judge['kind']}", judge, model, details, endpoint=endpoint, model=model)
            )
    return runs


def test_three_models_rank_under_both_judges_two_do_not(tmp_path):
    """acc_q ranks m1 > m2 > m3 under A, m1 > m3 > m2 under B: one discordant pair of three, tau 1/3."""
    assert judge_agreement(model_runs(tmp_path, ["m1", "m2"]), resamples=5)["ranking"] == {}
    ranking = judge_agreement(model_runs(tmp_path, ["m1", "m2", "m3"]), resamples=5)["ranking"]
    assert list(ranking) == ["acc_p", "acc_q"]
    acc_q = ranking["acc_q"]
    assert (acc_q["models"], acc_q["tau"], acc_q["interval"]) == (3, 0.3333, None)
    assert (acc_q["scores_a"], acc_q["scores_b"]) == ([100.0, 75.0, 25.0], [75.0, 25.0, 50.0])
    assert acc_q["models_in_order"] == ["m1", "m2", "m3"] and ranking["acc_p"]["scores_a"] == [100.0, 50.0, 0.0]


def test_four_models_rank_too(tmp_path):
    """acc_q A 100 > 75 > 25 > 0, B 75, 25, 50, 0: only m2-m3 discordant of six pairs, tau (5 - 1) / 6."""
    ranking = judge_agreement(model_runs(tmp_path, ["m1", "m2", "m3", "m4"]), resamples=5)["ranking"]
    assert (ranking["acc_q"]["models"], ranking["acc_q"]["tau"]) == (4, 0.6667)


# -- cogbench report's section -----------------------------------------------------------------------


def test_the_report_pairs_the_judged_runs_of_each_task_and_leaves_the_rest_alone(tmp_path):
    """Two models judged twice give the tables and the chart; a lone scoring, a VQA run and two scorings
    without the answers' hash are not paired (nothing to say about them)."""
    runs = model_runs(tmp_path, ["m1", "m2"])
    unhashed = [run(tmp_path / "x", RULE, None, A_DETAILS), run(tmp_path / "y", GPT, None, B_DETAILS)]
    extra = [run(tmp_path / "lone", RULE, "h9", A_DETAILS), run(tmp_path / "vqa", RULE, "m1", task="vqa"), *unhashed]
    tables, figures, notes = report_section([*runs, *extra], tmp_path)
    assert notes == [] and [t.title for t in tables] == [
        "Judge agreement, codis: Cohen's kappa",
        "Judge agreement, codis: scores under each judge",
    ]
    assert [row[0].text for row in tables[0].rows] == ["m1", "m2"]
    assert figures == [
        (
            tmp_path / "judge_agreement_codis.png",
            "Judge agreement (codis): Cohen's kappa per category, rule vs openai:gpt-4o, tolerant parsing, "
            "95% intervals",
        )
    ]
    assert (tmp_path / "judge_agreement_codis.png").stat().st_size > 10_000


def test_the_report_notes_a_task_whose_runs_cannot_be_paired_and_goes_on(tmp_path):
    """CODIS: model 2 was judged by other judges (a note); descriptions: one pair (its tables). The runs of
    one hash but two tasks are a CODIS group (its first run's task) refused as such."""
    codis = [*model_runs(tmp_path, ["m1"]), run(tmp_path, RULE, "h2"), run(tmp_path, {"kind": "nli"}, "h2")]
    a = description_item("001", ("time", True), ("mental", False))
    b = description_item("001", ("time", True), ("mental", True), key="cognition_rouge")
    description = [
        run(tmp_path / "d", GPT, "d1", [a], task="description"),
        run(tmp_path / "r", {"kind": "rouge"}, "d1", [b], task="description"),
    ]
    tables, figures, notes = report_section([*codis, *description], tmp_path)
    assert notes == [
        "Judge agreement (codis) not computed: --judges: the pairs were judged by different judges "
        "(rule vs nli; rule vs openai:gpt-4o, tolerant parsing, endpoint 127.0.0.1 #abc123); every model's "
        "predictions must be scored by "
        "the same two judges"
    ]
    assert [t.title for t in tables] == [
        "Judge agreement, description: Cohen's kappa",
        "Judge agreement, description: scores under each judge",
    ]
    assert [path.name for path, _ in figures] == ["judge_agreement_description.png"]
    mixed = [run(tmp_path / "c", RULE, "h3", A_DETAILS), run(tmp_path / "d", GPT, "h3", [a], task="description")]
    tables, figures, notes = report_section(mixed, tmp_path)
    assert (tables, figures) == ([], []) and notes == [
        f"Judge agreement (codis) not computed: cannot compare runs of different tasks: {tmp_path / 'c'} has "
        f"'codis', {tmp_path / 'd'} has 'description'"
    ]
