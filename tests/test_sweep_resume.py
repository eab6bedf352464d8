"""``cogbench sweep run`` killed with SIGKILL mid-run, run again and merged: no item lost, none answered twice
(each shard is an eval run folder, whose predictions are appended and fsynced answer by answer, and resumed)."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from cogbench.cli import main

from openai_server import Reply
from sweep_helpers import cogbench_command, prediction_keys, subprocess_env, write_spec

CELL = "vqa--m--thinking-auto--tokens-default--judge-default"
ITEMS = 8


def answered(sweep) -> int:
    return sum(len(prediction_keys(path)) for path in sweep.glob("cells/*/shards/*/shards/rank-*.jsonl"))


# Killed inside shard 0; inside shard 1, shard 0 done and scored. Slow: a cogbench subprocess (a minute or more
# on a loaded machine).
@pytest.mark.slow
@pytest.mark.parametrize("kill_after", [2, 6])
def test_a_killed_sweep_resumes_and_merges_with_nothing_lost_or_doubled(
    openai_server, built_release, tmp_path, monkeypatch, capsys, kill_after
):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server = openai_server(lambda request: Reply(text="A", delay_seconds=0.2))
    models = [{"model": "openai:m", "base_url": server.base_url, "concurrency": 1}]
    spec = write_spec(tmp_path, built_release, models, limit=ITEMS)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "plan", str(spec), "--out", str(sweep), "--shards", "2"]) == 0
    process = subprocess.Popen(
        [*cogbench_command(), "sweep", "run", str(sweep)],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while answered(sweep) < kill_after and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert process.poll() is None, "the run ended before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    before = answered(sweep)
    assert kill_after <= before < ITEMS
    capsys.readouterr()
    assert main(["sweep", "status", str(sweep)]) == 0
    assert f"{CELL}  queued   {before}/{ITEMS}" in capsys.readouterr().out  # the killed attempt: queued again

    assert main(["sweep", "run", str(sweep)]) == 0
    assert main(["sweep", "merge", str(sweep)]) == 0
    for path in sweep.glob("cells/*/shards/*/shards/rank-*.jsonl"):
        keys = prediction_keys(path)
        assert len(keys) == len(set(keys)), f"{path}: an item answered twice"
    merged = prediction_keys(sweep / "cells" / CELL / "run" / "predictions.jsonl")
    planned = [
        item
        for shard in __import__("json").loads((sweep / "cells" / CELL / "cell.json").read_text())["shards"]
        for item in shard
    ]
    assert merged == [(item, None) for item in planned]  # every item once, in dataset order: 0 lost, 0 doubled
    # only what was in flight at the kill (concurrency 1: at most one) was asked twice
    assert ITEMS <= len(server.requests) <= ITEMS + 1
