"""``cogbench publish-results`` against the local Hub server with the real ``HfApi``, and the
details dataset it pushes, loaded with ``load_dataset`` and re-scored by hand.

The run: the real CODIS data, built with ``--repo-id``, and the authors' output example with
pairs 0-49 swapped (both queries wrong) and pairs 50-79 given query 2's output for query 1
(query 1 wrong, query 2 right). By hand: Acc_p = 273/353 pairs, Acc_q = 576/706 queries.
"""

from __future__ import annotations

import argparse
import json
import shutil

import datasets
import pytest
import yaml
from huggingface_hub import parse_eval_result_entries

from cogbench.cards.release import build_release
from cogbench.cli import main
from cogbench.reference_eval.publishing.hub_results import check_publishable, publish_results
from cogbench.reference_eval.recording.run_reader import read_run
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from hub_server import COMMIT_OID, HubRepo, LocalHub, configure_hub, local_hub_api
from shared_files import codis_example

DATASET = "cogorg/cogbench"
ACC_P = 100 * 273 / 353
ACC_Q = 100 * 576 / 706


def edited_predictions(path):
    pairs = json.loads(codis_example().read_text())
    for number, pair in enumerate(pairs):
        out = pair["output"]
        if number < 50:
            pair["output"] = {"output_1": out["output_2"], "output_2": out["output_1"]}
        elif number < 80:
            pair["output"] = {"output_1": out["output_2"], "output_2": out["output_2"]}
    path.write_text(json.dumps(pairs))
    return str(path)


@pytest.fixture(scope="module")
def codis_run(real_raw_dir, tmp_path_factory):
    """(build, run folder): the real CODIS config scored with the rule judge."""
    root = tmp_path_factory.mktemp("hub-results")
    raw = root / "raw"
    raw.mkdir()
    shutil.copytree(real_raw_dir / "codis", raw / "codis")
    build = build_release(raw, root / "build", repo_id=DATASET).out
    predictions = edited_predictions(root / "predictions.json")
    run_scoring(ScoreOptions(task="codis", dataset=str(build), predictions=predictions, out=str(root / "run")))
    return build, root / "run"


def args_for(run, tmp_path, **extra):
    values = {"runs": [str(run)], "model_repo": "me/model", "details_repo": "me/details", "dry_run": False}
    values.update({"out": None, "no_pr": False, **extra})
    return argparse.Namespace(**values)


def test_the_run_gives_the_hand_worked_numbers(codis_run):
    scores = json.loads((codis_run[1] / "scores.json").read_text())
    assert scores["metrics"]["acc_p"]["overall"] == pytest.approx(ACC_P, abs=1e-4)
    assert scores["metrics"]["acc_q"]["overall"] == pytest.approx(ACC_Q, abs=1e-4)
    assert scores["complete"] and scores["counts"]["dataset_images"] == 216


def test_publish_results_opens_a_pr_with_pinned_results_and_pushes_loadable_details(codis_run, tmp_path, monkeypatch):
    _build, run = codis_run
    lines = []
    with LocalHub() as hub:
        hub.repos[DATASET] = HubRepo(tags={"v2.0.0": COMMIT_OID})
        hub.models["me/model"] = HubRepo()
        assert publish_results(args_for(run, tmp_path), api=local_hub_api(hub, monkeypatch), say=lines.append) == 0
        # verify downloads the details the result's source.url names on HF_ENDPOINT's Hub (here the local one) ...
        configure_hub(hub, monkeypatch, tmp_path / "hub-cache")
        results = tmp_path / "codis_acc_p.yaml"
        results.write_bytes(hub.models["me/model"].prs[0][".eval_results/codis_acc_p.yaml"])
        assert main(["verify", str(results)]) == 0
        # ... or a Hub details repo at a revision.
        assert main(["verify", "me/details", "--revision", COMMIT_OID]) == 0
        assert any(path.endswith("/resolve/" + COMMIT_OID + "/data/codis/test.parquet") for _, path in hub.requests)
    model = hub.models["me/model"]
    assert model.files == {} and len(model.prs) == 1  # a pull request, nothing on main
    assert sorted(model.prs[0]) == [".eval_results/codis_acc_p.yaml", ".eval_results/codis_acc_q.yaml"]
    assert lines[-1] == f"opened {hub.endpoint}/me/model/discussions/1"
    scores = json.loads((run / "scores.json").read_text())
    for task_id, expected in (("codis_acc_p", ACC_P), ("codis_acc_q", ACC_Q)):
        (entry,) = parse_eval_result_entries(yaml.safe_load(model.prs[0][f".eval_results/{task_id}.yaml"]))
        assert (entry.dataset_id, entry.task_id, entry.dataset_revision) == (DATASET, task_id, COMMIT_OID)
        assert entry.value == round(expected, 2)
        low, high = scores["metrics"][task_id[6:]]["interval"]["overall"]
        assert entry.notes.startswith(f"95% CI [{low:.2f}, {high:.2f}] over 216 images")
        assert "216 images; judge rule;" in entry.notes
        assert entry.source_url == f"{hub.endpoint}/datasets/me/details/tree/{COMMIT_OID}"
    # The details dataset: loaded with load_dataset from what the Hub received, re-scored by hand.
    pushed = tmp_path / "pushed"
    for name, data in hub.repos["me/details"].files.items():
        (pushed / name).parent.mkdir(parents=True, exist_ok=True)
        (pushed / name).write_bytes(data)
    rows = datasets.load_dataset(str(pushed), "codis", split="test")
    columns = {"item_id", "prompt_sha256", "prompt_template_sha256", "raw_output", "parsed_answer", "judge_verdicts"}
    assert len(rows) == 353 and columns | {"judge_replies"} <= set(rows.column_names)
    assert json.loads(rows["judge_replies"][0]) == [None, None]  # the rule judge has no reply
    verdicts = [json.loads(v) for v in rows["judge_verdicts"]]
    assert 100 * sum(all(v) for v in verdicts) / len(verdicts) == pytest.approx(ACC_P)
    assert 100 * sum(map(sum, verdicts)) / (2 * len(verdicts)) == pytest.approx(ACC_Q)
    assert "rule" in (pushed / "README.md").read_text()
    assert main(["verify", str(pushed)]) == 0


