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

from cogbench.reference_eval.explaining.explain import decompose, explain_runs
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
