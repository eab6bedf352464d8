"""Every Eval Ever records written by ``publish-results``, re-derived by ``verify``, and validated by the
EEE package's own validator (``every-eval-ever`` 0.3.0, Python >= 3.12: tests marked ``eee`` run it in
``COGBENCH_EEE_PYTHON``, the venv of ``.ci/run-eee``).

The run is test_hub_results's real CODIS run, re-scored by hand there: Acc_p = 273/353 pairs,
Acc_q = 576/706 queries. The record must hold exactly those counts in its rows.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from test_hub_results import ACC_P, ACC_Q, DATASET, args_for, codis_run  # noqa: F401  (the module's fixture)

from cogbench.cli import main
from cogbench.reference_eval.publishing.hub_results import publish_results

from hub_server import COMMIT_OID, HubRepo, LocalHub, configure_hub, local_hub_api

EEE_PYTHON = os.environ.get("COGBENCH_EEE_PYTHON")


def dry_run(run: Path, out: Path, *extra: str) -> int:
    return main(
        [
            *("publish-results", str(run), "--model-repo", "me/model", "--details-repo", "me/details"),
            *("--dry-run", "--out", str(out), *extra),
        ]
    )


def record_files(out: Path) -> tuple[Path, Path]:
    (aggregate,) = (out / "details" / "eee").glob("data/codis/me/model/*.json")
    return aggregate, aggregate.with_name(aggregate.stem + "_samples.jsonl")


@pytest.fixture(scope="module")
def written(codis_run, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("eee") / "out"
    assert dry_run(codis_run[1], out) == 0
    return out


def test_the_record_holds_the_hand_worked_counts_interval_and_run_settings(written, codis_run):  # noqa: F811
    aggregate_path, samples_path = record_files(written)
    aggregate = json.loads(aggregate_path.read_text())
    rows = [json.loads(line) for line in samples_path.read_text().splitlines()]
    scores = json.loads((codis_run[1] / "scores.json").read_text())
    results = {r["evaluation_result_id"]: r for r in aggregate["evaluation_results"]}
    assert sorted(results) == ["codis_acc_p", "codis_acc_q"]
    for task_id, expected, units, hits in (("codis_acc_p", ACC_P, 353, 273), ("codis_acc_q", ACC_Q, 706, 576)):
        mine = [r for r in rows if r["evaluation_result_id"] == task_id]
        assert len(mine) == units and sum(r["evaluation"]["is_correct"] for r in mine) == hits
        details = results[task_id]["score_details"]
        assert details["score"] == pytest.approx(expected, abs=1e-4)
        low, high = scores["metrics"][task_id[6:]]["interval"]["overall"]
        interval = details["uncertainty"]["confidence_interval"]
        assert (interval["lower"], interval["upper"], interval["confidence_level"]) == (low, high, 0.95)
        assert details["uncertainty"]["num_samples"] == units and details["details"]["images"] == "216"
        assert results[task_id]["metric_config"]["additional_details"]["judge"] == "rule"
        assert results[task_id]["source_data"]["hf_repo"] == DATASET
        assert results[task_id]["generation_config"]["additional_details"]["thinking"] == "not recorded"
    assert aggregate["detailed_evaluation_results"]["total_rows"] == len(rows) == 353 + 706
    assert aggregate["eval_library"]["version"] == scores["provenance"]["cogbench_version"]
    assert aggregate["model_info"]["id"] == "me/model" and rows[0]["model_id"] == "me/model"


def test_the_same_run_gives_the_same_record(written, codis_run, tmp_path):  # noqa: F811
    assert dry_run(codis_run[1], tmp_path / "again") == 0
    assert [p.read_bytes() for p in record_files(tmp_path / "again")] == [p.read_bytes() for p in record_files(written)]


def test_verify_re_derives_a_record_from_its_rows(written, capsys):
    aggregate, _ = record_files(written)
    assert main(["verify", str(aggregate)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("verified: ")


def test_verify_finds_an_edited_row_and_an_edited_score(written, tmp_path, capsys):
    copy = tmp_path / "copy"
    aggregate, samples = record_files(written)
    copy.mkdir()
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    wrong = next(r for r in rows if r["evaluation_result_id"] == "codis_acc_p" and not r["evaluation"]["is_correct"])
    wrong["evaluation"] = {"score": 1.0, "is_correct": True}  # a pair turned right, its hits left at 0
    (copy / samples.name).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    record = json.loads(aggregate.read_text())
    record["evaluation_results"][1]["score_details"]["score"] += 1.0  # Acc_q one point higher
    (copy / aggregate.name).write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["verify", str(copy / aggregate.name)]) == 1
    out = capsys.readouterr().out
    assert "evaluation.score: says 1.0000, the details give 0.0000" in out
    assert "(codis_acc_q): score: says" in out
    assert "detailed_evaluation_results.checksum" in out  # the rows file is not the one the record names


def test_a_result_whose_source_is_the_record_verifies_from_the_hub(codis_run, tmp_path, monkeypatch, capsys):  # noqa: F811
    with LocalHub() as hub:
        hub.repos[DATASET] = HubRepo(tags={"v2.0.0": COMMIT_OID})
        hub.models["me/model"] = HubRepo()
        args = args_for(codis_run[1], tmp_path, results_source="eee", allow_conflict=False)
        assert publish_results(args, api=local_hub_api(hub, monkeypatch), say=lambda line: None) == 0
        text = hub.models["me/model"].prs[0][".eval_results/codis_acc_p.yaml"]
        url = yaml.safe_load(text)[0]["source"]["url"]
        assert url.startswith(f"{hub.endpoint}/datasets/me/details/blob/{COMMIT_OID}/eee/data/codis/me/model/")
        record = url.split(f"/blob/{COMMIT_OID}/", 1)[1]
        assert record in hub.repos["me/details"].files  # the record went with the details
        (tmp_path / "codis_acc_p.yaml").write_bytes(text)
        configure_hub(hub, monkeypatch, tmp_path / "hub-cache")  # the Hub configured here (HF_ENDPOINT's)
        assert main(["verify", str(tmp_path / "codis_acc_p.yaml")]) == 0
        # The record itself is checked too: its checksum edited on the Hub (a fresh cache) fails verify, named.
        aggregate = json.loads(hub.repos["me/details"].files[record])
        aggregate["detailed_evaluation_results"]["checksum"] = "0" * 64
        hub.repos["me/details"].files[record] = json.dumps(aggregate).encode()
        configure_hub(hub, monkeypatch, tmp_path / "hub-cache-2")
        capsys.readouterr()
        assert main(["verify", str(tmp_path / "codis_acc_p.yaml")]) == 1
        assert "detailed_evaluation_results.checksum" in capsys.readouterr().out


EEE_CHECK = """
import json, sys
from pathlib import Path
from every_eval_ever.eval_types import EvaluationLog
from every_eval_ever.instance_level_types import InstanceLevelEvaluationLog
from every_eval_ever.validator.validation_core import validate_file

