"""``cogbench explain`` reads what ``report --site`` reads, verified first (issue 41 item 1).

A details dataset written by the project's own writer (``details_dataset.write_details``, as
``publish-results`` writes it) from a real run on the real build, a details dataset on the real local
Hub server at a revision, and the ``.eval_results`` file ``publish-results`` pushed there: each explains
as the run folder it came from, except the eval run.json a details dataset does not keep, whose
generation settings are then "not recorded", never guessed. An edited details dataset is refused.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import needs_real_data
from test_explain import (
    codis_a,  # noqa: F401 (module-scoped fixtures)
    codis_lines,
    pairs,  # noqa: F401
    score,
    swapped_outputs,
)
from test_explain_vqa import (
    sample_ids,
    vqa_a,  # noqa: F401
    vqa_lines,
    vqa_rows,  # noqa: F401
)
from test_hub_results import (
    DATASET,
    args_for,
    codis_run,  # noqa: F401 (the module-scoped run fixture)
)

from cogbench.cli import main
from cogbench.reference_eval.publishing.details_dataset import write_details
from cogbench.reference_eval.publishing.hub_results import publish_results
from cogbench.reference_eval.recording.run_reader import read_run
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring
from cogbench.reference_eval.tasks.prompts import template_for

from hub_server import COMMIT_OID, HubRepo, LocalHub, local_hub_api


def published(dataset: Path, task: str, lines: list[dict], out: Path) -> Path:
    """A run scored as a user scores one to publish (default interval settings, which `verify` re-derives)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    predictions = out.parent / f"{out.name}.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    run_scoring(ScoreOptions(task=task, dataset=str(dataset), predictions=str(predictions), out=str(out)))
    return out


