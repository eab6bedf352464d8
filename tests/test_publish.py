"""Publishing drives an autospec'd ``HfApi``: the exact calls, commit contents, tag and gating."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import needs_real_data
from huggingface_hub import CommitOperationAdd, CommitOperationDelete
from release_helpers import fake_hub_api, git_refs, report
from synthetic_raw import write_synthetic_raw

from cogbench.cards.publish import publish
from cogbench.cards.release import build_release
from cogbench.cli import main
from cogbench.dataset_builders.output import MARKER_FILE
from cogbench.errors import CogbenchError, UsageError

REPO = "cogbench-org/cogbench"
SECRET = "hf_THIS_TOKEN_MUST_NEVER_BE_PRINTED"


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    raw = write_synthetic_raw(tmp_path_factory.mktemp("raw") / "raw")
    return build_release(raw, tmp_path_factory.mktemp("out") / "cogbench", version="1.2.0", repo_id=REPO).out


@pytest.fixture
def api():
    return fake_hub_api()


@pytest.fixture(autouse=True)
def token(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)


def call_names(hub) -> list[str]:
    return [name for name, _, _ in hub.mock_calls]


def release_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_new_repo_is_created_gated_then_committed_and_tagged(release, api, capsys):
    validate = report()
    publish(release, REPO, "1.2.0", api=api, validate=validate)
    assert validate.calls == [(release, "auto")]
    assert call_names(api) == ["repo_exists", "create_repo", "update_repo_settings", "create_commit", "create_tag"]
    api.create_repo.assert_called_once_with(REPO, repo_type="dataset", private=False, exist_ok=True)
    # Gated before any CogBench byte is uploaded.
    api.update_repo_settings.assert_called_once_with(REPO, repo_type="dataset", gated="manual", private=None)
    commit = api.create_commit.call_args
    assert commit.args == (REPO,)
    assert commit.kwargs["commit_message"] == "Release v1.2.0" and commit.kwargs["repo_type"] == "dataset"
    operations = commit.kwargs["operations"]
    assert all(isinstance(op, CommitOperationAdd) for op in operations)
    # Every file of the build but its local marker (never uploaded).
    assert sorted(op.path_in_repo for op in operations) == [p for p in release_files(release) if p != MARKER_FILE]
    readme = next(op for op in operations if op.path_in_repo == "README.md")
    assert Path(readme.path_or_fileobj).read_bytes() == (release / "README.md").read_bytes()
    api.create_tag.assert_called_once_with(
        REPO, tag="v1.2.0", revision="c0ffee" * 6 + "abcd", tag_message="Release v1.2.0", repo_type="dataset"
    )
    out = capsys.readouterr().out
    assert f'load_dataset("{REPO}", "vqa", split="test", revision="v1.2.0")' in out
    assert SECRET not in out


def test_existing_repo_loses_the_shards_the_release_no_longer_has(release, api):
    api.repo_exists.return_value = True
    api.list_repo_files.return_value = [".gitattributes", "README.md", "data/codis/test-00000-of-00002.parquet",
                                        "data/codis/test-00001-of-00002.parquet", "data/vqa/test-00000-of-00001.parquet"]
    api.list_repo_refs.return_value = git_refs("v1.1.0")
    publish(release, REPO, "1.2.0", gated="auto", private=True, api=api, validate=report())
    assert call_names(api) == ["repo_exists", "list_repo_files", "list_repo_refs", "create_repo",
                               "update_repo_settings", "create_commit", "create_tag"]
    api.update_repo_settings.assert_called_once_with(REPO, repo_type="dataset", gated="auto", private=True)
    operations = api.create_commit.call_args.kwargs["operations"]
    deleted = [op.path_in_repo for op in operations if isinstance(op, CommitOperationDelete)]
    assert deleted == ["data/codis/test-00000-of-00002.parquet", "data/codis/test-00001-of-00002.parquet"]
    added = [op.path_in_repo for op in operations if isinstance(op, CommitOperationAdd)]
    assert "data/vqa/test-00000-of-00001.parquet" in added


def test_validation_errors_stop_everything(release, api):
    with pytest.raises(CogbenchError, match=r"fails validation \(1 error\(s\)\); nothing was uploaded:\n  data/vqa: bad"):
        publish(release, REPO, "1.2.0", api=api, validate=report("data/vqa: bad"))
    assert api.mock_calls == []


def test_dry_run_reads_but_changes_nothing(release, api, capsys):
    publish(release, REPO, "1.2.0", dry_run=True, api=api, validate=report())
    assert call_names(api) == ["repo_exists"]
    out = capsys.readouterr().out
    assert out.startswith("dry run: nothing will be changed\nvalidation:  passed\n")
    assert "does not exist; it will be created" in out and "gating:      manual approval" in out
    assert "token:       found" in out and SECRET not in out
    assert "tag:         v1.2.0 on that commit" in out


def test_dry_run_offline_still_shows_the_plan(release, api, capsys):
    api.repo_exists.side_effect = ConnectionError("offline")
    publish(release, REPO, "1.2.0", dry_run=True, api=api, validate=report())
    assert "could not be checked (ConnectionError: offline)" in capsys.readouterr().out
    api.repo_exists.side_effect = ConnectionError("offline")
    with pytest.raises(CogbenchError, match="cannot read"):
        publish(release, REPO, "1.2.0", api=api, validate=report())
    assert call_names(api) == ["repo_exists", "repo_exists"]


@pytest.mark.parametrize(
    "repo_id, version, message",
    [
        (REPO, "1.3.0", "was built as version 1.2.0, not 1.3.0"),
        ("someone/else", "1.2.0", "tells users to load cogbench-org/cogbench, not someone/else"),
        ("no-slash", "1.2.0", "must be ORG/NAME"),
    ],
)
def test_a_build_that_does_not_match_the_request_is_refused(release, api, repo_id, version, message):
    with pytest.raises(UsageError, match=message):
        publish(release, repo_id, version, api=api, validate=report())
    assert not [name for name in call_names(api) if name.startswith(("create", "update"))]


def test_an_existing_tag_is_refused(release, api):
    api.repo_exists.return_value = True
    api.list_repo_files.return_value = []
    api.list_repo_refs.return_value = git_refs("v1.2.0")
    with pytest.raises(UsageError, match="already has a release v1.2.0"):
        publish(release, REPO, "1.2.0", api=api, validate=report())
    assert "create_commit" not in call_names(api)


def test_missing_token_is_refused_before_any_change(release, api, monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setenv("HF_TOKEN_PATH", str(tmp_path / "no-token"))
    with pytest.raises(UsageError, match="no Hugging Face token"):
        publish(release, REPO, "1.2.0", api=api, validate=report())
    assert call_names(api) == ["repo_exists"]


@pytest.fixture(scope="module")
def real_release(real_raw_dir, tmp_path_factory) -> Path:
    return build_release(real_raw_dir, tmp_path_factory.mktemp("real") / "cogbench", version="1.2.0", repo_id=REPO).out


@needs_real_data
def test_the_real_validators_refuse_a_tampered_build(real_release, api, tmp_path, capsys):
    """With the validation package's own ``validate``: a corrupted shard is never uploaded."""
    tampered = tmp_path / "tampered"
    shutil.copytree(real_release, tampered)
    shard = next((tampered / "data" / "vqa").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[:-100])
    assert main(["publish", str(tampered), "--repo-id", REPO, "--version", "1.2.0", "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert "fails validation" in err and "nothing was uploaded" in err and "config_missing: vqa" in err
    with pytest.raises(CogbenchError, match="fails validation"):
        publish(tampered, REPO, "1.2.0", api=api)
    assert api.mock_calls == []


@needs_real_data
def test_the_real_validators_pass_a_fresh_build(real_release, api, capsys):
    publish(real_release, REPO, "1.2.0", dry_run=True, api=api)
    assert "validation:  passed" in capsys.readouterr().out
