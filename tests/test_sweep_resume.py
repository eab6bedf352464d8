"""``cogbench sweep run`` and ``sweep merge`` killed with SIGKILL, run again and merged: no item lost, none answered
twice (each shard is an eval run folder, whose predictions are appended and fsynced answer by answer, and resumed;
a merge writes its run through a temporary folder and the ledger is rebuilt from the folders)."""

from __future__ import annotations

import json
import os
import random
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


def _start(sweep, *command: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*cogbench_command(), "sweep", *command, str(sweep)],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _kill(process: subprocess.Popen) -> bool:
    """SIGKILL ``process``; False when it had already ended (nothing was killed)."""
    if process.poll() is not None:
        return False
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return True


def _planned(sweep, cell: str) -> list[str]:
    shards = json.loads((sweep / "cells" / cell / "cell.json").read_text())["shards"]
    return [item for shard in shards for item in shard]


def _assert_nothing_lost_or_doubled(sweep) -> None:
    for path in sweep.glob("cells/*/shards/*/shards/rank-*.jsonl"):
        keys = prediction_keys(path)
        assert len(keys) == len(set(keys)), f"{path}: an item answered twice"
    for cell in (path.name for path in (sweep / "cells").iterdir()):
        merged = prediction_keys(sweep / "cells" / cell / "run" / "predictions.jsonl")
        items = [item for item, _query in merged]
        assert sorted(set(items)) == sorted(_planned(sweep, cell)), f"{cell}: an item lost"
        assert len(merged) == len(set(merged)), f"{cell}: an answer merged twice"


# Killed inside shard 1, shard 0 done and scored (the twenty kills below land everywhere else). Slow: a cogbench subprocess (a minute or more
# on a loaded machine).
@pytest.mark.slow
@pytest.mark.parametrize("kill_after", [6])
def test_a_killed_sweep_resumes_and_merges_with_nothing_lost_or_doubled(
    openai_server, built_release, tmp_path, monkeypatch, capsys, kill_after
):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server = openai_server(lambda request: Reply(text="A", delay_seconds=0.2))
    models = [{"model": "openai:m", "base_url": server.base_url, "concurrency": 1}]
    spec = write_spec(tmp_path, built_release, models, limit=ITEMS)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "plan", str(spec), "--out", str(sweep), "--shards", "2"]) == 0
    process = _start(sweep, "run")
    deadline = time.monotonic() + 120
    while answered(sweep) < kill_after and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _kill(process), "the run ended before it could be killed"
    before = answered(sweep)
    assert kill_after <= before < ITEMS
    capsys.readouterr()
    assert main(["sweep", "status", str(sweep)]) == 0
    assert f"{CELL}  queued   {before}/{ITEMS}" in capsys.readouterr().out  # the killed attempt: queued again

    assert main(["sweep", "run", str(sweep)]) == 0
    assert main(["sweep", "merge", str(sweep)]) == 0
    _assert_nothing_lost_or_doubled(sweep)
    merged = prediction_keys(sweep / "cells" / CELL / "run" / "predictions.jsonl")
    assert merged == [(item, None) for item in _planned(sweep, CELL)]  # every item once, in dataset order
    # only what was in flight at the kill (concurrency 1: at most one) was asked twice
    assert ITEMS <= len(server.requests) <= ITEMS + 1


KILLS = 20


# [issue 50] 20 SIGKILLs at random points (seeded): each after a random number of new answers (0 to 2) and a random
# wait of up to 0.3 s, so they land while Python imports, while a reply is being written, while a shard is scored,
# and, once every shard is done, at a random time inside `sweep merge`. Two tasks, two shards each. After each kill
# `sweep status` must read the folder; at the end one uninterrupted run and merge: 0 lost, 0 doubled, and each
# answer asked at most once more than once per kill (concurrency 1: one in flight).
@pytest.mark.slow
def test_twenty_random_kills_lose_and_double_nothing(openai_server, built_release, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server = openai_server(lambda request: Reply(text="A", delay_seconds=0.2))
    models = [{"model": "openai:m", "base_url": server.base_url, "concurrency": 1}]
    spec = write_spec(tmp_path, built_release, models, tasks=["vqa", "codis"], limit=16)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "plan", str(spec), "--out", str(sweep), "--shards", "2"]) == 0
    draw = random.Random(50)
    kills = {"run": 0, "merge": 0}
    attempts = 0
    while sum(kills.values()) < KILLS and attempts < 3 * KILLS:
        attempts += 1
        capsys.readouterr()
        main(["sweep", "status", str(sweep)])
        shards_done = "queued" not in capsys.readouterr().out
        phase = "merge" if shards_done else "run"
        before = answered(sweep)
        process = _start(sweep, phase)
        if phase == "run":
            wanted = before + draw.randint(0, 2)
            while answered(sweep) < wanted and process.poll() is None:
                time.sleep(0.01)
            time.sleep(draw.uniform(0, 0.3))
        else:
            time.sleep(draw.uniform(0.5, 8.0))
        kills[phase] += _kill(process)
    assert sum(kills.values()) == KILLS, kills
    print(f"kills: {kills} in {attempts} attempts; {answered(sweep)} answers before the last run")

    assert main(["sweep", "run", str(sweep)]) == 0
    assert main(["sweep", "merge", str(sweep)]) == 0
    _assert_nothing_lost_or_doubled(sweep)
    total = sum(
        len(prediction_keys(sweep / "cells" / cell.name / "run" / "predictions.jsonl"))
        for cell in (sweep / "cells").iterdir()
    )
    assert total <= len(server.requests) <= total + kills["run"]
