"""`cogbench eval` end to end: real configs, the tiny LLaVA, resume after SIGKILL, then `score`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cogbench.cli import main
from cogbench.reference_eval.formats.official import OfficialIds, read_any_predictions
from cogbench.reference_eval.formats.predictions import read_predictions
from cogbench.reference_eval.tasks.prompts import CODIS_DI_COT, VQA_MULTIPLE_CHOICE


def _eval_argv(task, model_dir, dataset, out, *extra):
    return [
        "eval",
        "--task",
        task,
        "--model",
        f"hf:{model_dir}",
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--max-new-tokens",
        "12",
        "--num-workers",
        "0",
        *extra,
    ]


def _lines_without_timing(path: Path) -> list[dict]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        assert isinstance(record.pop("seconds"), float)
    return records


@pytest.mark.parametrize("task, template, per_item", [("codis", CODIS_DI_COT, 2), ("vqa", VQA_MULTIPLE_CHOICE, 1)])
def test_eval_then_score_on_the_real_config(task, template, per_item, tiny_llava, built_release, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_eval_argv(task, tiny_llava, built_release, out, "--limit", "5", "--batch-size", "3")) == 0
    stdout = capsys.readouterr().out
    assert "queries: 10 total" in stdout if task == "codis" else "queries: 5 total" in stdout

    predictions = read_predictions(out / "predictions.jsonl")
    assert len(predictions) == 5 * per_item
    first = predictions[0]
    assert (first.model, first.prompt_id, first.prompt_sha256) == (f"hf:{tiny_llava}", template.id, template.sha256)
    assert first.generation == {
        "backend": "hf",
        "decoding": "greedy",
        "max_new_tokens": 12,
        "ignore_eos": False,
        "dtype": "float32",
        "attention": "sdpa",
        "thinking": "auto",
    }

    # The official export carries the same outputs back through the official reader.
    official = next(out.glob("official_*"))
    from cogbench.dataset_builders.load import load_config

    rows = load_config(str(built_release), task).remove_columns("image").to_list()
    exported = read_any_predictions(official, task, OfficialIds.from_rows(task, rows))
    assert {(p.item_id, p.query): p.output for p in exported} == {(p.item_id, p.query): p.output for p in predictions}

    scores = json.loads((out / "score" / "scores.json").read_text())
    assert scores["task"] == task and scores["model"] == f"hf:{tiny_llava}"
    assert scores["counts"]["dataset_items"] == len(rows)
    assert len(scores["counts"]["missing_predictions"]) == (len(rows) - 5) * per_item  # --limit 5
    # --limit 5 is a subset: PARTIAL (n/N) in scores.json and on the terminal, in the metrics' own units
    assert all(m["partial"] and m["overall"] is None for m in scores["metrics"].values())
    unit = "pairs" if task == "codis" else "questions"
    assert f"PARTIAL (5/{len(rows)} {unit})" in stdout
    assert (out / "score" / "report.md").is_file()


def test_a_run_killed_with_sigkill_resumes_to_the_same_lines(tiny_llava, built_release, tmp_path):
    argv = _eval_argv("codis", tiny_llava, built_release, "OUT", "--limit", "12", "--batch-size", "2", "--no-score")

    def command(out: Path) -> list[str]:
        return [sys.executable, "-m", "cogbench", *[str(out) if a == "OUT" else a for a in argv]]

    straight = tmp_path / "straight"  # in this process: the same code, without a second start-up
    assert main([str(straight) if a == "OUT" else a for a in argv]) == 0

    killed = tmp_path / "killed"
    shard = killed / "shards" / "rank-0.jsonl"
    process = subprocess.Popen(command(killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if shard.exists() and shard.read_bytes().count(b"\n") >= 6:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    saved = shard.read_bytes().count(b"\n")
    assert 6 <= saved < 24, "the kill must land mid-run"
    assert not (killed / "predictions.jsonl").exists()
    with shard.open("a", encoding="utf-8") as handle:  # what a kill inside write() leaves
        handle.write('{"task": "codis", "item_id": "0')

    resumed = subprocess.run(command(killed), check=True, capture_output=True, text=True, env=os.environ)
    assert f"{saved} already done, {24 - saved} generated now" in resumed.stdout
    assert _lines_without_timing(killed / "predictions.jsonl") == _lines_without_timing(straight / "predictions.jsonl")
    assert len(read_predictions(shard)) == 24


def test_resuming_with_other_settings_is_refused(tiny_llava, built_release, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_eval_argv("vqa", tiny_llava, built_release, out, "--limit", "1", "--no-score")) == 0
    before = (out / "predictions.jsonl").read_text()
    changed = _eval_argv("vqa", tiny_llava, built_release, out, "--limit", "2", "--no-score")
    changed[changed.index("--max-new-tokens") + 1] = "20"
    assert main(changed) == 1
    error = capsys.readouterr().err
    assert f"{out / 'run.json'}: this run's settings differ" in error and "use another --out" in error
    assert "generation.max_new_tokens: " in error and " → 20" in error
    assert (out / "predictions.jsonl").read_text() == before


def test_torchrun_data_parallel_shards_merge_into_the_single_process_result(tiny_llava, built_release, tmp_path):
    """Two CPU ranks under torchrun: each writes its shard, rank 0 merges once; same lines as one process."""
    single = tmp_path / "single"
    assert main(_eval_argv("codis", tiny_llava, built_release, single, "--limit", "5", "--no-score")) == 0
    parallel = tmp_path / "parallel"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "cogbench",
        *_eval_argv("codis", tiny_llava, built_release, parallel, "--limit", "5", "--no-score"),
    ]
    finished = subprocess.run(command, capture_output=True, text=True, env=os.environ, timeout=120)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "generated now by rank 0 of 2" in finished.stdout
    shards = [read_predictions(parallel / "shards" / f"rank-{rank}.jsonl") for rank in (0, 1)]
    assert [len(shard) for shard in shards] == [5, 5]
    assert not {p.key for p in shards[0]} & {p.key for p in shards[1]}
    assert _lines_without_timing(parallel / "predictions.jsonl") == _lines_without_timing(single / "predictions.jsonl")


def test_a_rank_killed_under_torchrun_resumes_to_the_same_merged_lines(tiny_llava, built_release, tmp_path):
    """SIGKILL one of two ranks mid-run: torchrun stops the job; the same command again finishes it."""
    single = tmp_path / "single"
    argv = ("--limit", "12", "--batch-size", "1", "--no-score")
    assert main(_eval_argv("codis", tiny_llava, built_release, single, *argv)) == 0
    parallel = tmp_path / "parallel"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "cogbench",
        *_eval_argv("codis", tiny_llava, built_release, parallel, *argv),
    ]
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ)
    shard, holder = parallel / "shards" / "rank-1.jsonl", parallel / "rank-1.lock.json"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not (shard.exists() and shard.read_bytes().count(b"\n") >= 3):
        time.sleep(0.05)
    os.kill(json.loads(holder.read_text())["pid"], signal.SIGKILL)
    _, err = job.communicate(timeout=180)
    assert job.returncode != 0, err[-2000:]  # the job failed: rank 1 died
    assert not (parallel / "predictions.jsonl").exists()
    killed_at = shard.read_bytes().count(b"\n")
    assert 3 <= killed_at < 12

    finished = subprocess.run(command, capture_output=True, text=True, env=os.environ, timeout=300)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "already done" in finished.stdout
    assert _lines_without_timing(parallel / "predictions.jsonl") == _lines_without_timing(single / "predictions.jsonl")


@pytest.mark.parametrize("spec", ["Qwen/Qwen2-VL-7B-Instruct", "sglang:Qwen", "hf:", "vllm:"])
def test_a_model_spec_without_a_known_backend_is_a_usage_error(spec, built_release, tmp_path, capsys):
    argv = ["eval", "--task", "vqa", "--model", spec, "--dataset", str(built_release), "--out", str(tmp_path / "run")]
    assert main(argv) == 2
    assert "expected hf:MODEL_ID_OR_PATH, openai:MODEL or vllm:MODEL_ID_OR_PATH" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_finished_run_re_merges_without_loading_the_model(tiny_llava, built_release, tmp_path, capsys):
    import shutil

    model_dir = shutil.copytree(tiny_llava, tmp_path / "model")
    out = tmp_path / "run"
    assert main(_eval_argv("vqa", model_dir, built_release, out, "--limit", "2", "--no-score")) == 0
    first = (out / "predictions.jsonl").read_text()
    (out / "predictions.jsonl").unlink()
    shutil.rmtree(model_dir)  # loading it now would fail
    assert main(_eval_argv("vqa", model_dir, built_release, out, "--limit", "2", "--no-score")) == 0
    assert "2 already done, 0 generated now" in capsys.readouterr().out
    assert (out / "predictions.jsonl").read_text() == first


def test_vllm_placement_is_noted_per_session_and_never_blocks_a_resume(tmp_path):
    """run.json: vllm: options that can change an answer (dtype, max model length) must match on resume;
    where the engine ran (tensor parallel size, memory share...) is appended per session, not compared."""
    from cogbench.errors import CogbenchError
    from cogbench.reference_eval.backends.vllm_offline import EngineOptions, VLLMSettings, placement, recorded_settings
    from cogbench.reference_eval.run.folder import check_run_record, note_engine

    def record(**engine):
        settings = VLLMSettings("m", 12, engine=EngineOptions(**engine))
        return {"model": "vllm:m", "generation": recorded_settings(settings)}, placement(settings)

    first, where = record(tensor_parallel_size=4, dtype="bfloat16")
    check_run_record(tmp_path, first)
    note_engine(tmp_path, where)
    note_engine(tmp_path, where)  # the same placement again: noted once
    second, moved = record(tensor_parallel_size=2, gpu_memory_utilization=0.5, dtype="bfloat16")
    check_run_record(tmp_path, second)  # resumed on fewer GPUs: the same run
    note_engine(tmp_path, moved)
    sessions = json.loads((tmp_path / "run.json").read_text())["vllm_engine"]
    assert [(s["tensor_parallel_size"], s["gpu_memory_utilization"]) for s in sessions] == [(4, 0.9), (2, 0.5)]
    assert first["generation"] == {
        "backend": "vllm",
        "decoding": "greedy",
        "temperature": 0.0,
        "max_new_tokens": 12,
        "dtype": "bfloat16",
        "max_model_len": None,
        "thinking": "auto",
    }
    other, _ = record(dtype="float16")
    with pytest.raises(CogbenchError, match="generation"):
        check_run_record(tmp_path, other)
