"""Every ordinary mistake in `eval` and `score`: one `error:` line saying what to do, exit 2, no traceback,
and no run folder left behind."""

from __future__ import annotations

import importlib.util
import json
import time

import pytest

from cogbench.cli import main

from openai_server import Reply


def run(argv, capsys) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err
    return code, err


def assert_one_line_error(code, err):
    assert code == 2, err
    last = err.strip().splitlines()[-1]  # before it, at most the datasets progress bar of a first load
    assert last.startswith("error: ") and err.count("error: ") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "model, message",
    [
        ("tiny", "expected hf:MODEL_ID_OR_PATH, openai:MODEL or vllm:MODEL_ID_OR_PATH"),
        ("hf:", "expected hf:MODEL_ID_OR_PATH, openai:MODEL or vllm:MODEL_ID_OR_PATH"),
        ("vllm:", "expected hf:MODEL_ID_OR_PATH, openai:MODEL or vllm:MODEL_ID_OR_PATH"),
        ("hf:/no/such/path", "no such folder"),
        ("hf:./nope", "no such folder"),
        ("hf:not a model id", "no such folder"),
        ("hf:Qwen/Not-Cached-In-This-Test-Model", "HF_HUB_OFFLINE"),
        ("vllm:/no/such/path", "--model vllm:/no/such/path: no such folder"),
    ],
)
def test_eval_model_mistakes(model, message, built_release, tmp_path, capsys):
    out = tmp_path / "runs" / "x"
    started = time.perf_counter()
    code, err = run(
        ["eval", "--task", "vqa", "--model", model, "--dataset", str(built_release), "--out", str(out)], capsys
    )
    assert_one_line_error(code, err)
    assert message in err and time.perf_counter() - started < 30
    assert not (tmp_path / "runs").exists()


def test_eval_model_folder_without_config(built_release, tmp_path, capsys):
    folder = tmp_path / "empty-model"
    folder.mkdir()
    code, err = run(
        [
            "eval",
            "--task",
            "vqa",
            "--model",
            f"hf:{folder}",
            "--dataset",
            str(built_release),
            "--out",
            str(tmp_path / "run"),
        ],
        capsys,
    )
    assert_one_line_error(code, err)
    assert "no config.json" in err and not (tmp_path / "run").exists()


def test_vllm_model_where_vllm_is_not_installed(built_release, tmp_path, capsys):
    """The test venv has no vllm (.ci/run-vllm's venv has): one line saying how to get it, no run folder."""
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    out = tmp_path / "runs" / "x"
    code, err = run(
        ["eval", "--task", "vqa", "--model", f"vllm:{folder}", "--dataset", str(built_release), "--out", str(out)],
        capsys,
    )
    assert_one_line_error(code, err)
    assert "needs vllm installed" in err and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("command", ["eval", "score"])
def test_dataset_that_is_neither_folder_nor_reachable_repo(command, tmp_path, capsys):
    extra = ["--model", "openai:m"] if command == "eval" else ["--predictions", str(tmp_path / "p.json")]
    code, err = run(
        [command, "--task", "codis", "--dataset", "dist/nope", "--out", str(tmp_path / "run"), *extra], capsys
    )
    assert_one_line_error(code, err)
    assert "dist/nope" in err and not (tmp_path / "run").exists()


def score_argv(built_release, predictions, tmp_path, task="codis"):
    return [
        "score",
        "--task",
        task,
        "--predictions",
        str(predictions),
        "--dataset",
        str(built_release),
        "--out",
        str(tmp_path / "score"),
    ]


def test_predictions_not_utf8(built_release, tmp_path, capsys):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes('{"task": "vqa", "item_id": "x", "output": "caf\xe9"}\n'.encode("latin-1"))
    code, err = run(score_argv(built_release, path, tmp_path, "vqa"), capsys)
    assert_one_line_error(code, err)
    assert "line 1: not UTF-8" in err and not (tmp_path / "score").exists()


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("query", [1], "field query"),
        ("query", 3, "field query"),
        ("output", None, "field output"),
        ("item_id", 7, "field item_id"),
        ("generation", "greedy", "field generation"),
    ],
)
def test_prediction_fields_of_the_wrong_type(field, value, message, built_release, tmp_path, capsys):
    record = {"task": "codis", "item_id": "000", "query": 1, "output": "x", field: value}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    code, err = run(score_argv(built_release, path, tmp_path), capsys)
    assert_one_line_error(code, err)
    assert f"{path}: record line 1: {message}" in err


def test_predictions_missing_and_directory(built_release, tmp_path, capsys):
    for path in (tmp_path / "nope.json", tmp_path):
        code, err = run(score_argv(built_release, path, tmp_path), capsys)
        assert_one_line_error(code, err)
        assert "predictions file not found" in err


def test_out_is_a_file(built_release, tmp_path, capsys):
    out = tmp_path / "file"
    out.write_text("mine")
    code, err = run(
        ["eval", "--task", "vqa", "--model", "openai:m", "--dataset", str(built_release), "--out", str(out)], capsys
    )
    assert_one_line_error(code, err)
    assert out.read_text() == "mine"


