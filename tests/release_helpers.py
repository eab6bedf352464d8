"""Helpers for the release tests: writable copies of the real raw data, and Hub stand-ins."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable
from unittest import mock

from huggingface_hub import CommitInfo, HfApi
from huggingface_hub.hf_api import GitRefInfo, GitRefs

COMMIT_OID = "c0ffee" * 6 + "abcd"


def copy_real_raw(real_raw_dir: Path, dest: Path) -> Path:
    """A writable copy of the real raw data: annotation files and CogBench images copied,
    CODIS images (76 MB) linked as a folder, which the builder resolves safely."""
    for source in ("codis", "cogbench-samples"):
        (dest / source).mkdir(parents=True)
        for path in (real_raw_dir / source).glob("*.json"):
            shutil.copy(path, dest / source / path.name)
    shutil.copytree(real_raw_dir / "cogbench-samples" / "images", dest / "cogbench-samples" / "images")
    (dest / "codis" / "images").symlink_to(real_raw_dir / "codis" / "images", target_is_directory=True)
    return dest


def report(*errors: str) -> Callable[..., Any]:
    """A ``validate`` function with the validation package's signature returning fixed errors."""

    def validate(path, expected="auto"):
        validate.calls.append((Path(path), expected))
        return SimpleNamespace(errors=list(errors), ok=not errors, findings=list(errors))

    validate.calls = []
    return validate


def fake_hub_api():
    """An HfApi whose methods keep their real signatures but reach no server: no repo yet,
    and every commit succeeds."""
    hub = mock.create_autospec(HfApi, instance=True)
    hub.repo_exists.return_value = False
    hub.create_commit.return_value = CommitInfo(  # huggingface_hub's own return type
        commit_url=f"https://huggingface.co/datasets/org/cogbench/commit/{COMMIT_OID}", commit_message="release",
        commit_description="", oid=COMMIT_OID)
    return hub


def git_refs(*tags: str) -> GitRefs:
    """What ``HfApi.list_repo_refs`` returns, with these tags (huggingface_hub's own types)."""
    return GitRefs(branches=[GitRefInfo(name="main", ref="refs/heads/main", target_commit=COMMIT_OID)], converts=[],
                   tags=[GitRefInfo(name=tag, ref=f"refs/tags/{tag}", target_commit=COMMIT_OID) for tag in tags])


def hub_http_error(status: int, url: str, body: str = "", headers: dict[str, str] | None = None):
    """The error huggingface_hub raises for this HTTP response: built by its own ``hf_raise_for_status``."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.utils import hf_raise_for_status

    response = httpx2.Response(status, request=httpx2.Request("POST", url), content=body.encode(), headers=headers or {})
    try:
        hf_raise_for_status(response)
    except HfHubHTTPError as error:
        return error
    raise AssertionError(f"HTTP {status} raised nothing")
