"""No command writes where it reads (issue 48 item 2).

``rescore RUN --out RUN`` replaced the run it rescored. Every command that reads runs, a build or a predictions
file and writes a folder or a file now refuses, in one line and with exit code 2 (as ``--write-requests`` equal
to ``--out`` is refused), an output that is one of its inputs, inside one, or around one
(``dataset_builders.output.check_apart``). A run folder without cogbench's marker (copied by hand) is the case
the markers alone did not catch: ``compare A B --json A/scores.json`` overwrote A's scores.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from cogbench.cli import main
from cogbench.dataset_builders.output import OUTPUT_MARKER

from openai_server import OpenAIServer, Reply


def files_of(folder: Path) -> dict[str, str]:
    """Every file below ``folder`` with its sha256: what must be left as it was."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def runs(built_release, tmp_path_factory):
    """An eval run (2 CODIS pairs, a real local server as the model, the rule judge), a score folder of its
    predictions, and a copy of that score folder without cogbench's marker."""
    root = tmp_path_factory.mktemp("apart")
    run, scored, copied = root / "run", root / "scored", root / "copied"
    with OpenAIServer(lambda request: Reply(text="The left one.")) as model, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "x")
        argv = ["eval", "--task", "codis", "--dataset", str(built_release), "--model", "openai:m", "--limit", "2"]
        assert main([*argv, "--base-url", model.base_url, "--out", str(run)]) == 0
    score = ["score", "--task", "codis", "--dataset", str(built_release), "--allow-partial"]
    assert main([*score, "--predictions", str(run / "predictions.jsonl"), "--out", str(scored)]) == 0
    shutil.copytree(scored, copied)
    (copied / OUTPUT_MARKER).unlink()
    return {"build": built_release, "run": run, "scored": scored, "copied": copied, "root": root}


def refused(capsys, argv: list[str], option: str, out: Path, where: str, name: str, given: Path) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: {option} {out}: {where} {name} {given}, which this command reads; refusing to write there: "
        f"give {option} a place of its own"
    ), err


def test_rescore_never_replaces_nor_writes_into_the_run_it_reads(runs, capsys):
    run, build = runs["run"], str(runs["build"])
    before = files_of(run)
    for out, where in ((run, "the same folder as"), (run / "new", "inside"), (runs["root"], "around")):
        refused(capsys, ["rescore", str(run), "--dataset", build, "--out", str(out)], "--out", out, where, "RUN", run)
        assert files_of(run) == before and not (run / "new").exists()
    score = run / "score"  # RUN named by its score folder: the eval folder around it is what is read
    refused(
        capsys, ["rescore", str(score), "--dataset", build, "--out", str(run)], "--out", run, "around", "RUN", score
    )
    requests = run / "requests"
    argv = ["rescore", str(run), "--dataset", build, "--out", str(runs["root"] / "new"), "--write-requests"]
    refused(capsys, [*argv, str(requests)], "--write-requests", requests, "inside", "RUN", run)
    assert files_of(run) == before and not (runs["root"] / "new").exists()


def test_compare_json_never_overwrites_a_run_it_compares(runs, capsys):
    copied, scored = runs["copied"], runs["scored"]
    before = files_of(copied)
    target = copied / "scores.json"
    argv = ["compare", str(copied), str(scored), "--json", str(target)]
    refused(capsys, argv, "--json", target, "inside", "RUN", copied)
    assert files_of(copied) == before


@pytest.mark.parametrize("option", ["--out", "--site"])
def test_report_never_writes_into_a_run_it_reports(runs, capsys, option):
    copied = runs["copied"]
    before = files_of(copied)
    out = copied / "report"
    refused(capsys, ["report", str(copied), option, str(out)], option, out, "inside", "RUN_DIR", copied)
    assert files_of(copied) == before and not out.exists()


def test_publish_results_never_writes_into_a_run_it_publishes(runs, capsys):
    copied = runs["copied"]
    out = copied / "results"
    argv = ["publish-results", str(copied), "--model-repo", "me/m", "--details-repo", "me/d", "--dry-run"]
    refused(capsys, [*argv, "--out", str(out)], "--out", out, "inside", "RUN", copied)
    assert not out.exists()


def test_score_never_writes_around_its_predictions(runs, capsys):
    folder = runs["root"] / "predictions-only"
    folder.mkdir()
    predictions = folder / "predictions.jsonl"
    shutil.copyfile(runs["run"] / "predictions.jsonl", predictions)
    argv = ["score", "--task", "codis", "--dataset", str(runs["build"]), "--predictions", str(predictions)]
    refused(capsys, [*argv, "--out", str(folder)], "--out", folder, "around", "--predictions", predictions)
    assert [p.name for p in folder.iterdir()] == ["predictions.jsonl"]


def test_export_never_writes_into_the_build_it_exports(runs, capsys):
    build = runs["build"]
    before = files_of(build)
    out = build / "export"
    argv = ["export", "--format", "vlmevalkit", "--dataset", str(build), "--out", str(out)]
    refused(capsys, argv, "--out", out, "inside", "--dataset", build)
    assert files_of(build) == before


def test_judges_files_never_land_in_a_run_they_read(runs, capsys):
    copied = runs["copied"]
    out = copied / "verdicts.parquet"
    refused(capsys, ["judges", "archive", str(copied), "--out", str(out)], "--out", out, "inside", "RUN", copied)
    argv = ["judges", "certify", "--reference", str(copied), "--candidate", str(runs["scored"])]
    refused(
        capsys, [*argv, "--json", str(copied / "c.json")], "--json", copied / "c.json", "inside", "--reference", copied
    )
    assert not out.exists()


def test_eval_never_writes_around_its_request_replies(runs, capsys, tmp_path):
    folder = tmp_path / "replies"
    folder.mkdir()
    replies = folder / "output.jsonl"
    replies.write_text("")
    argv = ["eval", "--task", "codis", "--dataset", str(runs["build"]), "--model", "openai:m", "--limit", "2"]
    argv += ["--read-responses", str(replies), "--out", str(folder)]
    refused(capsys, argv, "--out", folder, "around", "--read-responses", replies)
    assert [p.name for p in folder.iterdir()] == ["output.jsonl"]


def test_build_never_replaces_the_build_it_reads_nor_writes_into_its_raw_files(
    built_release, raw_dir, tmp_path, capsys
):
    old = tmp_path / "old"
    shutil.copytree(built_release, old)
    before = files_of(old)
    argv = ["build", "--raw-dir", str(raw_dir), "--out", str(old), "--version", "9.0.0", "--previous", str(old)]
    refused(capsys, argv, "--out", old, "the same folder as", "--previous", old)
    assert files_of(old) == before
    raw = tmp_path / "raw"
    shutil.copytree(raw_dir, raw)
    refused(
        capsys,
        ["build", "--raw-dir", str(raw), "--out", str(raw / "dist")],
        "--out",
        raw / "dist",
        "inside",
        "--raw-dir",
        raw,
    )
    assert not (raw / "dist").exists()
