"""``explain``'s attribution on hand-made details lines (issue 48 item 10). Fast: no build, no model; the
mutation runs of ``explaining/explain.py`` and ``explaining/stages.py`` start here.

- A VQA answer read to another letter from the same response (an extractor that changed) is the parse
  stage's, never the judge's, though its verdict changes too.
- B - A is split exactly (the shares add up to it) even when a column is left with no unit partway
  through the switching, worked by hand below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cogbench.errors import UsageError
from cogbench.reference_eval.explaining.explain import decompose, explain_runs, stage_note, stated
from cogbench.reference_eval.explaining.stages import STAGES, compare_item
from cogbench.reference_eval.recording.run_reader import ScoredRun


def vqa_line(item: str, response: str, extracted: str | None, category: str = "Attributes", answer: str = "B"):
    return {
        "item_id": item,
        "image_id": f"img-{item}",
        "category": category,
        "answer": answer,
        "response": response,
        "extracted": extracted,
        "extracted_official": extracted,
        "correct": extracted == answer,
        "correct_official": extracted == answer,
        "answer_status": "answered",
    }


def vqa_run(name: str, lines: list[dict]) -> ScoredRun:
    """A scored VQA run as read back: its stated numbers are the details' own (hits / questions)."""
    metrics = {}
    for metric, field in (("accuracy", "correct"), ("accuracy_official", "correct_official")):
        per_category: dict[str, list[bool]] = {}
        for line in lines:
            per_category.setdefault(line["category"], []).append(line[field])
        metrics[metric] = {
            "overall": 100.0 * sum(line[field] for line in lines) / len(lines),
            "per_category": {c: 100.0 * sum(v) / len(v) for c, v in per_category.items()},
        }
    counts = {"items": len(lines), "dataset_items": len(lines), "dataset_images": len(lines)}
    scores = {"task": "vqa", "model": name, "metrics": metrics, "counts": counts, "dataset_revision": "r"}
    return ScoredRun(Path(name), scores, lines, None)


def test_an_extraction_change_is_the_parse_stage_not_the_judge_stage():
    """Same response, another letter read from it (and so another verdict): parse, listed under judge too."""
    a = vqa_line("q1", "It is B, or maybe C.", "B")
    b = vqa_line("q1", "It is B, or maybe C.", "C")
    found = compare_item("vqa", a, b, None, None)
    assert found.differing == ["parse", "judge"] and found.first == "parse"
    same = [vqa_line("q0", "B", "B")]
    explanation = explain_runs(vqa_run("A", [*same, a]), vqa_run("B", [*same, b]))
    assert explanation.assigned["parse"] == ["q1"] and explanation.assigned["judge"] == []
    assert explanation.listed["judge"] == ["q1"]
    # 2 questions, one right turned wrong: 100 -> 50, all of it parse's.
    overall = explanation.metrics["accuracy"]["overall"]
    assert (overall["a"], overall["b"], overall["difference"]) == (100.0, 50.0, -50.0)
    assert overall["shares"] == {**dict.fromkeys(STAGES, 0.0), "parse": -50.0}


@pytest.mark.parametrize("field", ["extracted", "extracted_official"])
def test_either_extractor_alone_is_the_parse_stage(field):
    a = vqa_line("q1", "B", "B")
    b = {**a, field: "C"}
    assert compare_item("vqa", a, b, None, None).first == "parse"


def vector(hits: list[float], totals: list[float]) -> tuple[np.ndarray, np.ndarray]:
    return np.array(hits, float), np.array(totals, float)


