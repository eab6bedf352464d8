"""One writer per run folder: a second `eval` on the same --out refuses, the first finishes, the folder
then resumes and scores; a lock left by a SIGKILLed run is taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

from cogbench.reference_eval.formats.predictions import read_predictions

from openai_server import Reply


def command(server, dataset, out, *extra):
    return [
        sys.executable,
        "-m",
        "cogbench",
        "eval",
        "--task",
        "codis",
        "--model",
        "openai:served",
        "--base-url",
        server.base_url,
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--limit",
        "6",
        "--concurrency",
        "1",
        "--judge",
        "rule",
        *extra,
    ]


def slow_server(openai_server):
    return openai_server(lambda request: Reply(text="reasoning\nThe answer.", delay_seconds=0.3))


def wait_for(path, process, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None and not path.exists():
        time.sleep(0.02)
    assert path.exists(), "the first run never took the lock"


def test_second_eval_on_the_same_folder_refuses(openai_server, built_release, tmp_path):
    gate = threading.Event()  # the first run's requests wait here until the second one has been refused
    server = openai_server(
        lambda request: Reply(text="reasoning\nThe answer.") if gate.wait(300) else Reply(status=500)
    )
    out = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": "local"}
    first = subprocess.Popen(
        command(server, built_release, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    wait_for(out / "rank-0.lock.json", first)
    holder = json.loads((out / "rank-0.lock.json").read_text())
    try:
        second = subprocess.run(command(server, built_release, out), capture_output=True, text=True, env=env)
    finally:
        gate.set()
    assert second.returncode == 2, second.stderr
    assert f"another cogbench eval is writing to this run folder (pid {holder['pid']} on host" in second.stderr
    assert first.wait(timeout=300) == 0, first.stderr
    assert len(read_predictions(out / "predictions.jsonl")) == 12
    assert not (out / "rank-0.lock.json").exists()  # released
    again = subprocess.run(command(server, built_release, out), capture_output=True, text=True, env=env)
    assert again.returncode == 0 and "12 already done, 0 generated now" in again.stdout
    assert json.loads((out / "score" / "scores.json").read_text())["counts"]["queries"] == 12


def test_lock_of_a_killed_run_is_taken_over(openai_server, built_release, tmp_path):
    server = slow_server(openai_server)
    out = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": "local"}
    first = subprocess.Popen(
        command(server, built_release, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    shard = out / "shards" / "rank-0.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (shard.exists() and shard.read_bytes().count(b"\n") >= 2):
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert (out / "rank-0.lock.json").exists()  # left behind by the killed run
    resumed = subprocess.run(command(server, built_release, out), capture_output=True, text=True, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert f"took over the lock of a run that ended without releasing it (pid {first.pid}" in resumed.stderr
    assert len(read_predictions(out / "predictions.jsonl")) == 12
