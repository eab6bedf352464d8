"""The builders: counts on the real data, determinism, and bad raw input."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import datasets
import pytest
from conftest import needs_real_data
from PIL import Image

from cogbench.cards.release import build_release
from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.validation import ValidationFailed


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load(folder: Path, config: str) -> datasets.Dataset:
    return datasets.load_dataset(str(folder), config, split="test")


@needs_real_data
def test_real_codis_config(built_release):
    codis = load(built_release, "codis")
    assert len(codis) == 353
    names = codis.features["category"].names
    counts = Counter(names[i] for i in codis["category"])
    assert counts == {
        "Location and Orientation": 84,
        "Temporal Information": 95,
        "Cultural Background": 47,
        "Attributes": 75,
        "Relationships": 52,
    }
    assert len(set(codis["image_id"])) == 216
    assert codis["id"] == sorted(codis["id"])
    first = codis[0]
    assert first["id"] == "000"
    assert (first["context_1"], first["answer_2"]) == ("My hand is moving upwards.", "Taking off my clothes.")


@needs_real_data
def test_real_description_config(built_release):
    description = load(built_release, "description")
    assert len(description) == 5
    assert sum(len(row["entities"]) for row in description) == 68
    cors = [cor for row in description for chains in row["cors"].values() for cor in chains]
    assert len(cors) == 56
    cookie = next(row for row in description if row["image_id"] == "cookie_theft")
    assert cookie["cors"]["time"] == []  # raw ["None"] is no chain, never a chain
    location = cookie["cors"]["location"][0]
    assert location["premises"] == ["The woman is washing dishes.", "There is a sink and cabinets."]
    assert location["conclusion"] == "The people are in the kitchen."
    assert location["text"].endswith("-> The people are in the kitchen.")
    assert cookie["description"].startswith("The scene is in the kitchen")


@needs_real_data
def test_real_vqa_config(built_release):
    vqa = load(built_release, "vqa")
    assert len(vqa) == 64
    names = vqa.features["category"].names
    assert Counter(names[i] for i in vqa["category"]) == {
        "event": 18,
        "mental": 14,
        "event_relationship": 11,
        "character": 6,
        "location": 5,
        "character_relationship": 4,
        "time": 3,
        "next_event": 3,
    }
    assert vqa.features["answer"].names == ["A", "B", "C", "D"]
    assert len(set(vqa["question_id"])) == 64
    assert vqa["question_id"] == sorted(vqa["question_id"])
    row = next(r for r in vqa if r["question"] == "What time is it in the picture?")
    assert (row["choice_a"], vqa.features["answer"].int2str(row["answer"])) == ("It's 2:25 pm.", "A")


def test_every_image_decodes(built_release):
    for config in ("description", "vqa", "codis"):
        dataset = load(built_release, config)
        assert isinstance(dataset.features["image"], datasets.Image)
        for image in dataset["image"]:
            assert isinstance(image, Image.Image)
            image.load()
            assert image.width > 0 and image.height > 0


def test_manifest_records_hashes_and_counts(built_release, raw_dir):
    manifest = json.loads((built_release / "manifest.json").read_text())
    for config, entry in manifest["configs"].items():
        for shard, info in entry["shards"].items():
            assert sha256(built_release / shard) == info["sha256"]
        assert entry["rows"] == len(load(built_release, config))
    for name, digest in manifest["raw_files"].items():
        assert sha256(raw_dir / name) == digest
    assert manifest["configs"]["codis"]["counts"]["queries"] == 2 * manifest["configs"]["codis"]["rows"]


def test_card_declares_configs(built_release):
    card = (built_release / "README.md").read_text()
    assert card.startswith("---\n")
    for config in ("description", "vqa", "codis"):
        assert f"config_name: {config}" in card
        assert f"data/{config}/test-*.parquet" in card


def test_second_build_is_byte_identical(raw_dir, built_release, tmp_path):
    again = build_release(raw_dir, tmp_path / "again").out
    first = sorted(p.relative_to(built_release) for p in built_release.rglob("*") if p.is_file())
    second = sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert first == second
    for relative in first:
        assert sha256(built_release / relative) == sha256(again / relative), relative


def test_rebuild_replaces_previous_build(synthetic_raw, tmp_path):
    out = tmp_path / "out"
    build_release(synthetic_raw, out)
    (synthetic_raw / "codis" / "data.json").unlink()
    build_release(synthetic_raw, out)
    assert not (out / "data" / "codis").exists()
    assert set(json.loads((out / "manifest.json").read_text())["configs"]) == {"description", "vqa"}


def test_refuses_to_overwrite_a_foreign_folder(synthetic_raw, tmp_path):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(UsageError, match="not a cogbench build"):
        build_release(synthetic_raw, out)
    assert (out / "notes.txt").read_text() == "keep me"


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


BAD_INPUTS = {
    "invalid json": (
        lambda raw: (raw / "codis" / "data.json").write_text('[{"id": "000",'),
        ["codis/data.json: invalid JSON"],
    ),
    "missing field": (
        lambda raw: _edit_json(raw / "codis" / "data.json", lambda d: d[1]["context"].pop("context_2")),
        ["codis/data.json: record 001: field context.context_2: required field is missing"],
    ),
    "wrong type": (
        lambda raw: _edit_json(raw / "cogbench-samples" / "cogbench_vqa.json", lambda d: d[2].update(answer=3)),
        ["cogbench-samples/cogbench_vqa.json: record ", "field answer: 3 is not one of"],
    ),
    "entities not a list": (
        lambda raw: _edit_json(
            raw / "cogbench-samples" / "cogbench_description.json", lambda d: d["park"].update(Entities="woman")
        ),
        ["cogbench-samples/cogbench_description.json: record park: field Entities:"],
    ),
    "image id with no file": (
        lambda raw: _edit_json(raw / "codis" / "data.json", lambda d: d[0].update(image_id="missing.jpg")),
        ["codis/data.json: record 000: field image_id: no image file images/missing.jpg"],
    ),
    "image id with ..": (
        lambda raw: _edit_json(raw / "codis" / "data.json", lambda d: d[3].update(image_id="../data.json")),
        ["codis/data.json: record 003: field image_id: image id '../data.json' would escape"],
    ),
    "absolute image id": (
        lambda raw: _edit_json(raw / "codis" / "data.json", lambda d: d[2].update(image_id="/etc/hostname")),
        ["codis/data.json: record 002: field image_id: image id '/etc/hostname' would escape"],
    ),
    "vqa image without description": (
        lambda raw: _edit_json(raw / "cogbench-samples" / "cogbench_vqa.json", lambda d: d[0].update(img_id="nowhere")),
        ["field img_id: image id 'nowhere' has no description record"],
    ),
    "duplicate image key": (
        lambda raw: (raw / "cogbench-samples" / "cogbench_description.json").write_text(
            (raw / "cogbench-samples" / "cogbench_description.json").read_text().replace('"street":', '"park":')
        ),
        ["cogbench-samples/cogbench_description.json: record park: key appears more than once"],
    ),
    "chained cor": (
        lambda raw: _edit_json(
            raw / "cogbench-samples" / "cogbench_description.json",
            lambda d: d["kitchen"].update({"Event Reasoning": ["A. -> B. -> C."]}),
        ),
        ["record kitchen: field Event Reasoning[0]: 2 '->' found"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_raw_input_stops_the_build_and_leaves_nothing(case, synthetic_raw, tmp_path):
    mutate, expected_messages = BAD_INPUTS[case]
    mutate(synthetic_raw)
    out = tmp_path / "out"
    with pytest.raises(ValidationFailed) as caught:
        build_release(synthetic_raw, out)
    message = str(caught.value)
    for expected in expected_messages:
        assert expected in message
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["raw"]  # no staging folder left behind


def test_all_problems_reported_at_once(synthetic_raw, tmp_path):
    def two_faults(data):
        data[0].pop("question")
        data[1]["category"] = "Weather"

    _edit_json(synthetic_raw / "codis" / "data.json", two_faults)
    with pytest.raises(ValidationFailed) as caught:
        build_release(synthetic_raw, tmp_path / "out")
    assert len(caught.value.problems) == 2


def test_cli_build_reports_errors_without_traceback(synthetic_raw, tmp_path, capsys):
    _edit_json(synthetic_raw / "codis" / "data.json", lambda d: d[0].update(image_id="../../x.jpg"))
    assert main(["build", "--raw-dir", str(synthetic_raw), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: 1 validation error(s) in the raw data")
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_cli_defaults_to_env_raw_dir(synthetic_raw, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COGBENCH_RAW_DIR", str(synthetic_raw))
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--version", "1.2.3"]) == 0
    manifest = json.loads((tmp_path / "dist" / "cogbench" / "manifest.json").read_text())
    assert manifest["dataset_version"] == "1.2.3"
    assert "built dist/cogbench" in capsys.readouterr().out


def test_bad_version_is_a_usage_error(synthetic_raw, tmp_path):
    assert main(["build", "--raw-dir", str(synthetic_raw), "--out", str(tmp_path / "o"), "--version", "1.0"]) == 2


def test_missing_raw_dir_is_a_usage_error(tmp_path, capsys):
    assert main(["build", "--raw-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "cogbench fetch-raw" in capsys.readouterr().err


def test_single_benchmark_folder_builds_its_configs_only(synthetic_raw, tmp_path):
    shutil.rmtree(synthetic_raw / "cogbench-samples")
    manifest = build_release(synthetic_raw / "codis", tmp_path / "out").manifest
    assert set(manifest["configs"]) == {"codis"}


def test_small_shard_limit_splits_and_still_loads(synthetic_raw, tmp_path):
    out = build_release(synthetic_raw, tmp_path / "out", max_shard_bytes=1).out
    shards = sorted((out / "data" / "codis").iterdir())
    assert [p.name for p in shards] == [f"test-{i:05d}-of-00004.parquet" for i in range(4)]
    assert load(out, "codis")["id"] == ["000", "001", "002", "003"]
