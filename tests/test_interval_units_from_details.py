"""Which units each pooled score resamples, read from hand-written details.jsonl lines (metrics/intervals.py).

The expected units and per-image tables are written out by hand from the lines in each test; the
intervals ``score_intervals`` reports are those of ``small_sample.column_intervals`` (pinned in
tests/test_korn_graubard_by_hand.py) on the per-image table written here. Light at import.
"""

from __future__ import annotations

import numpy as np

from cogbench.reference_eval.metrics import intervals, small_sample
from cogbench.reference_eval.metrics.intervals import Unit


def vqa_line(image: str, category: str, correct: bool, official: bool, **circular) -> dict:
    return {
        "item_id": f"{image}-{category}",
        "image_id": image,
        "category": category,
        "correct": correct,
        "correct_official": official,
        **circular,
    }


def test_vqa_units_are_questions():
    details = [vqa_line("i1", "time", True, False), vqa_line("i2", "event", False, True)]
    units = intervals.units_from_details("vqa", details)
    assert units == {
        "accuracy": [Unit("i1", "time", 1.0), Unit("i2", "event", 0.0)],
        "accuracy_official": [Unit("i1", "time", 0.0), Unit("i2", "event", 1.0)],
    }
    assert intervals.units_from_details("vqa", []) == {"accuracy": [], "accuracy_official": []}


def test_circular_vqa_adds_the_circular_accuracy_and_each_rotation_choice():
    details = [
        vqa_line(
            "i1",
            "time",
            True,
            True,
            correct_all=False,
            answer_changed=True,
            rotations=[{"extracted": "A"}, {"extracted": "C"}],
        ),
        vqa_line(
            "i2",
            "event",
            True,
            False,
            correct_all=True,
            answer_changed=False,
            rotations=[{"extracted": "A"}, {"extracted": None}],
        ),
    ]
    units = intervals.units_from_details("vqa", details)
    assert units["accuracy_circular"] == [Unit("i1", "time", 0.0), Unit("i2", "event", 1.0)]
    assert units["answer_changed"] == [Unit("i1", "time", 1.0), Unit("i2", "event", 0.0)]
    rotations = [("i1", "time"), ("i1", "time"), ("i2", "event"), ("i2", "event")]
    for letter, picked in {"A": [1, 0, 1, 0], "B": [0, 0, 0, 0], "C": [0, 1, 0, 0], "D": [0, 0, 0, 0]}.items():
        assert units[f"choice_{letter}"] == [Unit(i, c, float(x)) for (i, c), x in zip(rotations, picked)]
    assert len(units) == 8
    one_line = intervals.units_from_details("vqa", details[:1])
    assert one_line["choice_C"] == [Unit("i1", "time", 0.0), Unit("i1", "time", 1.0)]


def test_codis_units_are_queries_pairs_and_output_changes():
    """A pair counts in Acc_p only when both queries were judged; every judged query counts in Acc_q."""
    details = [
        {"image_id": "i1", "category": "c1", "queries": [{"right": True}, {"right": True}], "outputs_differ": True},
        {"image_id": "i1", "category": "c2", "queries": [{"right": True}, {"right": None}], "outputs_differ": False},
        {"image_id": "i2", "category": "c1", "queries": [{"right": False}, {"right": True}], "outputs_differ": True},
    ]
    units = intervals.units_from_details("codis", details)
    assert units == {
        "acc_p": [Unit("i1", "c1", 1.0), Unit("i2", "c1", 0.0)],
        "acc_q": [
            Unit("i1", "c1", 1.0),
            Unit("i1", "c1", 1.0),
            Unit("i1", "c2", 1.0),
            Unit("i2", "c1", 0.0),
            Unit("i2", "c1", 1.0),
        ],
        "context_awareness": [Unit("i1", "c1", 1.0), Unit("i1", "c2", 0.0), Unit("i2", "c1", 1.0)],
    }


def test_output_variability_units_are_the_queries_compared_without_context():
    """One unit per query compared (``changed_without_context``); the LLM's reading only where it judged."""

    def query(right, changed=None, llm=None):
        found = {"right": right}
        if changed is not None:
            found.update(changed_without_context=changed, changed_without_context_llm=llm)
        return found

    details = [
        {"image_id": "i1", "category": "c1", "queries": [query(True, True, True), query(True, False, None)]},
        {"image_id": "i2", "category": "c2", "queries": [query(False, True, False), query(True)]},
    ]
    for number, d in enumerate(details):
        d.update(item_id=f"p{number}", outputs_differ=False)
    units = intervals.units_from_details("codis", details)
    assert units["output_variability"] == [Unit("i1", "c1", 1.0), Unit("i1", "c1", 0.0), Unit("i2", "c2", 1.0)]
    assert units["output_variability_llm"] == [Unit("i1", "c1", 1.0), Unit("i2", "c2", 0.0)]
    result, _ = intervals.score_intervals("codis", details, ["c1", "c2"])
    # rows i1, i2; columns c1, c2, overall: 1 of 2 queries changed on i1, 1 of 1 on i2
    hits, totals = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]), np.array([[2.0, 0.0, 2.0], [0.0, 1.0, 1.0]])
    assert result["output_variability"] == small_sample.column_intervals(hits, totals, ["c1", "c2", "overall"])
    assert result["output_variability"]["overall"] is not None