def eval_folder(dataset: Path, lines: list[dict], folder: Path, generation: dict) -> Path:
    """An ``eval`` run folder as `eval` leaves it (run/folder.py): predictions.jsonl in the project's format
    with the model template and generation settings on every line, run.json saying the same, score/ scored
    from them, so that it verifies (explain verifies a run folder before reading it). Returns score/."""
    template = template_for("codis")
    folder.mkdir(parents=True)
    made = [
        {**line, "prompt_id": template.id, "prompt_sha256": template.sha256, "generation": generation} for line in lines
    ]
    (folder / "predictions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in made))
    out = folder / "score"
    run_scoring(
        ScoreOptions(task="codis", dataset=str(dataset), predictions=str(folder / "predictions.jsonl"), out=str(out))
    )
    scores = json.loads((out / "scores.json").read_text())
    record = {"task": "codis", "mode": None, "model": scores["model"], "prompt_id": template.id}
    record.update(prompt_sha256=template.sha256, generation=generation, dataset=scores["dataset"])
    (folder / "run.json").write_text(json.dumps({**record, "dataset_revision": scores["dataset_revision"]}))
    return out


def explained(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["explain", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def same_explanation(x: dict, y: dict) -> None:
    """Everything but the inputs' names (and the unrecorded stages' notes, compared by the caller)."""
    assert x["metrics"] == y["metrics"] and x["contributions"] == y["contributions"]
    assert {s: v["assigned"] for s, v in x["stages"].items()} == {s: v["assigned"] for s, v in y["stages"].items()}


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1, err
    return err


@needs_real_data
def test_a_details_dataset_explains_as_its_run_and_keeps_no_generation_settings(
    built_release,
    pairs,  # noqa: F811
    tmp_path,
    capsys,
):
    ids = set(random.Random(7).sample([p["id"] for p in pairs], 6))
    a = eval_folder(built_release, codis_lines(), tmp_path / "eval-a", {"max_new_tokens": 64, "temperature": 0.0})
    swapped = codis_lines(outputs=swapped_outputs(pairs, ids))
    b = eval_folder(built_release, swapped, tmp_path / "eval-b", {"max_new_tokens": 8, "temperature": 0.0})
    folders = explained(capsys, str(a.parent), str(b.parent))
    assert set(folders["stages"]["generation"]["assigned"]) == ids  # both run.json recorded: generation
    details = tmp_path / "details-b"
    write_details([read_run(b.parent)], details, "org/details", "main")

    printed = explained(capsys, str(a.parent), str(details))
    assert printed["b"]["run"] == f"{details} (codis)" and printed["a"]["run"] == str(a)
    # the details dataset keeps no run.json: generation is not recorded, the changed outputs fall to output
    assert printed["stages"]["generation"]["assigned"] == [] and set(printed["stages"]["output"]["assigned"]) == ids
    assert printed["stages"]["generation"]["not_recorded"].startswith("not recorded for 353 shared item(s)")
    assert "details dataset" in printed["stages"]["generation"]["not_recorded"]
    for name, columns in folders["metrics"].items():  # the same numbers, their share moved to output
        for column, row in columns.items():
            other = printed["metrics"][name][column]
            assert [other[k] for k in ("a", "b", "difference")] == [row[k] for k in ("a", "b", "difference")]
            assert other["shares"]["output"] == row["shares"]["generation"], (name, column)
    moved = printed["metrics"]["acc_p"]["overall"]
    assert moved["difference"] == pytest.approx(-100 * len(ids) / 353)  # by hand: each swapped pair is wrong
    assert moved["shares"]["output"] == pytest.approx(moved["difference"])
    assert main(["explain", str(a.parent), str(details)]) == 0
    assert "not recorded for 353 shared item(s)" in capsys.readouterr().out


@needs_real_data
def test_the_task_is_taken_from_a_details_dataset_of_several(
    built_release,
    codis_a,  # noqa: F811
    vqa_a,  # noqa: F811
    vqa_rows,  # noqa: F811
    pairs,  # noqa: F811
    tmp_path,
    capsys,
):
    ids = sample_ids(vqa_rows, 3, 5)
    codis_b = published(
        built_release, "codis", codis_lines(outputs=swapped_outputs(pairs, {pairs[0]["id"]})), tmp_path / "c"
    )
    vqa_b = published(built_release, "vqa", vqa_lines(vqa_rows, wrong=ids), tmp_path / "v")
    both = tmp_path / "both"
    write_details([read_run(codis_b), read_run(vqa_b)], both, "org/details", "main")
    same_explanation(explained(capsys, str(vqa_a), str(both)), explained(capsys, str(vqa_a), str(vqa_b)))
    assert explained(capsys, str(both), str(codis_a))["stages"]["output"]["assigned"] == [pairs[0]["id"]]

    assert main(["explain", str(both), str(both)]) == 2
    assert "hold 'codis' and 'vqa': choose one with --task" in error_line(capsys)
    assert set(explained(capsys, str(vqa_a), str(both), "--task", "vqa")["stages"]["output"]["assigned"]) == ids
    assert main(["explain", str(vqa_a), str(both), "--task", "codis"]) == 2
    assert f"{vqa_a}: holds no 'codis' scoring (it holds 'vqa')" in error_line(capsys)
    vqa_only = tmp_path / "vqa-only"
    write_details([read_run(vqa_b)], vqa_only, "org/details", "main")
    assert main(["explain", str(codis_a), str(vqa_only)]) == 2
    assert "they score different tasks ('codis' and 'vqa')" in error_line(capsys)


@needs_real_data
def test_an_edited_details_dataset_is_refused_before_anything_is_explained(
    built_release,
    codis_a,  # noqa: F811
    tmp_path,
    capsys,
):
    details = tmp_path / "details"
    write_details([read_run(published(built_release, "codis", codis_lines(), tmp_path / "a"))], details, "o/d", "main")
    scores = details / "runs" / "codis" / "scores.json"
    edited = json.loads(scores.read_text())
    edited["metrics"]["acc_q"]["overall"] -= 3
    scores.write_text(json.dumps(edited))
    assert main(["explain", str(codis_a), str(details)]) == 1
    err = error_line(capsys)
    assert f"{details}: not verified" in err and "acc_q" in err and "cogbench verify" in err
    detail = details / "data" / "codis" / "test.parquet"  # a details line edited in the Parquet rows too
    detail.write_bytes(detail.read_bytes()[:-100])
    assert main(["explain", str(codis_a), str(details)]) == 1
    error_line(capsys)


@needs_real_data
def test_a_hub_details_dataset_at_a_revision_and_an_eval_results_file_are_inputs(
    codis_run,  # noqa: F811
    tmp_path,
    monkeypatch,
    capsys,
):
    """publish-results pushes the run's details to the local Hub; explain reads them back by repo id at a
    revision and through the .eval_results file, in a child process with HF_ENDPOINT set (huggingface_hub
    builds its download URLs from HF_ENDPOINT when it is imported), and explains them as the run folder."""
    build, run = codis_run
    a = score(build, "codis", codis_lines(), tmp_path / "a")
    local = explained(capsys, str(a), str(run))
    assert local["metrics"]["acc_p"]["overall"]["difference"] != 0
    with LocalHub() as hub:
        hub.repos[DATASET] = HubRepo(tags={"v2.0.0": COMMIT_OID})
        hub.models["me/model"] = HubRepo()
        publish_results(args_for(run, tmp_path, no_pr=True), api=local_hub_api(hub, monkeypatch), say=print)
        results = tmp_path / "codis_acc_p.yaml"
        results.write_bytes(hub.models["me/model"].files[".eval_results/codis_acc_p.yaml"])
        env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HF_HUB_OFFLINE": "0", "HF_HOME": str(tmp_path / "hf")}
        for source in (f"me/details@{COMMIT_OID}", str(results)):
            command = [sys.executable, "-m", "cogbench", "explain", str(a), source, "--json"]
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-2000:]
            printed = json.loads(done.stdout)
            same_explanation(printed, local)
            assert printed["b"]["run"] == f"{source} (codis)"
        command = [sys.executable, "-m", "cogbench", "explain", str(a), "me/details@no-such-revision"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("error: cannot download the details me/details@no-such-revision")


@needs_real_data
def test_a_reader_that_stops_early_ends_the_command_quietly(codis_a, tmp_path):  # noqa: F811
    """`cogbench explain A B | head -1`: a real pipe whose reader is gone, no BrokenPipeError traceback."""
    read, write = os.pipe()
    command = [sys.executable, "-m", "cogbench", "explain", str(codis_a), str(codis_a)]
    child = subprocess.Popen(command, stdout=write, stderr=subprocess.PIPE, text=True)
    os.close(write)
    os.close(read)  # the reader is gone before the command's first line (it takes a second to start)
    _, err = child.communicate(timeout=600)
    assert (child.returncode, err) == (141, "")
    head = subprocess.run(f"{shlex.join(command)} | head -1", shell=True, capture_output=True, text=True, timeout=600)
    assert head.stdout.startswith("# Why B differs from A (codis)") and head.stderr == ""


def test_a_mistyped_local_path_says_so_as_well_as_what_the_hub_said(tmp_path):
    """`runs/a` that is not here looks like a Hub id: on the real local Hub (no such dataset there) the one
    line says both; where `runs/` is a folder here it is read as the local path it is, the Hub not asked.
    The same for `explain`, `report --site` (their reader) and `verify`."""
    (tmp_path / "hf").mkdir()
    with LocalHub() as hub:
        env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HF_HUB_OFFLINE": "0", "HF_HOME": str(tmp_path / "hf")}
        commands = [["explain", "runs/a", "runs/b"], ["report", "runs/a", "--site", "site"], ["verify", "runs/a"]]
        for argv in commands:
            done = subprocess.run(
                [sys.executable, "-m", "cogbench", *argv], cwd=tmp_path, env=env, capture_output=True, text=True
            )
            assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
            assert done.stderr == (
                f"error: cannot download the details runs/a@main from the Hub at {hub.endpoint} "
                "(RepositoryNotFoundError: no such dataset there), and there is no local folder runs/a either\n"
            )
        asked = len(hub.requests)
        assert asked >= 3
        (tmp_path / "runs").mkdir()
        for argv in commands:
            done = subprocess.run(
                [sys.executable, "-m", "cogbench", *argv], cwd=tmp_path, env=env, capture_output=True, text=True
            )
            assert done.returncode == 2, done.stderr
            assert (
                done.stderr
                == "error: runs/a: no such file or folder (runs/ is a folder here, so it is read as a local path)\n"
            )
        assert len(hub.requests) == asked