@pytest.mark.parametrize("command", ["eval", "score"])
def test_help_shows_every_default(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for shown in ("(default: 64)", "(default: tolerant)", "(default: 6)"):
        assert shown in text
    if command == "eval":
        assert (
            "(default: per task, description 1024, vqa 32, codis 512; 32768 for every task with --thinking on)" in text
        )
        assert "(default: spontaneous)" in text and "(default: 16)" in text
    else:
        assert "(default: runs/score-TASK-PREDICTIONS" in text and "(default: en_core_web_sm)" in text


def test_base_url_without_scheme(built_release, real_raw_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    code, err = run(
        [
            "score",
            "--task",
            "codis",
            "--dataset",
            str(built_release),
            "--out",
            str(tmp_path / "s"),
            "--predictions",
            str(real_raw_dir / "codis" / "output_example.json"),
            "--judge",
            "openai:j",
            "--judge-base-url",
            "localhost:8000/v1",
        ],
        capsys,
    )
    assert_one_line_error(code, err)
    assert "base URL 'localhost:8000/v1': expected http://" in err and not (tmp_path / "s").exists()


def assert_argparse_refuses(argv, option, capsys):
    """argparse's own refusal: exit 2, its usage line and one `error:` line naming the option."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and "Traceback" not in err
    (line,) = [line for line in err.splitlines() if "error:" in line]
    assert f"argument {option}:" in line


@pytest.mark.parametrize("value", ["nan", "2", "-0.1", "0", "1", "inf"])
def test_compare_alpha_must_be_a_significance_level(value, tmp_path, capsys):
    argv = ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--alpha", value]
    assert_argparse_refuses(argv, "--alpha", capsys)


@pytest.mark.parametrize(
    "option, value",
    [
        ("--judge-timeout", "0"),
        ("--judge-timeout", "nan"),
        ("--judge-timeout", "-1"),
        ("--judge-timeout", "inf"),
        ("--judge-max-attempts", "0"),
        ("--judge-backoff", "-1"),
        ("--judge-backoff", "nan"),
        ("--offline-threshold", "nan"),
    ],
)
def test_score_option_values(option, value, tmp_path, capsys):
    argv = ["score", "--task", "vqa", "--dataset", str(tmp_path), "--predictions", "p.jsonl", option, value]
    assert_argparse_refuses(argv, option, capsys)


@pytest.mark.parametrize(
    "option, value",
    [
        ("--request-timeout", "-1"),
        ("--request-timeout", "0"),
        ("--request-timeout", "nan"),
        ("--max-attempts", "0"),
        ("--num-workers", "-1"),
        ("--gpu-memory-utilization", "0"),
        ("--gpu-memory-utilization", "1.5"),
        ("--gpu-memory-utilization", "nan"),
        ("--limit-mm-per-prompt", '{"image":-1}'),
        ("--limit-mm-per-prompt", "[1]"),
    ],
)
def test_eval_option_values(option, value, tmp_path, capsys):
    model = "vllm:m" if option in ("--gpu-memory-utilization", "--limit-mm-per-prompt") else "openai:m"
    argv = ["eval", "--task", "vqa", "--dataset", str(tmp_path), "--model", model, option, value]
    assert_argparse_refuses(argv, option, capsys)


def test_judge_cache_that_is_not_sqlite(built_release, real_raw_dir, tmp_path, capsys, monkeypatch, openai_server):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = openai_server(lambda request: Reply(text="right"))
    cache = tmp_path / "cache.sqlite"
    cache.write_text("my notes, not a database\n" * 200)
    argv = score_argv(built_release, real_raw_dir / "codis" / "output_example.json", tmp_path)
    code, err = run(
        [*argv, "--judge", "openai:j", "--judge-base-url", server.base_url, "--judge-cache", str(cache)], capsys
    )
    assert_one_line_error(code, err)
    assert f"{cache}: not a usable judge cache, an SQLite file" in err
    assert cache.read_text() == "my notes, not a database\n" * 200


def test_out_name_too_long_for_the_file_system(built_release, tmp_path, capsys):
    out = tmp_path / ("x" * 300)
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"task": "vqa", "item_id": "x", "output": "A"}) + "\n")
    code, err = run([*score_argv(built_release, path, tmp_path, "vqa")[:-1], str(out)], capsys)
    assert_one_line_error(code, err)
    assert "name too long for the file system" in err


def test_integer_id_thousands_of_digits_long(built_release, tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_text('{"task": "vqa", "item_id": ' + "7" * 5000 + ', "output": "A"}\n')
    code, err = run(score_argv(built_release, path, tmp_path, "vqa"), capsys)
    assert_one_line_error(code, err)
    assert f"{path}: record line 1: not usable JSON (Exceeds the limit (4300 digits)" in err
    assert not (tmp_path / "score").exists()
