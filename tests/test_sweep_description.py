"""A sweep's description cells: the spec's ``description:`` block (the spaCy pipeline and sentence embedder of the
Recognition Score, reference_eval/sweeping/scoring_models.py), each field's refusal, its paths read from the spec's
folder, recorded in plan.json, and one description cell run against a loopback model, scored with the local spaCy
stand-in and MiniLM, merged and verified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.metrics import recognition
from cogbench.reference_eval.sweeping import scoring_models

from openai_server import Reply
from shared_files import spacy_stand_in
from sweep_helpers import cells, local_models, minilm_path, plan, write_spec

LOCAL = "http://127.0.0.1:9/v1"  # never called: planning asks no model
CELL = "description--m--thinking-auto--tokens-default--judge-default"
TEXT = "A man talks to a police officer beside the cars on the road while a woman sits in a car."


@pytest.mark.parametrize(
    ("block", "field", "says"),
    [
        ({"spacy_model": "./no-such-pipeline"}, "description.spacy_model", "is not a folder"),
        ({"embedder": "../no-such-embedder"}, "description.embedder", "is not a folder"),
        ({"embed_batch_size": 0}, "description.embed_batch_size", "less than the minimum of 1"),
        ({"embed_batch_size": "64"}, "description.embed_batch_size", "is not of type 'integer'"),
        ({"spacy_modle": "x"}, "description.spacy_modle", "unknown field"),
        ({"spacy_model": ""}, "description.spacy_model", "should be non-empty"),
        # folders that hold something else: each model is loaded when planned
        ({"spacy_model": "MINILM"}, "description.spacy_model", "cannot load spaCy model"),
        ({"spacy_model": "SPACY", "embedder": "SPACY"}, "description.embedder", "cannot load embedder"),
        ({"spacy_model": "en_core_web_zz"}, "description.spacy_model", "cannot load spaCy model 'en_core_web_zz'"),
    ],
)
def test_each_description_field_refuses_a_bad_value_in_one_line(tmp_path, capsys, built_release, block, field, says):
    swap = {"MINILM": minilm_path(), "SPACY": str(spacy_stand_in())}
    block = {name: swap.get(value, value) if isinstance(value, str) else value for name, value in block.items()}
    spec = write_spec(
        tmp_path, built_release, [{"model": "openai:m", "base_url": LOCAL}], tasks=["description"], description=block
    )
    code, _out, err = plan(capsys, spec, tmp_path / "sweep")
    assert code == 2, err
    assert err.startswith(f"error: {spec}: field {field}") and says in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "sweep").exists()


def test_the_default_spacy_model_missing_is_named_before_anything_runs(tmp_path, capsys, built_release):
    import spacy

    if spacy.util.is_package(recognition.PAPER_SPACY_MODEL):
        pytest.skip(f"{recognition.PAPER_SPACY_MODEL} is installed here: the default loads")
    spec = write_spec(tmp_path, built_release, [{"model": "openai:m", "base_url": LOCAL}], tasks=["description"])
    code, _out, err = plan(capsys, spec, tmp_path / "sweep")
    assert code == 2
    assert err.startswith(f"error: {spec}: field description.spacy_model (the default: name it in the spec): ")
    assert not (tmp_path / "sweep").exists()


def test_paths_are_read_from_the_spec_folder_and_recorded_in_the_plan(tmp_path, capsys, built_release, monkeypatch):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "pos").symlink_to(spacy_stand_in())
    block = {"spacy_model": "../models/pos", "embedder": minilm_path(), "embed_batch_size": 16}
    models = [{"model": "openai:m", "base_url": LOCAL}]
    spec = write_spec(tmp_path / "specs", built_release, models, tasks=["vqa", "description"], description=block)
    monkeypatch.chdir(tmp_path)  # not the spec's folder: ../models/pos is read from the spec's
    code, _out, err = plan(capsys, spec, tmp_path / "sweep")
    assert code == 0, err
    recorded = json.loads((tmp_path / "sweep" / "plan.json").read_text())["description"]
    assert recorded == {
        "spacy_model": str(spacy_stand_in().resolve()),
        "embedder": str(Path(minilm_path()).resolve()),
        "embed_batch_size": 16,
    }
    # an edited block is another sweep: the folder refuses it, and keeps its plan
    edited = write_spec(
        tmp_path / "specs",
        built_release,
        models,
        tasks=["vqa", "description"],
        description={**block, "embed_batch_size": 8},
    )
    code, _out, err = plan(capsys, edited, tmp_path / "sweep")
    assert code == 2 and "holds another sweep's plan (description.embed_batch_size: 16 → 8)" in err, err
    assert json.loads((tmp_path / "sweep" / "plan.json").read_text())["description"] == recorded
    # without the description task the block scores nothing: not recorded, not loaded
    other = write_spec(tmp_path / "vqa", built_release, models, description={"spacy_model": "en_core_web_zz"})
    assert plan(capsys, other, tmp_path / "vqa-sweep")[0] == 0
    assert json.loads((tmp_path / "vqa-sweep" / "plan.json").read_text())["description"] is None


def test_a_description_cell_runs_scored_with_the_named_models(
    openai_server, built_release, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server = openai_server(lambda request: Reply(text=TEXT))
    models = [{"model": "openai:m", "base_url": server.base_url, "max_attempts": 1}]
    spec = write_spec(tmp_path, built_release, models, tasks=["description"], limit=None, description=local_models())
    sweep = tmp_path / "sweep"
    code, out, err = plan(capsys, spec, sweep, "--shards", "2")
    assert code == 0, err
    assert out.splitlines()[:2] == ["cells: 1 (2 shards)", "queries: 5 model queries in all"]
    assert main(["sweep", "run", str(sweep)]) == 0, capsys.readouterr()
    capsys.readouterr()
    assert main(["sweep", "merge", str(sweep)]) == 0, capsys.readouterr()
    run = sweep / "cells" / CELL / "run"
    assert capsys.readouterr().out.splitlines() == [f"{CELL}: merged into {run} (complete, verified)"]
    assert cells(sweep) == [CELL] and len(server.requests) == 5

    scores = json.loads((run / "score" / "scores.json").read_text())
    provenance = scores["provenance"]["models"]
    assert provenance["spacy"]["requested"] == str(spacy_stand_in().resolve())
    assert provenance["embedder"]["requested"] == str(Path(minilm_path()).resolve())
    # the number is the Recognition Score of the model's replies, computed here apart with the same models
    rows = load_config(str(built_release), "description").remove_columns("image").to_list()
    loaded = scoring_models.loaded(local_models())  # the models this process loaded when it planned
    expected = recognition.recognition_scores(
        recognition.recognition_matches(loaded.nlp, loaded.embedder, [r["entities"] for r in rows], [TEXT] * 5, 64)
    )
    assert 0 < expected["recognition_micro"] < 100
    assert scores["metrics"]["recognition_micro"]["overall"] == expected["recognition_micro"]
    for shard in (0, 1):  # each shard scored with them too
        shard_scores = json.loads(
            (sweep / "cells" / CELL / "shards" / str(shard) / "score" / "scores.json").read_text()
        )
        assert shard_scores["provenance"]["models"]["spacy"]["requested"] == str(spacy_stand_in().resolve())
    assert main(["verify", str(run), "--dataset", str(built_release)]) == 0, capsys.readouterr()
