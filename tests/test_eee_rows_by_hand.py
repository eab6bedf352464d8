"""Every Eval Ever instance rows on hand-made details lines (issue 48 item 10): a unit is ``is_correct``
only when all of it is right, and its score is its share right. Fast (no run folder, no model): the
mutation run of ``publishing/eee_records.py`` starts here."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogbench.reference_eval.publishing.eee_records import _rows
from cogbench.reference_eval.recording.run_reader import ScoredRun


def line(image: str, recognized: int, annotated: int) -> dict:
    matches = [{"entity": f"e{n}", "recognized": n < recognized, "similarity": 0.9} for n in range(annotated)]
    return {
        "item_id": image,
        "description": f"a description of {image}",
        "recognition": {"annotated": annotated, "recognized": recognized, "matches": matches},
    }


def run() -> ScoredRun:
    details = [line("all", 3, 3), line("part", 2, 3), line("none", 0, 3)]
    scores = {"task": "description", "model": "m", "judge": {"kind": "none"}, "metrics": {}}
    return ScoredRun(Path("run"), scores, details, None)


@pytest.mark.parametrize(
    "metric, expected",
    [
        # micro: one unit per image, its entities: 3 of 3, 2 of 3, 0 of 3
        ("recognition_micro", [(1.0, True, "3 of 3"), (2 / 3, False, "2 of 3"), (0.0, False, "0 of 3")]),
        # macro: one unit per image, its share recognised, out of 1
        ("recognition_macro", [(1.0, True, "1 of 1"), (2 / 3, False, "0.666667 of 1"), (0.0, False, "0 of 1")]),
    ],
)
def test_a_partly_right_unit_is_not_correct(metric, expected):
    rows = _rows(run(), "eval-1", "me/m", f"cogbench_description_{metric}", metric)
    assert [r["sample_id"] for r in rows] == ["all", "part", "none"]
    found = [
        (r["evaluation"]["score"], r["evaluation"]["is_correct"], r["answer_attribution"][0]["extracted_value"])
        for r in rows
    ]
    assert found == [(pytest.approx(score), correct, value) for score, correct, value in expected]
    assert [r["evaluation"]["is_correct"] for r in rows] == [True, False, False]
