"""What the real-vLLM tests share (test_vllm_server.py, test_ray_batch.py, benchmarks/engines.py).

One engine configuration for `vllm serve`, `run-batch`, the in-process `vllm:` backend and Ray, so
every path gives the same greedy answers of the tiny random-weight Qwen2.5-VL, and one way to run
`cogbench eval --model openai:` in this venv and read its answers back.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
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


def run_batch_command(python: str, shard: Path, output: Path, model: Path) -> list[str]:
    """vLLM's own `run-batch` on one request shard (``python -m``: the `vllm` script fails, the distribution is vllm-cpu)."""
    command = [python, "-m", "vllm.entrypoints.openai.run_batch", "-i", str(shard), "-o", str(output)]
    return [*command, "--model", str(model), *ENGINE_FLAGS]


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
