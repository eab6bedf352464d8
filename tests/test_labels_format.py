"""The labels format (issue 52 part 4): the reader's one-line errors naming file, line and field, the schema's
bounds at their edges, labels checked against a sample, and the seeded stratified draw with its shared share."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cogbench.errors import UsageError
from cogbench.reference_eval.labelling.labels_format import check_against_sample, read_labels
from cogbench.reference_eval.labelling.sample import Unit, draw, manifest

SAMPLE = "ab" * 32
GOOD = {
    "format": "cogbench labels 1",
    "sample": SAMPLE,
    "unit": "u0001",
    "task": "codis",
    "answers": "0123456789ab",
    "item_id": "000",
    "category": "Attributes",
    "query": "1",
    "label": 1,
    "labeller": "ann",
    "role": "A",
    "time": "2026-03-01T10:15:00.123Z",
}


def write(tmp_path, *rows, raw: str = ""):
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + raw)
    return path


def test_a_good_file_reads_back_keyed_as_verdicts_are(tmp_path):
    (label,) = read_labels(write(tmp_path, GOOD))
    assert label.key == ("000", "Attributes", "1") and label.label == 1 and label.where.endswith("labels.jsonl:1")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("label", 2, "field label: 2 is not one of"),
        ("label", True, "field label: True is not one of"),
        ("task", "vqa", "field task:"),
        ("query", "first", "field query:"),
        ("labeller", "a" * 65, "field labeller:"),  # at most 64: just over
        ("labeller", "ann smith", "field labeller:"),
        ("role", "C", "field role:"),
        ("time", "2026-03-01 10:15", "field time:"),
        ("answers", "0123456789a", "field answers:"),  # 11 hex: one short
        ("sample", "AB" * 32, "field sample:"),
    ],
)
def test_each_bad_field_is_one_line_naming_file_line_and_field(tmp_path, field, value, message):
    path = write(tmp_path, GOOD, {**GOOD, "unit": "u0002", field: value})
    with pytest.raises(UsageError, match=rf"labels.jsonl: record 2: {message}"):
        read_labels(path)


def test_edges_that_pass_missing_and_extra_fields_and_duplicates(tmp_path):
    edge = {**GOOD, "labeller": "a" * 64, "time": "2026-03-01T10:15:00Z", "label": 0, "query": "12"}
    assert read_labels(write(tmp_path, edge))[0].labeller == "a" * 64
    missing = {k: v for k, v in GOOD.items() if k != "labeller"}
    with pytest.raises(UsageError, match="record 1: field labeller: required field is missing"):
        read_labels(write(tmp_path, missing))
    with pytest.raises(UsageError, match="record 1: field verdict: field is not part of the format"):
        read_labels(write(tmp_path, {**GOOD, "verdict": 1}))
    with pytest.raises(UsageError, match="record 2: field unit: 'u0001' labelled again by 'ann' \\(first on line 1\\)"):
        read_labels(write(tmp_path, GOOD, {**GOOD, "label": 0}))
    assert len(read_labels(write(tmp_path, GOOD, {**GOOD, "labeller": "bob"}))) == 2
    with pytest.raises(UsageError, match="record 2: not valid JSON"):
        read_labels(write(tmp_path, GOOD, raw="{oops\n"))
    with pytest.raises(UsageError, match="no labels"):
        read_labels(write(tmp_path))


def units(answers: str, category: str, count: int) -> list[Unit]:
    return [Unit("codis", answers, f"{n:03d}", category, "1", {}) for n in range(count)]


def test_the_draw_is_stratified_seeded_and_shares_its_share_rounded_half_up():
    pool = units("a" * 12, "Attributes", 10) + units("b" * 12, "Attributes", 3) + units("a" * 12, "Relationships", 7)
    drawn, strata = draw(pool, 4, 0.375, seed=1)
    counts = {(s["answers"][0], s["category"]): (s["units"], s["drawn"], s["shared"]) for s in strata}
    # 0.375 x 4 = 1.5 rounds up to 2 (just at the half); 0.375 x 3 = 1.125 down to 1
    assert counts == {
        ("a", "Attributes"): (10, 4, 2),
        ("a", "Relationships"): (7, 4, 2),
        ("b", "Attributes"): (3, 3, 1),
    }
    assert [u.unit for u in drawn] == [f"u{n:04d}" for n in range(1, 12)]
    again, _ = draw(
        units("a" * 12, "Attributes", 10) + units("b" * 12, "Attributes", 3) + units("a" * 12, "Relationships", 7),
        4,
        0.375,
        seed=1,
    )
    assert [u.record() for u in again] == [u.record() for u in drawn]
    shifted = [u.record() for u in draw(units("a" * 12, "Attributes", 10), 4, 0.375, seed=2)[0]]
    assert shifted != [u.record() for u in draw(units("a" * 12, "Attributes", 10), 4, 0.375, seed=1)[0]]
    _, below = draw(units("a" * 12, "Attributes", 4), 4, 0.37, seed=1)  # 1.48: just under the half
    assert below[0]["shared"] == 1


def test_labels_are_checked_against_their_sample(tmp_path):
    drawn, strata = draw(units("0123456789ab", "Attributes", 2), 2, 0.5, seed=0)
    sample = manifest(drawn, strata, 0, 2, 0.5, None)
    shared = next(u for u in drawn if u.shared)
    alone = next(u for u in drawn if not u.shared)
    base = {**GOOD, "sample": sample["sample"]}
    ok = {**base, "unit": shared.unit, "item_id": shared.item_id, "role": "B"}
    check_against_sample(read_labels(write(tmp_path, ok)), sample, "s.json")
    check_against_sample(read_labels(write(tmp_path, {**ok, "role": "adjudicator"})), sample, "s.json")
    check_against_sample(
        read_labels(write(tmp_path, {**ok, "unit": alone.unit, "item_id": alone.item_id, "role": "A"})),
        sample,
        "s.json",
    )
    cases = [
        ({**ok, "sample": "cd" * 32}, "field sample: 'cdcdcdcdcdcd'... is not the sample of s.json"),
        ({**ok, "unit": "u0009"}, "field unit: 'u0009' is not a unit of s.json"),
        ({**ok, "item_id": "999"}, f"field item_id: '999', but unit {shared.unit} of s.json has '{shared.item_id}'"),
        ({**ok, "unit": alone.unit, "item_id": alone.item_id}, "field role: role B labelled"),
        ({**ok, "unit": alone.unit, "item_id": alone.item_id, "role": "adjudicator"}, "field role: role adjudicator"),
    ]
    for row, message in cases:
        with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
            check_against_sample(read_labels(write(tmp_path, row)), sample, "s.json")


def test_labels_check_on_the_command_line_says_one_line_and_exits_2(tmp_path):
    path = write(tmp_path, {**GOOD, "role": "C"})
    done = subprocess.run(
        [sys.executable, "-m", "cogbench", "labels", "check", str(path)], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: {path}: record 1: field role: 'C' is not one of ['A', 'B', 'adjudicator']"
    ]
