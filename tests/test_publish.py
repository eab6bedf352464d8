"""Publishing through the real ``HfApi`` on a local Hub server: the exact calls, commit contents, tag and gating."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import needs_real_data

from cogbench.cards.publish import publish
from cogbench.cards.release import build_release
from cogbench.cli import main
from cogbench.dataset_builders.output import MARKER_FILE
from cogbench.errors import CogbenchError, UsageError

from hub_server import COMMIT_OID, HubRepo, LocalHub, call_names, local_hub_api
from release_helpers import report
from synthetic_raw import write_synthetic_raw

REPO = "cogbench-org/cogbench"
SECRET = "hf_THIS_TOKEN_MUST_NEVER_BE_PRINTED"


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    raw = write_synthetic_raw(tmp_path_factory.mktemp("raw") / "raw")
    return build_release(raw, tmp_path_factory.mktemp("out") / "cogbench", version="1.2.0", repo_id=REPO).out


@pytest.fixture(autouse=True)
def token(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)


def release_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_new_repo_is_created_gated_then_committed_and_tagged(release, hub, api, capsys):
    validate = report()
    publish(release, REPO, "1.2.0", api=api, validate=validate)
    assert validate.calls == [(release, "auto")]
    # Gated before any CogBench byte is uploaded.
    assert call_names(hub) == ["repo_exists", "create_repo", "update_repo_settings", "create_commit", "create_tag"]
    repo = hub.repos[REPO]
    assert repo.settings == {"gated": "manual"}
    # Every file of the build but its local marker (never uploaded), byte for byte.
    assert sorted(repo.files) == [p for p in release_files(release) if p != MARKER_FILE]
    assert repo.files["README.md"] == (release / "README.md").read_bytes()
    assert repo.tags == {"v1.2.0": COMMIT_OID}
    out = capsys.readouterr().out
    assert f'load_dataset("{REPO}", "vqa", split="test", revision="v1.2.0")' in out
    assert SECRET not in out


def test_existing_repo_loses_the_shards_the_release_no_longer_has(release, hub, api):
    stale = ["data/codis/test-00000-of-00002.parquet", "data/codis/test-00001-of-00002.parquet"]
    hub.repos[REPO] = HubRepo(
        files=dict.fromkeys([".gitattributes", "README.md", *stale, "data/vqa/test-00000-of-00001.parquet"], b"old"),
        tags={"v1.1.0": COMMIT_OID},
    )
    publish(release, REPO, "1.2.0", gated="auto", private=True, api=api, validate=report())
    assert call_names(hub) == [
        "repo_exists",
        "list_repo_files",
        "list_repo_refs",
        "create_repo",
        "update_repo_settings",
        "create_commit",
        "create_tag",
    ]
    assert hub.repos[REPO].settings == {"gated": "auto", "visibility": "private"}  # as huggingface_hub 2.4 sends it
    files = hub.repos[REPO].files
    assert not set(stale) & set(files)
    assert (
        files["data/vqa/test-00000-of-00001.parquet"] == (release / "data/vqa/test-00000-of-00001.parquet").read_bytes()
    )


def test_validation_errors_stop_everything(release, hub, api):
    with pytest.raises(
        CogbenchError, match=r"fails validation \(1 error\(s\)\); nothing was uploaded:\n  data/vqa: bad"
    ):
        publish(release, REPO, "1.2.0", api=api, validate=report("data/vqa: bad"))
    assert hub.requests == []


def test_dry_run_reads_but_changes_nothing(release, hub, api, capsys):
    publish(release, REPO, "1.2.0", dry_run=True, api=api, validate=report())
    assert call_names(hub) == ["repo_exists"] and hub.repos == {}
    out = capsys.readouterr().out
    assert out.startswith("dry run: nothing will be changed\nvalidation:  passed\n")
    assert "does not exist; it will be created" in out and "gating:      manual approval" in out
    assert "token:       found" in out and SECRET not in out
    assert "tag:         v1.2.0 on that commit" in out


def test_dry_run_offline_still_shows_the_plan(release, monkeypatch, capsys):
    with LocalHub() as gone:
        api = local_hub_api(gone, monkeypatch)  # a port nothing listens on once the server is stopped
    publish(release, REPO, "1.2.0", dry_run=True, api=api, validate=report())
    assert "could not be checked (" in capsys.readouterr().out
    with pytest.raises(CogbenchError, match="cannot read"):
        publish(release, REPO, "1.2.0", api=api, validate=report())


@pytest.mark.parametrize(
    "repo_id, version, message",
    [
        (REPO, "1.3.0", "was built as version 1.2.0, not 1.3.0"),
        ("someone/else", "1.2.0", "tells users to load cogbench-org/cogbench, not someone/else"),
        ("no-slash", "1.2.0", "must be ORG/NAME"),
    ],
)
def test_a_build_that_does_not_match_the_request_is_refused(release, hub, api, repo_id, version, message):
    with pytest.raises(UsageError, match=message):
        publish(release, repo_id, version, api=api, validate=report())
    assert not [name for name in call_names(hub) if name.startswith(("create", "update"))] and hub.repos == {}


def test_an_existing_tag_is_refused(release, hub, api):
    hub.repos[REPO] = HubRepo(tags={"v1.2.0": COMMIT_OID})
    with pytest.raises(UsageError, match="already has a release v1.2.0"):
        publish(release, REPO, "1.2.0", api=api, validate=report())
    assert "create_commit" not in call_names(hub) and hub.repos[REPO].files == {}


def test_missing_token_is_refused_before_any_change(release, hub, api, monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setenv("HF_TOKEN_PATH", str(tmp_path / "no-token"))
    with pytest.raises(UsageError, match="no Hugging Face token"):
        publish(release, REPO, "1.2.0", api=api, validate=report())
    assert call_names(hub) == ["repo_exists"] and hub.repos == {}


@pytest.fixture(scope="module")
def real_release(real_raw_dir, tmp_path_factory) -> Path:
    return build_release(real_raw_dir, tmp_path_factory.mktemp("real") / "cogbench", version="1.2.0", repo_id=REPO).out


@needs_real_data
def test_the_real_validators_refuse_a_tampered_build(real_release, hub, api, tmp_path, capsys):
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
    assert hub.requests == []


@needs_real_data
def test_the_real_validators_pass_a_fresh_build(real_release, api, capsys):
    publish(real_release, REPO, "1.2.0", dry_run=True, api=api)
    assert "validation:  passed" in capsys.readouterr().out


def test_a_refused_commit_is_one_line_without_the_token(release, hub, api):
    hub.refuse = ("POST", "main", 401, f"invalid token {SECRET}")  # the commit endpoint
    with pytest.raises(CogbenchError) as caught:
        publish(release, REPO, "1.2.0", api=api, validate=report())
    assert "failed: HfHubHTTPError (HTTP 401); see the repo" in str(caught.value)  # what the real client raised
    assert SECRET not in str(caught.value)
    assert REPO in hub.repos and not hub.repos[REPO].files and not hub.repos[REPO].tags
