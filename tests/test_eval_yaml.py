"""eval.yaml of a real build: the Hub's benchmark fields, schema-checked, hashed, checked by validate."""

from __future__ import annotations

import hashlib
import json
import shutil

import yaml

from cogbench.dataset_builders.output import MARKER_FILE
from cogbench.validation import validate
from cogbench.validation.metadata import eval_yaml_schema_errors


def test_build_writes_eval_yaml_with_a_task_per_config_and_metric_family(built_release):
    path = built_release / "eval.yaml"
    content = yaml.safe_load(path.read_text())
    # hub-docs eval-results.md, "Registering a Benchmark": name, description, evaluation_framework, tasks.
    assert content["name"] == "CogBench and CODIS" and content["evaluation_framework"] == "cogbench"
    assert content["tasks"] == [
        {"id": "cogbench_recognition", "config": "description", "split": "test"},
        {"id": "cogbench_cognition", "config": "description", "split": "test"},
        {"id": "cogbench_vqa_acc", "config": "vqa", "split": "test"},
        {"id": "codis_acc_p", "config": "codis", "split": "test"},
        {"id": "codis_acc_q", "config": "codis", "split": "test"},
    ]
    assert eval_yaml_schema_errors(content) == []
    marker = json.loads((built_release / MARKER_FILE).read_text())
    assert marker["sha256"]["eval.yaml"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert not [f for f in validate(built_release).findings if f.severity == "error"]


def test_the_schema_refuses_what_the_hub_would_refuse():
    good = {
        "name": "x",
        "description": "y",
        "evaluation_framework": "cogbench",
        "tasks": [{"id": "a", "config": "vqa", "split": "test"}],
    }
    assert eval_yaml_schema_errors(good) == []
    assert eval_yaml_schema_errors({**good, "tasks": []}) == ["tasks: [] should be non-empty"]
    no_split = {**good, "tasks": [{"id": "a", "config": "vqa"}]}
    assert eval_yaml_schema_errors(no_split) == ["tasks.0: 'split' is a required property"]
    assert eval_yaml_schema_errors({k: v for k, v in good.items() if k != "name"}) == [
        "(top level): 'name' is a required property"
    ]


def test_validate_finds_an_edited_or_missing_eval_yaml(built_release, tmp_path):
    folder = shutil.copytree(built_release, tmp_path / "build")
    content = yaml.safe_load((folder / "eval.yaml").read_text())
    content["tasks"][0]["id"] = "cogbench_recognition_v2"
    (folder / "eval.yaml").write_text(yaml.safe_dump(content))
    codes = {finding.code for finding in validate(folder).findings}
    assert {"eval_yaml.mismatch", "files.edited"} <= codes
    del content["tasks"][0]["split"]
    (folder / "eval.yaml").write_text(yaml.safe_dump(content))
    messages = [f.message for f in validate(folder).findings if f.code == "eval_yaml.mismatch"]
    assert any("'split' is a required property" in m for m in messages)
    (folder / "eval.yaml").unlink()
    assert "files.missing" in {finding.code for finding in validate(folder).findings}
