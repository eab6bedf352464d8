"""Releases that cannot be corrupted: safe output folders, tamper-evident validate and publish.

Every case damages a copy of the real data or of a build made from it in the
test (never committed), then checks the exit code, the finding's code and
location, that no traceback is printed and that nothing is left behind or
deleted that the build did not write.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from cogbench.cards.card import render_card
from cogbench.cards.publish import publish
from cogbench.cards.release import build_release
from cogbench.cli import main
from cogbench.dataset_builders.output import MARKER_FILE
from cogbench.errors import CogbenchError
from cogbench.validation import validate

from hub_server import call_names
from validation_helpers import copy_samples, edit_json

REPO = "cogbench-org/cogbench"
SECRET = "hf_THIS_TOKEN_MUST_NEVER_BE_PRINTED"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def samples_build(real_raw_dir, tmp_path_factory) -> Path:
    """The real CogBench samples built once (gated data, small): copy it before damaging it."""
    raw = copy_samples(real_raw_dir, tmp_path_factory.mktemp("raw"))
    return build_release(raw, tmp_path_factory.mktemp("out") / "cogbench", version="1.0.0", repo_id=REPO).out


@pytest.fixture
def damaged(samples_build, tmp_path) -> Path:
    copy = tmp_path / "build"
    shutil.copytree(samples_build, copy)
    return copy


@pytest.fixture(autouse=True)
def token(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)


def manifest_of(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def shard(folder: Path, config: str = "vqa") -> Path:
    return next((folder / "data" / config).glob("*.parquet"))


def validate_cli(folder: Path, capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["validate", str(folder), *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def publish_cli(folder: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(["publish", str(folder), "--repo-id", REPO, "--version", "1.0.0", "--dry-run", *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and SECRET not in out + err
    return code, out + err


def codes_at(folder: Path) -> set[tuple[str, str]]:
    return {(f.code, f.file) for f in validate(folder).errors}


# ------------------------------------------------------------- safe output folders


def test_a_folder_holding_any_manifest_json_is_not_replaced(real_raw_dir, tmp_path, capsys):
    site = tmp_path / "site"
    site.mkdir()
    (site / "manifest.json").write_text('{"name": "my web app"}')
    (site / "index.html").write_text("<p>keep</p>")
    raw = copy_samples(real_raw_dir, tmp_path / "raw")
    assert main(["build", "--raw-dir", str(raw), "--out", str(site)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "not a cogbench build" in err and "Traceback" not in err
    assert sorted(p.name for p in site.iterdir()) == ["index.html", "manifest.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw", "site"]  # no staging left


def test_a_previous_build_with_a_foreign_file_is_not_replaced(real_raw_dir, samples_build, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(samples_build, out)
    (out / "data" / "notes.txt").write_text("mine")
    raw = copy_samples(real_raw_dir, tmp_path / "raw")
    assert main(["build", "--raw-dir", str(raw), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "did not write (data/notes.txt)" in err and "Traceback" not in err
    assert (out / "data" / "notes.txt").read_text() == "mine" and (out / "manifest.json").is_file()


def test_a_forged_marker_never_deletes_unlisted_files(real_raw_dir, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    (out / MARKER_FILE).write_text(json.dumps({"builder": "cogbench", "format": 1, "files": [MARKER_FILE]}))
    raw = copy_samples(real_raw_dir, tmp_path / "raw")
    assert main(["build", "--raw-dir", str(raw), "--out", str(out)]) == 2
    assert (out / "thesis.tex").read_text() == "years of work"


def test_rebuild_removes_only_what_the_build_wrote(real_raw_dir, tmp_path):
    raw = copy_samples(real_raw_dir, tmp_path / "raw")
    out = tmp_path / "out"
    build_release(raw, out)
    marker = json.loads((out / MARKER_FILE).read_text())
    assert marker["builder"] == "cogbench" and marker["format"] == 1
    assert sorted(marker["files"]) == sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    build_release(raw, out)
    assert validate(out).ok
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "raw"]


def test_racing_builds_end_with_one_valid_build_and_no_traceback(real_raw_dir, tmp_path):
    raw = copy_samples(real_raw_dir, tmp_path / "raw")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "cogbench", "build", "--raw-dir", str(raw), "--out", str(out)]
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(3)
    ]
    results = [(run.wait(timeout=600), *run.communicate()) for run in runs]
    for code, _stdout, stderr in results:
        assert "Traceback" not in stderr, stderr
        assert code == 0 or (code == 1 and stderr.startswith("error: ")), stderr
    assert any(code == 0 for code, _, _ in results)
    assert validate(out).ok
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "raw"]  # no staging or old folder left


# ---------------------------------------------------------- tampering caught


@pytest.mark.parametrize("where", [0.1, 0.5, 0.9])
def test_a_flipped_byte_anywhere_in_a_shard_is_caught(damaged, capsys, where):
    path = shard(damaged)
    data = bytearray(path.read_bytes())
    data[int(len(data) * where)] ^= 0x01
    path.write_bytes(bytes(data))
    code, out, _ = validate_cli(damaged, capsys)
    assert code == 1 and f"error files.hash_mismatch: {path.relative_to(damaged).as_posix()}" in out
    code, text = publish_cli(damaged, capsys)
    assert code == 1 and "fails validation" in text and "nothing was uploaded" in text


def _edit_rows(manifest):
    manifest["configs"]["vqa"]["rows"] = 63


def _edit_counts(manifest):
    manifest["configs"]["vqa"]["counts"]["answers"]["A"] += 1


def _edit_hash(manifest):
    entry = next(iter(manifest["configs"]["vqa"]["shards"].values()))
    entry["sha256"] = "0" * 64


def _edit_shard_rows(manifest):
    entry = next(iter(manifest["configs"]["vqa"]["shards"].values()))
    entry["rows"] += 1


def _empty_configs_and_sources(manifest):
    manifest["configs"] = {}
    manifest["sources"] = {}


def _edit_version(manifest):
    manifest["dataset_version"] = "9.9.9"


def _edit_sources(manifest):
    manifest["sources"] = "codis"


def _edit_expected_counts(manifest):
    manifest["expected_counts"] = None


MANIFEST_EDITS = {
    "dataset_version": (_edit_version, ("files.edited", "manifest.json")),
    "sources": (_edit_sources, ("files.edited", "manifest.json")),
    "expected_counts": (_edit_expected_counts, ("files.edited", "manifest.json")),
    "rows": (_edit_rows, ("manifest.mismatch", "manifest.json")),
    "counts": (_edit_counts, ("manifest.mismatch", "manifest.json")),
    "sha256": (_edit_hash, ("files.hash_mismatch", "data/vqa/test-00000-of-00001.parquet")),
    "shard rows": (_edit_shard_rows, ("manifest.mismatch", "manifest.json")),
    "empty configs and sources": (_empty_configs_and_sources, ("files.stray", "data/vqa/test-00000-of-00001.parquet")),
}


@pytest.mark.parametrize("case", sorted(MANIFEST_EDITS))
def test_manifest_edits_are_caught_and_refused(damaged, capsys, case):
    edit, expected = MANIFEST_EDITS[case]
    edit_json(damaged / "manifest.json", edit)
    assert expected in codes_at(damaged)
    code, out, _ = validate_cli(damaged, capsys)
    assert code == 1 and "FAILED" in out
    code, text = publish_cli(damaged, capsys)
    assert code == 1 and "nothing was uploaded" in text and "gating:      none" not in text


def test_an_edited_card_is_caught(damaged, capsys):
    card = damaged / "README.md"
    card.write_text(card.read_text(encoding="utf-8") + "\nA line added after the build.\n", encoding="utf-8")
    assert ("files.edited", "README.md") in codes_at(damaged)
    code, out, _ = validate_cli(damaged, capsys)
    assert code == 1 and "FAILED" in out


@pytest.mark.parametrize("lost", ["every hash", "the card's hash"])
def test_a_card_edited_with_its_hash_taken_from_the_marker_is_refused_like_score_refuses_it(
    damaged, tmp_path, capsys, lost
):
    """The card's prose is vouched for by the marker's sha256 alone: without it `validate` must fail, as
    `score` does (integrity.verify_build), rather than pass an edited card."""
    marker = json.loads((damaged / MARKER_FILE).read_text())
    if lost == "every hash":
        del marker["sha256"]
    else:
        del marker["sha256"]["README.md"]
    (damaged / MARKER_FILE).write_text(json.dumps(marker))
    card = damaged / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("CogBench", "CogBench (now MIT licensed)", 1))
    assert ("files.unverified", "README.md") in codes_at(damaged)
    code, out, _ = validate_cli(damaged, capsys)
    assert code == 1 and "FAILED" in out and "files.unverified" in out
    score = ["score", "--task", "description", "--dataset", str(damaged), "--oracle", "--out", str(tmp_path / "s")]
    assert main(score) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "rebuild" in err


def test_emptied_manifest_still_plans_gating_from_the_shards(damaged, hub, api, capsys):
    """Even with validation bypassed, the shards on disk decide gating, and unlisted shards are refused."""
    edit_json(damaged / "manifest.json", _empty_configs_and_sources)
    (damaged / "README.md").write_text(render_card(manifest_of(damaged)))  # a consistent forgery
    assert "extra_gated_prompt" not in (damaged / "README.md").read_text()
    assert ("card.licence", "README.md") in codes_at(damaged)  # the shards on disk are CogBench's
    passing = lambda path, expected="auto": SimpleNamespace(errors=[], ok=True)  # noqa: E731
    with pytest.raises(CogbenchError, match="holds files the build did not write: data/description/"):
        publish(damaged, REPO, "1.0.0", api=api, validate=passing, dry_run=True)
    assert hub.requests == []


@pytest.mark.parametrize("stray", [".env", "notes.txt", "data/vqa/test-00001-of-00001.parquet", "data/extra/x.parquet"])
def test_a_stray_file_is_caught_and_never_uploaded(damaged, hub, api, capsys, stray):
    (damaged / stray).parent.mkdir(parents=True, exist_ok=True)
    if stray.endswith(".parquet"):
        shutil.copy(shard(damaged), damaged / stray)
    else:
        (damaged / stray).write_text(f"HF_TOKEN={SECRET}\n")
    assert ("files.stray", stray) in codes_at(damaged)
    code, text = publish_cli(damaged, capsys)
    assert code == 1 and "nothing was uploaded" in text
    passing = lambda path, expected="auto": SimpleNamespace(errors=[], ok=True)  # noqa: E731
    with pytest.raises(CogbenchError, match=f"holds files the build did not write: {stray}"):
        publish(damaged, REPO, "1.0.0", api=api, validate=passing)
    assert hub.requests == []


def test_the_marker_is_never_uploaded(samples_build, api):
    passing = lambda path, expected="auto": SimpleNamespace(errors=[], ok=True)  # noqa: E731
    plan = publish(samples_build, REPO, "1.0.0", api=api, validate=passing, dry_run=True)
    assert MARKER_FILE not in {path for path, _ in plan.uploads}
    assert {path for path, _ in plan.uploads} == {
        "README.md",
        "manifest.json",
        "croissant.json",
        "eval.yaml",
        "metadata.json",
        "fingerprints.parquet",
    } | set(manifest_of(samples_build)["configs"]["vqa"]["shards"]) | set(
        manifest_of(samples_build)["configs"]["description"]["shards"]
    )


@pytest.mark.parametrize(
    "old, new, code",
    [
        ("license: other", "license: apache-2.0", "card.licence"),
        ("extra_gated_prompt:", "former_gated_prompt:", "card.licence"),
        ("config_name: vqa", "config_name: vqa_renamed", "card.mismatch"),
    ],
)
def test_an_edited_card_licence_or_gating_is_caught(damaged, capsys, old, new, code):
    card = damaged / "README.md"
    assert old in card.read_text()
    card.write_text(card.read_text().replace(old, new, 1))
    assert (code, "README.md") in codes_at(damaged)
    assert publish_cli(damaged, capsys)[0] == 1


def test_an_edited_gating_text_is_refused_by_publish(damaged, hub, api):
    card = damaged / "README.md"
    card.write_text(card.read_text().replace("non-commercial", "commercial", 1))
    passing = lambda path, expected="auto": SimpleNamespace(errors=[], ok=True)  # noqa: E731
    with pytest.raises(CogbenchError, match="not the card the build rendered"):
        publish(damaged, REPO, "1.0.0", api=api, validate=passing)
    assert hub.requests == []


def test_a_hub_error_body_echoing_the_token_is_never_printed(samples_build, hub, api, capsys):
    """The real client's errors for a local Hub server that answers with the token in the body."""
    hub.refuse = ("POST", "main", 401, f"invalid token {SECRET}")  # the commit
    with pytest.raises(CogbenchError) as caught:
        publish(samples_build, REPO, "1.0.0", api=api)
    assert SECRET not in str(caught.value) and "HfHubHTTPError (HTTP 401)" in str(caught.value)
    assert "create_commit" in call_names(hub)
    hub.refuse = ("GET", REPO.split("/")[1], 403, f"invalid token {SECRET}")  # repo info
    publish(samples_build, REPO, "1.0.0", api=api, dry_run=True)  # the plan is still shown
    out = capsys.readouterr().out
    assert "could not be checked (HfHubHTTPError (HTTP 403))" in out and SECRET not in out
    with pytest.raises(CogbenchError) as caught:
        publish(samples_build, REPO, "1.0.0", api=api)
    assert SECRET not in str(caught.value)