def test_the_shares_add_up_when_a_column_has_no_unit_partway():
    """Columns (c, overall). A: p right in c (1/1) and s wrong elsewhere (overall only, 0/1).
    B: p dropped, r added in c and wrong (0/1), s unchanged. Switched p first, then r:

    - switch p out: c has no unit (undefined: its share 0, its last number 100 kept); overall 1/2 -> 0/1: -50;
    - switch r in: c 0/1 = 0, from the last defined 100: -100; overall 0/2 = 0: 0 - 0 = 0.

    c: A 100, B 0, shares -100 (p 0, r -100); overall: A 50, B 0, shares -50 (p -50, r 0)."""
    vectors_a = {"p": vector([1, 1], [1, 1]), "s": vector([0, 0], [0, 1])}
    vectors_b = {"r": vector([0, 0], [1, 1]), "s": vector([0, 0], [0, 1])}
    order = [("items", "p"), ("items", "r")]
    start, end, shares, per_item = decompose(order, vectors_a, vectors_b, 2)
    assert start.tolist() == [100.0, 50.0] and end.tolist() == [0.0, 0.0]
    assert shares["items"].tolist() == [-100.0, -50.0]
    assert sum(shares[stage] for stage in STAGES).tolist() == (end - start).tolist()
    assert per_item["p"].tolist() == [0.0, -50.0] and per_item["r"].tolist() == [-100.0, 0.0]


def test_the_shares_add_up_when_a_column_is_empty_at_the_start():
    """A has no unit in c (undefined), B has one right: c's share is 0 (nothing to move from), B - A undefined;
    the overall column still adds up: A 0/1 = 0, B 1/2 = 50."""
    vectors_a = {"s": vector([0, 0], [0, 1])}
    vectors_b = {"s": vector([0, 0], [0, 1]), "r": vector([1, 1], [1, 1])}
    start, end, shares, per_item = decompose([("items", "r")], vectors_a, vectors_b, 2)
    assert np.isnan(start[0]) and end.tolist() == [100.0, 50.0]
    assert shares["items"].tolist() == [0.0, 50.0] and per_item["r"].tolist() == [0.0, 50.0]


def five_and_five() -> tuple[ScoredRun, ScoredRun]:
    """A holds q1, q2, q3, q5, q6, all right (5/5 = 100); B holds q1, q2, q4, q5, q6, two right (2/5 = 40).

    q1: equal. q2: the same response read to C in B (parse; its verdict changes too, so listed under judge).
    q3: A's only. q4: B's only, wrong. q5: B's gold answer is C (items), so B's B is wrong. q6: B's response
    has a full stop more, read to the same right letter (output, listed under parse: its scored text changed)."""
    a = [vqa_line("q1", "B", "B"), vqa_line("q2", "B or C", "B"), vqa_line("q3", "B", "B")]
    a += [vqa_line("q5", "B", "B"), vqa_line("q6", "B", "B")]
    b = [vqa_line("q1", "B", "B"), vqa_line("q2", "B or C", "C"), vqa_line("q4", "C", "C")]
    b += [vqa_line("q5", "B", "B", answer="C"), vqa_line("q6", "B.", "B")]
    return vqa_run("A", a), vqa_run("B", b)


def test_each_stage_gets_its_items_in_switching_order_and_their_shares():
    """Switching order: items (gold q5, then B's new q4, then A's dropped q3), output q6, parse q2. Overall, from
    A's 5/5: q5 right -> wrong 4/5 = 80 (-20); q4 added wrong 4/6 = 66.67 (-13.33); q3 dropped right 3/5 = 60
    (-6.67); q6 unchanged 3/5 (0); q2 right -> wrong 2/5 = 40 (-20). items -40, parse -20: B - A = -60."""
    a, b = five_and_five()
    explanation = explain_runs(a, b)
    assert {stage: items for stage, items in explanation.assigned.items() if items} == {
        "items": ["q5", "q4", "q3"],
        "output": ["q6"],
        "parse": ["q2"],
    }
    assert {stage: items for stage, items in explanation.listed.items() if items} == {
        "items": ["q3", "q4", "q5"],
        "output": ["q6"],
        "parse": ["q2", "q6"],
        "judge": ["q2", "q5"],
    }
    overall = explanation.metrics["accuracy"]["overall"]
    assert (overall["a"], overall["b"], overall["difference"]) == (100.0, 40.0, -60.0)
    expected = {**dict.fromkeys(STAGES, 0.0), "items": -40.0, "parse": -20.0}
    assert overall["shares"] == pytest.approx(expected, abs=1e-9)
    assert explanation.contributions["accuracy"] == pytest.approx(
        {"q5": -20.0, "q4": -40 / 3, "q3": -20 / 3, "q2": -20.0}, abs=1e-9
    )
    # every line is in category Attributes, not a CogBench category: those columns have no number
    assert explanation.metrics["accuracy"]["time"] == {"a": None, "b": None, "difference": None, "shares": None}
    assert list(explanation.metrics) == ["accuracy", "accuracy_official"]
    assert (explanation.a["items"], explanation.b["items"]) == (5, 5)
    assert (explanation.a["labels"], explanation.a["partial"]) == (["SAMPLE (5 of 251 images)"], True)
    assert (explanation.a["run"], explanation.b["model"]) == ("A", "B")
    assert explanation.details_b["q4"]["response"] == "C"