def test_no_pr_pushes_to_main(codis_run, tmp_path, monkeypatch):
    with LocalHub() as hub:
        hub.repos[DATASET] = HubRepo(tags={"v2.0.0": COMMIT_OID})
        hub.models["me/model"] = HubRepo()
        publish_results(args_for(codis_run[1], tmp_path, no_pr=True), api=local_hub_api(hub, monkeypatch), say=print)
    assert hub.models["me/model"].prs == [] and len(hub.models["me/model"].files) == 2


def test_dry_run_writes_results_model_index_and_details_that_verify(codis_run, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(
        [
            *("publish-results", str(codis_run[1]), "--model-repo", "me/model", "--details-repo", "me/details"),
            *("--dry-run", "--out", str(out)),
        ]
    )
    assert code == 0
    assert "revision v2.0.0 not resolved to a commit" in capsys.readouterr().out  # offline: the tag is kept
    index = yaml.safe_load((out / "model-index.yaml").read_text())["model-index"][0]["results"][0]
    assert index["dataset"]["revision"] == "v2.0.0" and index["metrics"][0]["value"] == round(ACC_P, 2)
    assert main(["verify", str(out / ".eval_results" / "codis_acc_q.yaml"), "--details", str(out / "details")]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("verified: ")


def test_refusals_are_one_line_each(codis_run, real_raw_dir, built_release, tmp_path, capsys):
    run = codis_run[1]
    common = ["--model-repo", "me/model", "--details-repo", "me/details", "--dry-run", "--out"]
    # PARTIAL: 20 pairs without prediction.
    pairs = json.loads(codis_example().read_text())[20:]
    (tmp_path / "partial.json").write_text(json.dumps(pairs))
    partial = tmp_path / "partial"
    run_scoring(
        ScoreOptions(
            task="codis",
            dataset=str(codis_run[0]),
            predictions=str(tmp_path / "partial.json"),
            out=str(partial),
            allow_partial=True,
        )
    )
    assert main(["publish-results", str(partial), *common, str(tmp_path / "o1")]) == 2
    assert "refused: PARTIAL run (acc_p PARTIAL (333/353 pairs)" in capsys.readouterr().err
    # A local build that names no Hub repo.
    local = tmp_path / "local"
    run_scoring(
        ScoreOptions(task="codis", dataset=str(built_release), predictions=str(codis_example()), out=str(local))
    )
    assert main(["publish-results", str(local), *common, str(tmp_path / "o2")]) == 2
    assert "names no Hub repo; build it with --repo-id" in capsys.readouterr().err
    # An edited run: one verdict flipped in details.jsonl.
    edited = shutil.copytree(run, tmp_path / "edited")
    lines = (edited / "details.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"right": false', '"right": true', 1)
    (edited / "details.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["publish-results", str(edited), *common, str(tmp_path / "o3")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "the run folder was edited" in err and err.count("\n") == 1
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o3").exists()


def test_sample_runs_are_refused(codis_run):
    run = read_run(codis_run[1])
    run.scores["counts"]["dataset_images"] = 5  # as a build of 5 images records it
    with pytest.raises(Exception, match=r"refused: SAMPLE \(5 of 216 images\)"):
        check_publishable(run)
