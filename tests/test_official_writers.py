"""Writing the project's predictions out in the benchmarks' official formats."""

from __future__ import annotations

import json

from conftest import REAL_RAW_DIR, needs_real_data

from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.formats.official import OfficialIds, read_any_predictions, write_official
from cogbench.reference_eval.formats.predictions import Prediction


def _rows(built_release, task):
    return load_config(str(built_release), task).remove_columns("image").to_list()


@needs_real_data
def test_codis_ground_truth_export_is_the_authors_example_file(built_release, tmp_path):
    rows = _rows(built_release, "codis")
    truth = [Prediction("codis", r["id"], r[f"answer_{q}"], query=q) for r in rows for q in (1, 2)]
    path = write_official("codis", tmp_path, rows, truth)
    example = json.loads((REAL_RAW_DIR / "codis" / "output_example.json").read_text(encoding="utf-8"))
    assert json.loads(path.read_text(encoding="utf-8")) == example


@needs_real_data
def test_vqa_export_has_the_raw_question_fields_plus_response(built_release, tmp_path):
    rows = _rows(built_release, "vqa")
    predictions = [Prediction("vqa", r["question_id"], f"B{i}") for i, r in enumerate(rows)]
    path = write_official("vqa", tmp_path, rows, predictions)
    written = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    raw = json.loads((REAL_RAW_DIR / "cogbench-samples" / "cogbench_vqa.json").read_text(encoding="utf-8"))
    without_response = [{k: v for k, v in record.items() if k != "response"} for record in written]
    key = lambda record: (record["img_id"], record["question"])  # noqa: E731
    assert sorted(without_response, key=key) == sorted(raw, key=key)
    back = read_any_predictions(path, "vqa", OfficialIds.from_rows("vqa", rows))
    assert {p.item_id: p.output for p in back} == {p.item_id: p.output for p in predictions}


def test_description_export_round_trips_and_skips_unanswered_images(built_release, tmp_path):
    rows = _rows(built_release, "description")
    predictions = [Prediction("description", r["image_id"], f"story {i}") for i, r in enumerate(rows[1:])]
    path = write_official("description", tmp_path, rows, predictions)
    written = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [record["filename"] for record in written] == [r["image_file"] for r in rows[1:]]
    back = read_any_predictions(path, "description", OfficialIds.from_rows("description", rows))
    assert {p.item_id: p.output for p in back} == {p.item_id: p.output for p in predictions}