def test_a_stated_number_apart_from_the_recomputed_one_is_the_metric_stage():
    """B's scores.json states 41 where its details give 40: the residual 41 - 40 = 1 point is metric's, and the
    shares still add up to the stated B - A = -59. A partial B states ``overall_partial`` instead."""
    a, b = five_and_five()
    b.scores["metrics"]["accuracy"]["overall"] = 41.0
    overall = explain_runs(a, b).metrics["accuracy"]["overall"]
    assert (overall["b"], overall["difference"]) == (41.0, -59.0)
    assert overall["shares"] == pytest.approx(
        {**dict.fromkeys(STAGES, 0.0), "items": -40.0, "parse": -20.0, "metric": 1.0}
    )
    b.scores["metrics"]["accuracy"] = {"overall": None, "overall_partial": 42.0, "per_category": {}}
    b.scores["complete"] = False
    a.scores["counts"] = b.scores["counts"] = {}  # no SAMPLE label: only B's "complete" makes it partial
    explanation = explain_runs(a, b, shown=("run a", "run b"))
    assert explanation.metrics["accuracy"]["overall"]["b"] == 42.0
    assert explanation.metrics["accuracy"]["overall"]["shares"]["metric"] == pytest.approx(2.0)
    assert (explanation.a["run"], explanation.b["run"]) == ("run a", "run b")
    assert (explanation.a["labels"], explanation.a["partial"], explanation.b["partial"]) == ([], False, True)


def test_stated_reads_numbers_only():
    assert stated({"overall": 50}, "overall") == 50.0
    assert stated({"overall": None, "overall_partial": 40.5}, "overall") == 40.5
    assert stated({"overall": 0.0, "overall_partial": 40.5}, "overall") == 0.0  # a stated 0 is a number
    assert stated({"overall": True}, "overall") is None  # a bool is no score
    assert stated({"overall": "50"}, "overall") is None
    assert stated({"overall": 1, "per_category": {"time": 25}}, "time") == 25.0
    assert stated({"per_category": None}, "time") is None and stated({}, "time") is None


def test_two_tasks_are_refused_in_one_line():
    a, _ = five_and_five()
    codis = ScoredRun(Path("C"), {**a.scores, "task": "codis"}, [], None)
    with pytest.raises(UsageError) as raised:
        explain_runs(a, codis)
    assert str(raised.value) == "cannot explain A against C: they score different tasks ('vqa' and 'codis')"


def test_a_stage_not_recorded_is_said_with_its_count():
    a, b = five_and_five()
    explanation = explain_runs(a, b)  # VQA lines without prompt hashes, runs without run.json
    assert explanation.not_recorded == {**dict.fromkeys(STAGES, 0), "prompt": 4, "generation": 4}
    assert stage_note(explanation, "prompt") == (
        "not recorded for 4 shared item(s): a scoring keeps no rendered prompt hash (the authors' and "
        "VLMEvalKit's files keep no prompt); their differences fall to the next recorded stage"
    )
    assert stage_note(explanation, "generation").startswith("not recorded for 4 shared item(s): a scoring keeps no")
    assert stage_note(explanation, "output") == ""
    explanation.not_recorded["output"] = 1
    assert stage_note(explanation, "output").endswith(
        ": a scoring did not record it; their differences fall to the next recorded stage"
    )
