"""``cogbench publish`` against a real local Hub server, through the real ``HfApi`` client."""

from __future__ import annotations

from pathlib import Path

import pytest
from hub_server import COMMIT_OID, HubRepo, LocalHub
from huggingface_hub import HfApi, constants
from huggingface_hub.errors import RepositoryNotFoundError
from release_helpers import report
from synthetic_raw import write_synthetic_raw

from cogbench.cards.publish import publish
from cogbench.cards.release import build_release
from cogbench.dataset_builders.output import MARKER_FILE
from cogbench.errors import CogbenchError, UsageError

REPO = "cogbench-org/cogbench"
SECRET = "hf_THIS_TOKEN_MUST_NEVER_BE_PRINTED"


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    raw = write_synthetic_raw(tmp_path_factory.mktemp("raw") / "raw")
    return build_release(raw, tmp_path_factory.mktemp("out") / "cogbench", version="1.2.0", repo_id=REPO).out


def hub_api(hub: LocalHub, monkeypatch) -> HfApi:
    """The real client on the local server (the tests' HF_HUB_OFFLINE guard lifted: it is 127.0.0.1)."""
    monkeypatch.setenv("HF_TOKEN", SECRET)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    return HfApi(endpoint=hub.endpoint, token=SECRET)


def test_publish_creates_gates_commits_every_file_and_tags(release, monkeypatch):
    with LocalHub() as hub:
        api = hub_api(hub, monkeypatch)
        with pytest.raises(RepositoryNotFoundError):  # what the real client raises before the repo exists
            api.repo_info(REPO, repo_type="dataset")
        publish(release, REPO, "1.2.0", api=api, validate=report())
        repo = hub.repos[REPO]
        built = {p.relative_to(release).as_posix(): p.read_bytes() for p in release.rglob("*") if p.is_file()}
        built.pop(MARKER_FILE)
        assert repo.files == built  # every byte of the build but its local marker
        assert repo.tags == {"v1.2.0": COMMIT_OID} and repo.settings.get("gated") == "manual"
        methods = [(method, path.split("/")[-1]) for method, path in hub.requests]
        assert methods.index(("PUT", "settings")) < next(i for i, (m, p) in enumerate(methods) if p == "main" and m == "POST")
        refs = api.list_repo_refs(REPO, repo_type="dataset")
        assert [tag.name for tag in refs.tags] == ["v1.2.0"]


def test_an_existing_release_loses_stale_shards_and_a_taken_tag_is_refused(release, monkeypatch):
    with LocalHub() as hub:
        api = hub_api(hub, monkeypatch)
        hub.repos[REPO] = HubRepo(files={"README.md": b"old", "data/codis/test-00000-of-00009.parquet": b"PAR1"},
                                  tags={"v1.1.0": COMMIT_OID})
        publish(release, REPO, "1.2.0", api=api, validate=report())
        assert "data/codis/test-00000-of-00009.parquet" not in hub.repos[REPO].files
        assert set(hub.repos[REPO].tags) == {"v1.1.0", "v1.2.0"}
        with pytest.raises(UsageError, match="already has a release v1.2.0"):
            publish(release, REPO, "1.2.0", api=api, validate=report())


def test_a_refused_commit_is_one_line_without_the_token(release, monkeypatch):
    with LocalHub() as hub:
        api = hub_api(hub, monkeypatch)
        hub.refuse = ("POST", "main", 401, f"invalid token {SECRET}")  # the commit endpoint
        with pytest.raises(CogbenchError) as caught:
            publish(release, REPO, "1.2.0", api=api, validate=report())
        assert "failed: HfHubHTTPError (HTTP 401); see the repo" in str(caught.value)  # what the real client raised
        assert SECRET not in str(caught.value)
        assert REPO in hub.repos and not hub.repos[REPO].files and not hub.repos[REPO].tags
