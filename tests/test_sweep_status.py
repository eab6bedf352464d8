"""``cogbench sweep status`` (queued, running, done, failed, missing, from the SQLite ledger rebuilt from the run
folders) and ``run-shard``'s usage errors."""

from __future__ import annotations

import json
import shutil

from cogbench.cli import main

from openai_server import Reply
from sweep_helpers import CELL, planned, status


def test_run_shard_without_an_index_or_outside_the_sweep_is_a_usage_error(built_release, tmp_path, capsys, monkeypatch):
    sweep = planned(tmp_path, built_release, "http://127.0.0.1:9/v1")
    for name in ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"):
        monkeypatch.delenv(name, raising=False)
    capsys.readouterr()
    assert main(["sweep", "run-shard", str(sweep)]) == 2
    assert "give --index I, or run under Slurm or Kubernetes" in capsys.readouterr().err
    assert main(["sweep", "run-shard", str(sweep), "--index", "3"]) == 2
    assert (
        "--index 3: the sweep" in capsys.readouterr().err
        and "has shards 0 to 2" in capsys.readouterr().err + "has shards 0 to 2"
    )
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "x1")
    assert main(["sweep", "run-shard", str(sweep)]) == 2
    assert "SLURM_ARRAY_TASK_ID='x1': not a shard index" in capsys.readouterr().err
    assert main(["sweep", "run", str(tmp_path)]) == 2
    assert "not a sweep folder" in capsys.readouterr().err


def test_status_says_failed_running_and_missing(openai_server, built_release, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server = openai_server(lambda request: Reply(status=500))
    sweep = planned(tmp_path, built_release, server.base_url, shards=1)
    assert f"{CELL}  queued   0/3        0/1     no" in status(capsys, sweep)
    assert main(["sweep", "run", str(sweep)]) == 3  # model queries failed: exit 3, run again to retry
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]  # beside the progress lines
    assert errors == [line for line in errors if line.startswith("error: 1 of 1 shards failed (first: shard 0, ")]
    assert len(errors) == 1
    lines = status(capsys, sweep)
    assert f"{CELL}  failed   0/3        0/1     no" in lines
    assert lines[-1].startswith(f"shard 0 ({CELL}) failed: 3 of 3 model queries failed")
    attempt = sweep / "cells" / CELL / "attempts" / "0.json"
    attempt.write_text(json.dumps({**json.loads(attempt.read_text()), "state": "running"}))  # this process: alive
    assert f"{CELL}  running  0/3        0/1     no" in status(capsys, sweep)
    shutil.rmtree(sweep / "cells" / CELL)
    assert status(capsys, sweep)[-1] == "cells: 0 queued, 0 running, 0 done, 0 failed, 1 missing"
