"""The test run's own Hugging Face cache is removed when the run ends, and a caller's is never touched.

Each pytest process used to leave its ``cogbench-hf-home-*`` folder (~0.7 GB of Arrow files) in the
temporary directory; CI runs pytest in several steps and ran out of disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
IMPORT_CONFTEST = "import os, sys; sys.path.insert(0, sys.argv[1]); import conftest; print(os.environ['HF_HOME'])"


def _import_conftest(env: dict[str, str]) -> Path:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_CONFTEST, str(TESTS)], env=env, capture_output=True, text=True, check=True
    )
    return Path(done.stdout.strip().splitlines()[-1])


def test_the_runs_own_cache_is_made_in_tmpdir_and_removed_at_exit(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "HF_HOME"}
    env["TMPDIR"] = str(tmp_path)
    home = _import_conftest(env)
    assert home.parent == tmp_path and home.name.startswith("cogbench-hf-home-")
    assert not home.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_cache_the_caller_set_is_used_and_kept(tmp_path):
    mine = tmp_path / "my-hf-home"
    (mine / "hub").mkdir(parents=True)
    (mine / "hub" / "model.bin").write_bytes(b"weights")
    env = dict(os.environ, HF_HOME=str(mine), TMPDIR=str(tmp_path))
    assert _import_conftest(env) == mine
    assert (mine / "hub" / "model.bin").read_bytes() == b"weights"
