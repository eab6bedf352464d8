"""A new user's first hour, third round (issue 38 item 5): run folders, request folders and the hints about
them, as printed; the report commands of docs/comparing.md as written; messages that name a doc section."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import REPO_ROOT
from test_runs_report import vqa_run

from cogbench.cli import build_parser, main
from cogbench.reference_eval.publishing.hub_results import NotPublishable, check_publishable
from cogbench.reference_eval.recording.run_reader import read_run
from cogbench.reference_eval.run.runner import BACKENDS, default_run_dir

from openai_server import Reply
from shared_files import codis_example

BIN = str(Path(sys.executable).parent)


def eval_argv(built_release, server, *more: str) -> list[str]:
    """`eval` of a local OpenAI-compatible server's model `m`: one try per query, no score."""
    common = ["--base-url", server.base_url, "--max-attempts", "1", "--no-score"]
    return ["eval", "--task", "vqa", "--model", "openai:m", "--dataset", str(built_release), *common, *more]


def test_default_run_folders_name_the_backend(built_release, tmp_path, openai_server, monkeypatch, capsys):
    """`hf:`, `vllm:` and `openai:` runs of one model never share (and refuse) one default folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = openai_server(lambda request: Reply(text="A"))
    assert main(eval_argv(built_release, server, "--limit", "2")) == 0
    assert (tmp_path / "runs" / "eval-vqa-openai-m" / "predictions.jsonl").is_file()
    folders = {default_run_dir("vqa", f"{backend}:models/m", "spontaneous") for backend in BACKENDS}
    assert len(folders) == len(BACKENDS), folders


def test_a_resume_with_other_settings_names_the_fields(built_release, tmp_path, openai_server, monkeypatch, capsys):
    """Issue 48 item 9k: the fields that differ, old -> new, in one line; not the two whole settings dicts."""
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = openai_server(lambda request: Reply(text="A"))
    out = ("--out", str(tmp_path / "run"))
    assert main(eval_argv(built_release, server, "--limit", "2", *out)) == 0
    capsys.readouterr()
    assert (
        main(eval_argv(built_release, server, "--limit", "2", "--max-new-tokens", "9", "--thinking", "off", *out)) == 1
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "{" not in err, err
    assert (
        f"error: {tmp_path / 'run' / 'run.json'}: this run's settings differ from those of the run the folder holds: "
        "generation.max_new_tokens: 32 → 9, generation.thinking: auto → off; use another --out to keep both\n"
    ) == err


def test_the_default_folder_names_the_thinking_setting(built_release, tmp_path, openai_server, monkeypatch, capsys):
    """Issue 48 item 9k: --thinking on/off runs get their own default folder; one made before that resumes."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = openai_server(lambda request: Reply(text="A"))
    for thinking in ("auto", "on", "off"):
        assert main(eval_argv(built_release, server, "--limit", "2", "--thinking", thinking)) == 0
    runs = tmp_path / "runs"
    assert sorted(path.name for path in runs.iterdir()) == [
        "eval-vqa-openai-m",
        "eval-vqa-openai-m-thinking-off",
        "eval-vqa-openai-m-thinking-on",
    ]
    assert (
        json.loads((runs / "eval-vqa-openai-m-thinking-on" / "run.json").read_text())["generation"]["thinking"] == "on"
    )
    assert default_run_dir("vqa", "openai:m", "spontaneous").name == "eval-vqa-openai-m"
    # A --thinking on run in the folder the default named before: the same command goes on there, and says so.
    (runs / "eval-vqa-openai-m").rename(tmp_path / "auto-run")
    (runs / "eval-vqa-openai-m-thinking-on").rename(runs / "eval-vqa-openai-m")
    capsys.readouterr()
    assert main(eval_argv(built_release, server, "--limit", "3", "--thinking", "on")) == 0
    shown = capsys.readouterr()
    assert "queries: 3 total, 2 already done, 1 generated now" in shown.out
    assert (
        "note: resuming runs/eval-vqa-openai-m, a --thinking on run in the folder the default named before it named "
        "the thinking setting (new runs: runs/eval-vqa-openai-m-thinking-on)"
    ) in shown.err
    assert not (runs / "eval-vqa-openai-m-thinking-on").exists()
    # The default (auto) run now meets that folder: refused, naming the field.
    assert main(eval_argv(built_release, server, "--limit", "2")) == 1
    assert "generation.thinking: on → auto; use another --out" in capsys.readouterr().err