# --------------------------------------------------- release counts by version


def test_a_major_release_with_removed_records_validates_and_publishes(real_raw_dir, samples_build, tmp_path, capsys):
    raw = copy_samples(real_raw_dir, tmp_path / "raw")
    edit_json(raw / "cogbench-samples" / "cogbench_vqa.json", lambda items: items.pop(0))
    new = build_release(raw, tmp_path / "v2", version="2.0.0", previous=samples_build, repo_id=REPO).out
    assert manifest_of(new)["expected_counts"] == "manifest"
    code, out, _ = validate_cli(new, capsys)
    assert code == 0 and "expected counts: the build's own manifest" in out
    code = main(["publish", str(new), "--repo-id", REPO, "--version", "2.0.0", "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 0 and "validation:  passed" in out, err
    # Asked to match the published counts of the samples, it is refused.
    code = main(
        ["publish", str(new), "--repo-id", REPO, "--version", "2.0.0", "--dry-run", "--expected", "cogbench-samples"]
    )
    assert code == 1 and "counts.mismatch" in capsys.readouterr().err


def test_a_first_release_declares_the_published_counts(samples_build, capsys):
    assert manifest_of(samples_build)["expected_counts"] == ["cogbench-samples.json"]
    code, out, _ = validate_cli(samples_build, capsys)
    assert code == 0 and "expected counts: cogbench-samples.json (declared by the build's manifest)" in out


# ------------------------------------------------------------- report wording


def test_strict_failure_says_failed(real_raw_dir, capsys):
    code, out, _ = validate_cli(real_raw_dir / "codis", capsys, "--strict", "--expected", "none")
    assert code == 0  # CODIS has info findings only
    code, out, _ = validate_cli(real_raw_dir / "cogbench-samples", capsys, "--strict", "--format", "json")
    report = json.loads(out)
    if report["counts"].get("warning"):
        assert code == 1 and report["ok"] is False and report["strict"] is True
    code, out, _ = validate_cli(real_raw_dir / "cogbench-samples", capsys, "--strict")
    if code == 1:
        assert "OK:" not in out and "FAILED (--strict: warnings count as errors)" in out


def test_skipped_counts_say_skipped_and_info_is_folded(real_raw_dir, capsys):
    code, out, _ = validate_cli(real_raw_dir / "codis", capsys, "--expected", "none")
    assert code == 0 and "[counts] skipped - expected counts: skipped (--expected none)" in out
    assert "[counts] ok" not in out
    assert "45 info finding(s) by design, not listed (--verbose lists them)" in out
    assert "identity.repeated_question" not in out
    code, out, _ = validate_cli(real_raw_dir / "codis", capsys, "--verbose")
    assert "info identity.repeated_question" in out and "expected counts: codis-1.0.json (auto" in out


@pytest.mark.parametrize("edit", ["unparseable card", "sources not an object"])
def test_hand_edited_metadata_is_reported_not_raised(damaged, capsys, edit):
    if edit == "unparseable card":
        (damaged / "manifest.json").unlink()
        (damaged / "README.md").write_text("---\nconfigs: [\n---\n", encoding="utf-8")
    else:
        edit_json(damaged / "manifest.json", _edit_sources)
    code, out, _ = validate_cli(damaged, capsys)
    assert code == 1 and "FAILED" in out