root = Path(sys.argv[1])
files = sorted(str(p.relative_to(root)) for p in root.glob("data/*/*/*/*.json*"))
reports = [
    validate_file(root / f, repo_path=f, available_files=frozenset(files),
                  read_repo_file=lambda f: (root / f).read_text(encoding="utf-8"), run_semantic_checks=True)
    for f in files
]
aggregate = EvaluationLog.model_validate_json((root / files[0]).read_text())
rows = [InstanceLevelEvaluationLog.model_validate_json(line) for line in (root / files[1]).read_text().splitlines()]
print(json.dumps({
    "files": files,
    "reports": [[r.valid, r.errors, r.warnings] for r in reports],
    "scores": {r.evaluation_result_id: r.score_details.score for r in aggregate.evaluation_results},
    "right": sum(row.evaluation.is_correct for row in rows if row.evaluation_result_id == "codis_acc_p"),
}))
"""


@pytest.mark.eee
def test_every_eval_ever_validates_the_record_and_reads_it_back(written):
    if not EEE_PYTHON:
        pytest.skip("needs every-eval-ever 0.3.0 (Python >= 3.12) in COGBENCH_EEE_PYTHON: runs in .ci/run-eee")
    root = written / "details" / "eee"
    done = subprocess.run([EEE_PYTHON, "-c", EEE_CHECK, str(root)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert len(found["files"]) == 2 and found["files"][0].endswith(".json")
    assert found["reports"] == [[True, [], []], [True, [], []]]  # valid, no error, no warning
    assert found["scores"]["codis_acc_p"] == pytest.approx(ACC_P, abs=1e-4)
    assert found["scores"]["codis_acc_q"] == pytest.approx(ACC_Q, abs=1e-4)
    assert found["right"] == 273