def test_an_eval_whose_every_query_failed_says_none_was_saved(
    built_release, tmp_path, openai_server, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = openai_server(lambda request: Reply(status=500))
    assert main(eval_argv(built_release, server, "--limit", "2", "--out", str(tmp_path / "run"))) == 3
    err = capsys.readouterr().err
    assert "none was answered" in err and "saved" not in err and "--allow-failures" not in err, err


def test_judge_request_files_need_no_key_and_name_no_cache(built_release, tmp_path, monkeypatch, capsys):
    """Writing judge request files sends nothing: no API key asked; a first run has no cached verdict to name."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = ["score", "--task", "codis", "--dataset", str(built_release), "--predictions", str(codis_example())]
    argv += ["--judge", "openai:j", "--write-requests", "runs/codis-j-requests", "--out", "runs/score-codis-j"]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert re.search(r"judge requests: \d+ written to runs/codis-j-requests in 1 shard\(s\); run them", out), out
    assert "cached" not in out


def test_report_skips_what_is_no_scored_run_and_its_hints_run(
    built_release, tmp_path, openai_server, monkeypatch, capsys
):
    """`report runs/*` meets request folders, a score folder waiting for its judge's replies, an unfinished eval
    and a limited one: each is skipped with a note, and the score command it prints runs as printed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = openai_server(lambda request: Reply(text="A"))
    argv = ["score", "--task", "codis", "--dataset", str(built_release), "--predictions", str(codis_example())]
    assert main([*argv, "--judge", "openai:j", "--write-requests", "runs/j-requests", "--out", "runs/j"]) == 0
    assert main(eval_argv(built_release, server, "--limit", "3", "--write-requests", "runs/e-requests")) == 0
    limited = eval_argv(built_release, server, "--limit", "3", "--out", "runs/eval-limited")
    assert main(limited) == 0
    unfinished = eval_argv(built_release, server, "--limit", "2", "--out", "runs/eval-unfinished")
    assert main(unfinished) == 0
    (tmp_path / "runs/eval-unfinished/predictions.jsonl").unlink()  # killed before its shards were merged
    capsys.readouterr()
    folders = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "runs").iterdir())
    assert main(["report", *folders, "--out", "report/all"]) == 2  # nothing scored yet: one error line after the notes
    err = capsys.readouterr().err
    assert "skipped runs/j-requests: request files (--write-requests), not a run" in err
    assert "skipped runs/e-requests: request files (--write-requests), not a run" in err
    assert "skipped runs/j: a `cogbench score` folder with no scores.json yet" in err
    assert "skipped runs/eval-unfinished: an unfinished `eval` run (no predictions.jsonl yet)" in err
    hint = re.search(r"skipped runs/eval-limited: .*score it with `(cogbench score [^`]*)`", err).group(1)
    assert "--allow-partial" in hint
    assert main(shlex.split(hint)[1:]) == 0  # as printed
    assert main(unfinished) == 0  # the same eval command finishes it, as the note says
    assert (tmp_path / "runs/eval-unfinished/predictions.jsonl").is_file()
    capsys.readouterr()
    assert main(["report", *folders, "--out", "report/again"]) == 0
    assert capsys.readouterr().out.startswith("1 run(s)")


def test_comparing_report_block_runs_as_written(built_release, tmp_path, openai_server, monkeypatch):
    """docs/comparing.md's report commands, one after the other in one folder, each by bash as written, over two
    scored runs and an `eval --no-score` run (skipped with a note)."""
    text = (REPO_ROOT / "docs" / "comparing.md").read_text()
    block = re.search(r"```bash\n(cogbench report runs/\*.*?)```", text, re.S).group(1)
    lines = [line.split("  #")[0].strip() for line in block.splitlines() if line.startswith("cogbench report")]
    assert len(lines) == 2, block
    (tmp_path / "runs").mkdir()
    for name, right_every in (("score-vqa-a", 2), ("score-vqa-b", 3)):
        made = vqa_run(built_release, tmp_path, name, right_every)
        os.rename(made, tmp_path / "runs" / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    assert main(eval_argv(built_release, openai_server(lambda request: Reply(text="A")), "--limit", "2")) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGBENCH_")}
    env |= {"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "HF_HUB_OFFLINE": "1"}
    for line in lines:
        shown = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert shown.returncode == 0, f"`{line}` exited {shown.returncode}: {shown.stderr[-1500:]}"
        assert shown.stdout.startswith("2 run(s)") and "skipped runs/eval-vqa-openai-m" in shown.stderr, shown


def test_publish_results_tells_a_score_run_to_score_again(built_release, tmp_path):
    """A PARTIAL `score` run was never an `eval`: the refusal says what to do with `score`."""
    predictions = tmp_path / "few.json"
    predictions.write_text(json.dumps(json.loads(codis_example().read_text())[:5]))
    argv = ["score", "--task", "codis", "--dataset", str(built_release), "--predictions", str(predictions)]
    assert main([*argv, "--allow-partial", "--out", str(tmp_path / "partial")]) == 0
    try:
        check_publishable(read_run(tmp_path / "partial"))
    except NotPublishable as error:
        message = str(error)
    assert "PARTIAL" in message and "cogbench eval" not in message and "`cogbench score`" in message, message


# A message's pointer at a doc section: README 'Title' or docs/PAGE.md, 'Title' (either quote).
POINTER = re.compile(r"""(README|docs/[a-z_]+\.md),? ['"]([^'"]+)['"]""")


def test_messages_point_at_doc_sections_that_exist():
    """Every `README 'X'` or `docs/page.md, 'X'` in the package's sources names a heading or bold title there."""
    found = []
    for folder in ("cogbench", "cards", "dataset_builders", "validation", "reference_eval", "schemas"):
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            for page, title in POINTER.findall(path.read_text(encoding="utf-8")):
                title = " ".join(title.split())  # a docstring may break it over lines
                target = REPO_ROOT / ("README.md" if page == "README" else page)
                text = target.read_text(encoding="utf-8") if target.is_file() else ""
                titles = re.findall(r"^#+ (.+)$|\*\*(.+?)\*\*", text, re.M)
                if not any(title in (a or b) for a, b in titles):
                    found.append(f"{path.relative_to(REPO_ROOT)}: {page} '{title}'")
    assert found == [], found


def test_top_level_help_names_every_backend():
    text = " ".join(build_parser().format_help().split())
    assert all(f"{backend}:MODEL" in text for backend in BACKENDS), text
