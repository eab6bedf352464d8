"""A fresh clone runs anywhere: no machine's absolute path in the repository, and missing shared files skip loudly."""

from __future__ import annotations

import subprocess

import pytest

from shared_files import REPO_ROOT, require_shared, shared_dir


def tracked_text_files():
    listed = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: cannot list the tracked files")
    for name in listed.stdout.splitlines():
        path = REPO_ROOT / name
        try:
            yield name, path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue


def test_no_file_names_this_machines_shared_folder_or_checkout():
    machine_paths = {str(shared_dir().resolve()) + "/", str(REPO_ROOT) + "/"}
    offenders = [(name, p) for name, text in tracked_text_files() for p in machine_paths if p in text]
    assert offenders == []


def test_a_missing_shared_file_skips_with_a_message_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("COGBENCH_SHARED", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)  # under CI=true it fails instead (the next test)
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_shared("models", "nothing-here", what="the test model")
    message = str(skipped.value)
    assert "the test model" in message and str(tmp_path / "models" / "nothing-here") in message
    assert "COGBENCH_SHARED" in message


def test_under_ci_a_missing_shared_file_fails_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("COGBENCH_SHARED", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as failed:
        require_shared("models", "nothing-here", what="the test model")
    assert "CI=true" in str(failed.value) and str(tmp_path / "models" / "nothing-here") in str(failed.value)
