"""Pooling of per-item verdicts into percentages (metrics/aggregate.py, metrics/cognition.py), by hand.

Beside test_scoring_core.py: shares that are not whole percents (1 of 3 = 33.33...),
category names that arrive as equal but distinct strings (as read from a JSON file),
and the CoR item being a value (frozen, hashable).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from cogbench.reference_eval.metrics.aggregate import by_category
from cogbench.reference_eval.metrics.cognition import CorItem, cognition_scores


def fresh(name: str) -> str:
    """An equal string that is not the same object, as a category read from a file is."""
    copy = json.loads(json.dumps(name + "!"))[:-1]
    assert copy == name and copy is not name
    return copy


def test_categories_read_from_a_file_are_matched_by_value():
    rows = [(fresh("time"), 1.0), (fresh("time"), 0.0), (fresh("time"), 0.0), (fresh("event"), 1.0)]
    scores = by_category(rows, ["time", "event"])
    # time: 1 of 3 = 33.33...; event: 1 of 1; overall 2 of 4
    assert scores == {"overall": 50.0, "per_category": {"time": pytest.approx(100 / 3), "event": 100.0}}


def cor(category: str, index: int) -> CorItem:
    return CorItem("img", category, index, "A -> B", "B")


def test_cognition_recall_that_is_not_a_whole_percent_is_kept_exact():
    verdicts = [
        (cor(fresh("time"), 0), 1),
        (cor(fresh("time"), 1), 0),
        (cor(fresh("time"), 2), 0),
        (cor(fresh("location"), 0), 1),
        (cor(fresh("location"), 1), 1),
        (cor(fresh("location"), 2), 0),
    ]
    scores = cognition_scores(verdicts)
    # time: 1 of 3 = 33.333...; location: 2 of 3 = 66.666...; overall 3 of 6 = 50
    assert scores["per_category"]["time"] == pytest.approx(100 / 3, abs=1e-12)
    assert scores["per_category"]["location"] == pytest.approx(200 / 3, abs=1e-12)
    assert scores["overall"] == 50.0
    # overall 1 of 3 = 33.333...
    assert cognition_scores(verdicts[:3])["overall"] == pytest.approx(100 / 3, abs=1e-12)


def test_a_cor_item_is_a_value_that_cannot_be_changed():
    item = cor("time", 0)
    assert item == cor("time", 0) and hash(item) == hash(cor("time", 0))
    assert len({item, cor("time", 0), cor("time", 1)}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.category = "event"  # type: ignore[misc]
