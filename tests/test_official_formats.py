"""Reading the benchmarks' official prediction formats into the project's records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogbench.errors import CogbenchError
from cogbench.reference_eval.formats.official import OfficialIds, detect_format, read_any_predictions

from shared_files import require_raw


def codis_example() -> Path:
    """The authors' CODIS output example (706 answers) from the real raw data."""
    return require_raw("codis", "output_example.json", what="CODIS output_example.json")


def test_codis_example_file_gives_two_queries_per_pair():
    predictions = read_any_predictions(codis_example(), "codis", OfficialIds())
    assert len(predictions) == 706
    first = {p.query: p.output for p in predictions if p.item_id == "000"}
    assert first == {1: "Putting on my clothes.", 2: "Taking off my clothes."}


def test_description_jsonl_maps_file_names_to_image_ids(tmp_path):
    ids = OfficialIds.from_rows("description", [{"image_id": "cookie_theft", "image_file": "cookie_theft.jpg"}])
    path = tmp_path / "desc.jsonl"
    path.write_text(json.dumps({"filename": "cookie_theft.jpg", "model_output": "A kitchen."}) + "\n")
    assert detect_format(path) == "cogbench-description"
    (prediction,) = read_any_predictions(path, "description", ids)
    assert (prediction.task, prediction.item_id, prediction.output) == ("description", "cookie_theft", "A kitchen.")


def test_vqa_jsonl_finds_questions_by_image_text_and_choices(tmp_path):
    row = {
        "question_id": "q7",
        "image_id": "abc",
        "question": "What time?",
        "choice_a": "1",
        "choice_b": "2",
        "choice_c": "3",
        "choice_d": "4",
    }
    ids = OfficialIds.from_rows("vqa", [row])
    record = {k: v for k, v in row.items() if k not in ("question_id", "image_id")}
    record.update(img_id="abc", answer="A", category="time", response="B. 2")
    other = dict(record, question="Unknown question?")
    path = tmp_path / "vqa.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(other) + "\n")
    predictions = read_any_predictions(path, "vqa", ids)
    assert [(p.item_id, p.output) for p in predictions] == [("q7", "B. 2"), ("abc: Unknown question?", "B. 2")]


def test_bad_records_name_file_record_and_field(tmp_path):
    path = tmp_path / "codis.json"
    path.write_text(json.dumps([{"id": "001", "output": {"output_1": "a"}}]))
    with pytest.raises(CogbenchError, match=r"codis.json: record 001: field output.output_2"):
        read_any_predictions(path, "codis", OfficialIds())
    path.write_text(json.dumps([{"id": "001", "output": {"output_1": "a", "output_2": "b"}}] * 2))
    with pytest.raises(CogbenchError, match="record 001: more than one prediction"):
        read_any_predictions(path, "codis", OfficialIds())


def test_wrong_task_for_the_file_is_an_error():
    with pytest.raises(CogbenchError, match="codis-output predictions, not vqa"):
        read_any_predictions(codis_example(), "vqa", OfficialIds())
