"""scores.json names every model, prompt, shard and threshold behind its numbers, and validates."""

from __future__ import annotations

import hashlib
import json
import re

import jsonschema
from test_score import minilm_path

from cogbench import __version__
from cogbench.reference_eval.recording.run_files import scores_schema
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from openai_server import numbered_verdicts
from shared_files import spacy_stand_in

SECRET = "sk-provenance-test-55555"


def test_description_provenance(built_release, tmp_path, openai_server, monkeypatch):
    spacy_model = str(spacy_stand_in())
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    server = openai_server(numbered_verdicts(lambda n: 1, separator="\n"))
    scores = run_scoring(
        ScoreOptions(
            task="description",
            dataset=str(built_release),
            oracle=True,
            judge="openai:gpt-judge",
            judge_base_url=server.base_url,
            spacy_model=spacy_model,
            embedder=minilm_path(),
            out=str(tmp_path / "run"),
        )
    )
    jsonschema.validate(scores, scores_schema())
    prov = scores["provenance"]
    assert prov["cogbench_version"] == __version__
    models = prov["models"]
    assert models["spacy"]["pipeline"] and models["spacy"]["version"] and models["spacy"]["requested"] == spacy_model
    assert re.fullmatch(r"[0-9a-f]{64}", models["embedder"]["folder_sha256"])
    assert prov["thresholds"] == {"recognition_similarity": 0.6}
    assert prov["judge"] == {
        "kind": "openai",
        "model": "gpt-judge",
        "endpoint_host": "127.0.0.1",
        # the endpoint told apart from another on this host without its URL: sha256 of scheme://host:port/path
        "endpoint_id": hashlib.sha256(server.base_url.rstrip("/").encode()).hexdigest()[:12],
        "temperature": 0.0,
        "parsing": "tolerant",
    }
    assert {t["id"] for t in prov["prompt_templates"]} == {"cogbench-cognition-figure8", "cogbench-cognition-figure9"}
    manifest = json.loads((built_release / "manifest.json").read_text())
    shards = manifest["configs"]["description"]["shards"]
    assert {s["file"]: s["sha256"] for s in prov["dataset"]["shards"]} == {f: v["sha256"] for f, v in shards.items()}
    assert SECRET not in (tmp_path / "run" / "scores.json").read_text()
    metric = scores["metrics"]["cognition"]
    assert metric["judged"] == metric["denominator"] == scores["counts"]["cors"] and scores["complete"]


def test_codis_rule_provenance_names_prompts_of_project_predictions(built_release, tmp_path):
    from cogbench.dataset_builders.load import load_config

    rows = load_config(str(built_release), "codis").remove_columns("image").to_list()
    path = tmp_path / "predictions.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "task": "codis",
                    "item_id": row["id"],
                    "query": q,
                    "output": row[f"answer_{q}"],
                    "prompt_id": "codis-di-cot-v1",
                    "prompt_sha256": "ab" * 32,
                }
            )
            + "\n"
            for row in rows
            for q in (1, 2)
        )
    )
    scores = run_scoring(
        ScoreOptions(task="codis", dataset=str(built_release), predictions=str(path), out=str(tmp_path / "run"))
    )
    prov = scores["provenance"]
    assert prov["prompt_templates"] == [{"id": "codis-di-cot-v1", "sha256": "ab" * 32, "role": "model"}]
    assert prov["judge"]["kind"] == "rule" and prov["thresholds"] == {"codis_rule_min_similarity": 60.0}
    assert prov["dataset"]["source"] == "folder" and len(prov["dataset"]["shards"]) == 1
