"""What the real-vLLM tests share (test_vllm_server.py, test_vllm_thinking.py, test_ray_batch.py, benchmarks/engines.py).

One engine configuration for `vllm serve`, `run-batch`, the in-process `vllm:` backend and Ray, so
every path gives the same greedy answers of the tiny random-weight Qwen2.5-VL, and one way to run
`cogbench eval --model openai:` in this venv and read its answers back.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from cogbench.reference_eval.formats.predictions import read_predictions

NAME = "tiny-qwen2.5-vl"
# The engine's settings (vLLM's flag names, which `cogbench eval --model vllm:` engine options carry too).
SHARED_ENGINE = [
    "--enforce-eager",
    "--dtype",
    "float32",
    "--max-model-len",
    "4096",
    "--limit-mm-per-prompt",
    '{"image":1}',
    "--gpu-memory-utilization",
    "0.2",
]
ENGINE_FLAGS = ["--served-model-name", NAME, *SHARED_ENGINE, "--seed", "0"]
THINK_TAGS = ("<think>", "</think>")


def build_served_model(out_dir: Path) -> Path:
    """The random-weight Qwen2.5-VL (hidden size 128) every real-vLLM test serves, able to think:
    its chat template opens a think block when ``enable_thinking`` is true (tiny_models.thinking_chat_template;
    without the setting it renders as Qwen2.5-VL's), and ``<think>`` and ``</think>`` are single
    tokens, as in Qwen3's vocabulary, since vLLM's reasoning parsers look their ids up there.
    Qwen2.5-VL's embedding has rows past its tokenizer (152064 > 151665), so the two new ids need no resize."""
    from tokenizers import AddedToken
    from transformers import AutoTokenizer

    import tiny_models

    model = tiny_models.build_tiny_qwen2_5_vl(out_dir, hidden_size=128)
    tokenizer = AutoTokenizer.from_pretrained(model)
    # Not special: the parsers see them in the text, and detokenising keeps them, as Qwen3's tokenizer does.
    tokenizer.add_tokens([AddedToken(tag, special=False, normalized=False) for tag in THINK_TAGS])
    tokenizer.save_pretrained(model)
    (model / "chat_template.jinja").unlink()  # the tokenizer's copy of the old template would win over ours
    (model / "chat_template.json").write_text(json.dumps({"chat_template": tiny_models.thinking_chat_template()}))
    return model


def engine_env(work: Path, **extra: str) -> dict[str, str]:
    """The engine's environment: its caches under `work`, a 1 GiB CPU KV cache, offline, no usage reports."""
    return dict(
        os.environ,
        VLLM_CACHE_ROOT=str(work / "vllm-cache"),
        VLLM_CPU_KVCACHE_SPACE="1",
        HF_HUB_OFFLINE="1",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
        **extra,
    )


class VLLMServer:
    """``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` script fails: the distribution is vllm-cpu),
    run by ``python`` (the vllm venv's) on ``model`` with ENGINE_FLAGS plus ``flags``; its log in ``work``."""

    def __init__(self, python: str, model: Path, work: Path, flags: tuple[str, ...] = ()):
        self.python, self.model, self.work, self.flags = python, model, work, flags
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 400) -> float:
        env = engine_env(self.work)
        command = [
            self.python,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(self.model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *ENGINE_FLAGS,
            *self.flags,
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


def run_batch_command(python: str, shard: Path, output: Path, model: Path, *flags: str) -> list[str]:
    """vLLM's own `run-batch` on one request shard (``python -m``: the `vllm` script fails, the distribution is vllm-cpu)."""
    command = [python, "-m", "vllm.entrypoints.openai.run_batch", "-i", str(shard), "-o", str(output)]
    return [*command, "--model", str(model), *ENGINE_FLAGS, *flags]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def eval_command(task: str, base_url: str, dataset: Path, out: Path, *extra: str) -> list[str]:
    """`cogbench eval --model openai:NAME` from this venv, 12 new tokens (greedy: the run's default)."""
    command = [sys.executable, "-m", "cogbench", "eval", "--task", task, "--model", f"openai:{NAME}"]
    command += ["--base-url", base_url, "--dataset", str(dataset), "--out", str(out), "--max-new-tokens", "12"]
    return [*command, *extra]


def eval_env() -> dict[str, str]:
    return dict(os.environ, OPENAI_API_KEY="EMPTY", TQDM_DISABLE="1")


def cogbench_eval(task: str, base_url: str, dataset: Path, out: Path, *extra: str, check: bool = True):
    """Runs `eval_command` to its end; raises on a non-zero exit unless `check` is false."""
    command = eval_command(task, base_url, dataset, out, *extra)
    return subprocess.run(command, capture_output=True, text=True, env=eval_env(), check=check)


def answers(out: Path) -> list[tuple[str, str]]:
    """The run's (key, output) pairs, in file order."""
    return [(p.key, p.output) for p in read_predictions(out / "predictions.jsonl")]


# A one-node Ray cluster for the `ray` tests (.ci/run-ray: test_ray_batch.py, test_sweep_ray.py).
@contextlib.contextmanager
def one_node_cluster(ray_python: str, work: Path, env: dict[str, str]) -> Iterator[dict[str, str]]:
    """Starts the head node with ``env`` (what its workers inherit); yields ``env`` with ``RAY_ADDRESS`` set."""
    temp_dir = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # Ray's socket paths must stay short
    port = free_port()
    env = {
        **env,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "disabled",  # no token: a ~/.ray/auth_token left by another cluster would otherwise enable it
        "RAY_ADDRESS": f"127.0.0.1:{port}",
    }
    command = [
        str(Path(ray_python).parent / "ray"),
        "start",
        "--head",
        "--block",
        "--node-ip-address",
        "127.0.0.1",
        "--port",
        str(port),
        "--ray-client-server-port",
        str(free_port()),
        "--dashboard-agent-listen-port",
        str(free_port()),
        "--include-dashboard=false",
        "--disable-usage-stats",
        "--temp-dir",
        str(temp_dir),
    ]
    log_path = work / "ray-start.log"
    started = time.monotonic()
    with log_path.open("wb") as log:
        head = subprocess.Popen(command, stdout=log, stderr=log, env=env, start_new_session=True)
    try:
        while "Ray runtime started" not in log_path.read_text(errors="replace"):
            assert head.poll() is None, log_path.read_text(errors="replace")[-3000:]
            assert time.monotonic() - started < 300, "Ray not started after 300 s"
            time.sleep(1)
        print(f"ray start: {time.monotonic() - started:.0f} s")
        yield env
    finally:
        head.send_signal(signal.SIGTERM)  # `ray start --block` stops the node's processes on SIGTERM
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(head.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        shutil.rmtree(temp_dir, ignore_errors=True)