def description_line(image: str, annotated: int, recognized: int, **cognition) -> dict:
    return {"item_id": image, "recognition": {"annotated": annotated, "recognized": recognized}, **cognition}


def test_description_units_are_entities_images_and_key_points():
    """Micro: entities pooled; macro: one unit per image with entities (its share); Cognition: judged key points."""
    details = [
        description_line(
            "d1", 4, 3, cognition=[{"category": "event", "verdict": 1}, {"category": "time", "verdict": None}]
        ),
        description_line("d2", 0, 0, cognition=[{"category": "time", "verdict": 0}]),
    ]
    units = intervals.units_from_details("description", details)
    assert units == {
        "recognition_micro": [Unit("d1", None, 3.0, 4.0), Unit("d2", None, 0.0, 0.0)],
        "recognition_macro": [Unit("d1", None, 0.75)],
        "cognition": [Unit("d1", "event", 1.0), Unit("d2", "time", 0.0)],
    }


def test_offline_judges_give_the_cognition_score_alone_or_beside_the_llm_judge():
    alone = [description_line("d1", 1, 1, cognition_rouge=[{"category": "event", "verdict": 1}])]
    assert intervals.units_from_details("description", alone)["cognition"] == [Unit("d1", "event", 1.0)]
    both = [
        description_line(
            "d1",
            1,
            1,
            cognition=[{"category": "event", "verdict": 0}],
            cognition_nli=[{"category": "time", "verdict": 1}],
        )
    ]
    units = intervals.units_from_details("description", both)
    assert units["cognition"] == [Unit("d1", "event", 0.0)]
    assert units["cognition_offline"] == [Unit("d1", "time", 1.0)]
    bertscore = [description_line("d1", 1, 0, cognition_bertscore=[{"category": "time", "verdict": 0}])]
    assert intervals.units_from_details("description", bertscore)["cognition"] == [Unit("d1", "time", 0.0)]


def test_metric_tables_share_the_image_rows_and_recognition_has_no_categories():
    details = [
        description_line("d2", 2, 1, cognition=[{"category": "event", "verdict": 1}]),
        description_line("d1", 3, 3, cognition=[{"category": "time", "verdict": 0}]),
    ]
    tables = intervals.metric_tables("description", details, ["event", "time"])
    assert tables["recognition_micro"].columns == ["overall"] and tables["recognition_micro"].clusters == ["d1", "d2"]
    assert tables["recognition_micro"].hits.tolist() == [[3.0], [1.0]]
    assert tables["recognition_micro"].totals.tolist() == [[3.0], [2.0]]
    assert tables["cognition"].columns == ["event", "time", "overall"]
    assert tables["cognition"].hits.tolist() == [[0, 0, 0], [1, 0, 1]]
    given = intervals.metric_tables("description", details, ["event", "time"], clusters=["d2", "d0", "d1"])
    assert given["cognition"].totals.tolist() == [[1, 0, 1], [0, 0, 0], [0, 1, 1]]


def test_score_intervals_are_the_korn_graubard_intervals_of_the_per_image_table():
    """VQA on three images (2, 2 and 1 questions): the image ids are the clusters, not the question ids."""
    details = [
        vqa_line("i1", "time", True, False),
        {**vqa_line("i1", "event", False, False), "item_id": "q2"},
        vqa_line("i2", "time", True, True),
        {**vqa_line("i2", "time", False, True), "item_id": "q4"},
        vqa_line("i3", "event", True, False),
    ]
    result, settings = intervals.score_intervals("vqa", details, ["time", "event"], resamples=300, seed=4)
    # rows i1, i2, i3; columns time, event, overall
    hits = np.array([[1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    totals = np.array([[1.0, 1.0, 2.0], [2.0, 0.0, 2.0], [0.0, 1.0, 1.0]])
    assert result["accuracy"] == small_sample.column_intervals(hits, totals, ["time", "event", "overall"])
    assert result["accuracy"]["clusters"] == {"overall": 3, "per_category": {"time": 2, "event": 2}}
    assert settings == {"method": small_sample.METHOD, "level": 0.95, "resamples": 300, "seed": 4, "clusters": 3}
    assert intervals.score_intervals("vqa", details, ["time", "event"])[1]["resamples"] == 2000
    assert intervals.score_intervals("vqa", details, ["time", "event"])[1]["seed"] == 0


def test_the_task_name_read_from_a_file_selects_its_units():
    """The task comes from scores.json at run time: a string equal to "vqa", not the literal itself."""
    vqa, codis = "".join(["v", "q", "a"]), "".join(["co", "dis"])
    assert set(intervals.units_from_details(vqa, [])) == {"accuracy", "accuracy_official"}
    assert set(intervals.units_from_details(codis, [])) == {"acc_p", "acc_q", "context_awareness"}
