"""Hand-computed values for the pooling of the scoring core (metrics/aggregate.py, metrics/cognition.py).

Small cases worked out by hand, so that a mutation of the arithmetic fails here
within seconds (the mutation-testing command runs these beside test_verdicts.py).
"""

from __future__ import annotations

import pytest

from cogbench.reference_eval.metrics.aggregate import by_category, percent
from cogbench.reference_eval.metrics.cognition import CorItem, cognition_scores


def test_percent_and_by_category_by_hand():
    assert percent(1, 4) == 25.0 and percent(0, 3) == 0.0 and percent(3, 0) is None
    rows = [("a", 1.0), ("a", 0.0), ("b", 1.0), ("a", 1.0)]
    assert by_category(rows, ["a", "b", "c"]) == {
        "overall": 75.0,
        "per_category": {"a": pytest.approx(200 / 3), "b": 100.0, "c": None},
    }
    assert by_category([], ["a"]) == {"overall": None, "per_category": {"a": None}}


def item(category: str, index: int = 0) -> CorItem:
    return CorItem("img", category, index, "A -> B", "B")


def test_cognition_scores_by_hand_leave_failures_out_and_count_a_2_as_the_authors_sum_does():
    verdicts = [
        (item("time"), 1),
        (item("time", 1), 0),
        (item("time", 2), None),
        (item("location"), 1),
        (item("mental"), 2),
    ]
    scores = cognition_scores(verdicts)
    assert scores["per_category"]["time"] == 50.0  # 1 of 2 judged; the failure left out
    assert scores["per_category"]["location"] == 100.0
    assert scores["per_category"]["mental"] == 200.0  # cognition_score.py sums the verdicts: [2] counts 2
    assert scores["per_category"]["event"] is None
    assert scores["overall"] == pytest.approx(100 * 4 / 4)
    assert cognition_scores([(item("time"), None)]) == {
        "overall": None,
        "per_category": dict.fromkeys(scores["per_category"]),
    }
