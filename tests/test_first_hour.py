"""A new user's first hour (issue 24): task defaults in --help, progress without a terminal, help texts,
single-file validate, zero counts in JSON, captioning on the terminal, .gitignore."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from openai_server import Reply

from cogbench.cli import build_parser, main
from cogbench.reference_eval.progress import LogProgress
from cogbench.reference_eval.runner import EvalSettings, run_eval
from cogbench.reference_eval.tasks import DEFAULT_MAX_NEW_TOKENS


def help_text(*command: str) -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command[0]]
    return re.sub(r"\s+", " ", sub.format_help())


# --- item 4: max new tokens per task, progress without a terminal -------------------------------


def test_each_task_has_its_own_max_new_tokens_shown_in_help():
    assert DEFAULT_MAX_NEW_TOKENS["vqa"] < 64 < DEFAULT_MAX_NEW_TOKENS["codis"] <= DEFAULT_MAX_NEW_TOKENS["description"]
    assert "(default: per task, description 1024, vqa 32, codis 512)" in help_text("eval")


@pytest.mark.parametrize("task", ["vqa", "codis"])
def test_the_request_carries_the_task_default(task, openai_server, built_release, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = openai_server(lambda request: Reply(text="A"))
    argv = ["eval", "--task", task, "--model", "openai:m", "--base-url", server.base_url, "--dataset", str(built_release),
            "--out", str(tmp_path / "run"), "--limit", "1", "--no-score"]
    assert main(argv) == 0
    assert {request.body["max_tokens"] for request in server.requests} == {DEFAULT_MAX_NEW_TOKENS[task]}
    assert json.loads((tmp_path / "run" / "run.json").read_text())["generation"]["max_new_tokens"] == DEFAULT_MAX_NEW_TOKENS[task]


def test_log_progress_prints_at_most_every_interval_with_rate_and_eta():
    now = [0.0]
    out = io.StringIO()
    with LogProgress(100, "codis", interval=10.0, file=out, clock=lambda: now[0]) as progress:
        for _ in range(50):  # 50 queries, one every 0.5 s: 25 s in all
            now[0] += 0.5
            progress.update(1)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["codis: 20/100 query (20%), 2.00 query/s, ETA 40s", "codis: 40/100 query (40%), 2.00 query/s, ETA 30s"]
    assert lines[2] == "codis: 50/100 query (50%), 2.00 query/s, ETA 25s, done in 25s"
    assert len(lines) == 3  # 25 s: two lines in the run (10 s apart), one at the end


def test_eval_without_a_terminal_prints_progress_lines(openai_server, built_release, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = openai_server(lambda request: Reply(text="A"))
    settings = EvalSettings(task="vqa", model="openai:m", dataset=str(built_release), out=tmp_path / "run", limit=6,
                            base_url=server.base_url, concurrency=1, progress_seconds=0.0)
    run_eval(settings)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("vqa: ")]
    assert len(lines) >= 2, lines  # pytest's capture is no terminal: plain lines, not a bar
    assert re.fullmatch(r"vqa: 6/6 query \(100%\), [\d.]+ query/s, ETA 0s, done in \d+s", lines[-1])
    assert all(re.fullmatch(r"vqa: \d/6 query \(\d+%\), [\d.]+ query/s, ETA \w+.*", line) for line in lines)
