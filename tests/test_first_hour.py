"""A new user's first hour (issue 24): task defaults in --help, progress without a terminal, help texts,
single-file validate, zero counts in JSON, captioning on the terminal, .gitignore."""

from __future__ import annotations

import io
import json
import re
import shutil

import pytest
from conftest import REPO_ROOT
from test_score import minilm_path

from cogbench.cli import build_parser, main
from cogbench.reference_eval.run.progress import LogProgress
from cogbench.reference_eval.run.runner import EvalSettings, run_eval
from cogbench.reference_eval.tasks.queries import DEFAULT_MAX_NEW_TOKENS

from openai_server import Reply
from shared_files import spacy_stand_in


def help_text(*command: str) -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command[0]]
    return re.sub(r"\s+", " ", sub.format_help())


# --- item 4: max new tokens per task, progress without a terminal -------------------------------


def test_each_task_has_its_own_max_new_tokens_shown_in_help():
    assert DEFAULT_MAX_NEW_TOKENS["vqa"] < 64 < DEFAULT_MAX_NEW_TOKENS["codis"] <= DEFAULT_MAX_NEW_TOKENS["description"]
    assert (
        "(default: per task, description 1024, vqa 32, codis 512; 32768 for every task with --thinking on)"
        in help_text("eval")
    )


@pytest.mark.parametrize("task", ["vqa", "codis"])
def test_the_request_carries_the_task_default(task, openai_server, built_release, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = openai_server(lambda request: Reply(text="A"))
    argv = [
        "eval",
        "--task",
        task,
        "--model",
        "openai:m",
        "--base-url",
        server.base_url,
        "--dataset",
        str(built_release),
        "--out",
        str(tmp_path / "run"),
        "--limit",
        "1",
        "--no-score",
    ]
    assert main(argv) == 0
    assert {request.body["max_tokens"] for request in server.requests} == {DEFAULT_MAX_NEW_TOKENS[task]}
    assert (
        json.loads((tmp_path / "run" / "run.json").read_text())["generation"]["max_new_tokens"]
        == DEFAULT_MAX_NEW_TOKENS[task]
    )


def test_log_progress_prints_at_most_every_interval_with_rate_and_eta():
    now = [0.0]
    out = io.StringIO()
    with LogProgress(100, "codis", interval=10.0, file=out, clock=lambda: now[0]) as progress:
        for _ in range(50):  # 50 queries, one every 0.5 s: 25 s in all
            now[0] += 0.5
            progress.update(1)
    lines = out.getvalue().splitlines()
    assert lines[:2] == [
        "codis: 20/100 queries (20%), 2.00 queries/s, ETA 40s",
        "codis: 40/100 queries (40%), 2.00 queries/s, ETA 30s",
    ]
    assert lines[2] == "codis: 50/100 queries (50%), 2.00 queries/s, ETA 25s, done in 25s"
    assert len(lines) == 3  # 25 s: two lines in the run (10 s apart), one at the end


def test_eval_without_a_terminal_prints_progress_lines(openai_server, built_release, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = openai_server(lambda request: Reply(text="A"))
    settings = EvalSettings(
        task="vqa",
        model="openai:m",
        dataset=str(built_release),
        out=tmp_path / "run",
        limit=6,
        base_url=server.base_url,
        concurrency=1,
        progress_seconds=0.0,
    )
    run_eval(settings)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("vqa: ")]
    assert len(lines) >= 2, lines  # pytest's capture is no terminal: plain lines, not a bar
    assert re.fullmatch(r"vqa: 6/6 queries \(100%\), [\d.]+ queries/s, ETA 0s, done in \d+s", lines[-1])
    assert all(re.fullmatch(r"vqa: \d/6 queries \(\d+%\), [\d.]+ queries/s, ETA \w+.*", line) for line in lines)


# --- item 6: validate on a file says what it expects ---------------------------------------------


def test_validate_on_a_file_says_it_wants_a_folder(real_raw_dir, capsys):
    assert main(["validate", str(real_raw_dir / "codis" / "data.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is a file; validate checks a folder" in err
    assert "codis/data.json and/or cogbench/ or cogbench-samples/" in err and "written by `cogbench build`" in err
    assert f"`cogbench validate {real_raw_dir / 'codis'}`" in err  # the folder it probably meant


# --- item 7: captioning scores on the terminal ----------------------------------------------------


@pytest.mark.skipif(shutil.which("java") is None, reason="no Java runtime (apt-get install default-jre-headless)")
def test_captioning_scores_are_printed(built_release, tmp_path, capsys):
    argv = [
        "score",
        "--task",
        "description",
        "--oracle",
        "--dataset",
        str(built_release),
        "--metrics",
        "captioning",
        "--spacy-model",
        str(spacy_stand_in()),
        "--embedder",
        minilm_path(),
        "--out",
        str(tmp_path / "oracle"),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    scores = json.loads((tmp_path / "oracle" / "scores.json").read_text())["analyses"]["captioning"]
    line = next(line for line in printed.splitlines() if line.startswith("captioning"))
    assert line.startswith(f"captioning (CogBench Appendix E, Table 7; {scores['items']} descriptions")
    assert f"METEOR {scores['scores']['METEOR']:.3f}, CIDEr {scores['scores']['CIDEr']:.3f}, BLEU-1 1.000" in line
    assert "CIDEr 10.000" in line  # the oracle: its own reference


# --- item 8: zero buckets in JSON counts ------------------------------------------------------------


def test_validate_json_counts_every_severity_even_zero(built_release, capsys):
    assert main(["validate", str(built_release), "--format", "json", "--expected", "none"]) == 0
    counts = json.loads(capsys.readouterr().out)["counts"]
    assert list(counts) == ["error", "warning", "info"] and counts["error"] == 0  # no error: still there, as 0


# --- item 9: help texts ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["eval", "score"])
def test_task_has_help_and_metrics_no_empty_default(command):
    text = help_text(command)
    assert re.search(r"--task \{description,vqa,codis\} which config to evaluate", text)
    if command == "score":
        assert "[]" not in text and "--metrics {captioning}" in text


def test_export_help_names_all_four_tasks():
    text = help_text("export")
    for task in ("cogbench_description_spontaneous", "cogbench_description_directed", "cogbench_vqa", "cogbench_codis"):
        assert task in text


# --- item 11: the default output folders are ignored by git -------------------------------------


def test_default_output_folders_are_in_gitignore():
    ignored = (REPO_ROOT / ".gitignore").read_text().split()
    for folder in ("/dist/", "/runs/", "/raw/", "/exports/", "/report/", "/tasks/"):
        assert folder in ignored or folder.strip("/") + "/" in ignored, folder


def user_guide() -> str:
    """README and the documentation site's pages (docs/*.md): the commands a user is shown."""
    return "\n".join(p.read_text() for p in [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))])


def test_every_folder_readme_commands_create_is_ignored_by_git():
    """Issue 32 item 7: `--out`, `--dest`, `--local-dir`, `--output_path` of every README command, and
    VLMEvalKit's `outputs/`: each top folder is ignored (git check-ignore), as `models/` once was not."""
    import subprocess

    readme = user_guide()
    blocks = "\n".join(re.findall(r"```bash\n(.*?)```", readme, re.S))
    made = {
        path.split("/")[0]
        for path in re.findall(r"(?:--out|--dest|--local-dir|--output_path|--output-dir)[ =](\S+)", blocks)
        if not path.startswith(("$", "/", ".", "~")) and path.split("/")[0].isidentifier()
    }
    made |= {"outputs"} if "outputs/" in blocks else set()
    assert {"models", "outputs", "runs", "dist"} <= made, made
    for folder in sorted(made):
        shown = subprocess.run(["git", "check-ignore", "-q", f"{folder}/x"], cwd=REPO_ROOT, check=False)
        assert shown.returncode == 0, f"{folder}/ (made by a README command) is not in .gitignore"


def test_report_skips_an_unscored_eval_run_with_the_command_that_scores_it(
    openai_server, built_release, tmp_path, monkeypatch, capsys
):
    """Issue 32 item 7: `report runs/*` meets `eval --no-score` folders; each is skipped, its note's command runs."""
    import shlex

    from test_runs_report import vqa_run

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    server = openai_server(lambda request: Reply(text="A"))
    argv = ["eval", "--task", "vqa", "--model", "openai:m", "--base-url", server.base_url]
    assert main([*argv, "--dataset", str(built_release), "--out", "runs/eval-vqa-m", "--no-score"]) == 0
    vqa_run(built_release, tmp_path / "runs", "score-vqa-other", 2)
    capsys.readouterr()
    assert main(["report", "runs/eval-vqa-m", "runs/score-vqa-other", "--out", "report"]) == 0
    shown = capsys.readouterr()
    note = re.fullmatch(
        r"skipped runs/eval-vqa-m: an `eval --no-score` run, not scored yet; score it with `(.*)`\n", shown.err
    )
    assert note and shown.out.startswith("1 run(s)"), shown.err
    assert main(["report", "runs/eval-vqa-m", "--out", "none"]) == 2  # nothing scored: one error line
    assert capsys.readouterr().err.splitlines()[-1].startswith("error: no scored run among runs/eval-vqa-m")
    assert main(shlex.split(note.group(1))[1:]) == 0  # the command, as printed
    capsys.readouterr()
    assert main(["report", "runs/eval-vqa-m", "runs/score-vqa-other", "--out", "report2"]) == 0
    again = capsys.readouterr()
    assert again.out.startswith("2 run(s)") and "skipped" not in again.err


def test_readme_report_globs_match_the_default_run_folders():
    """Issue 32 item 7: every glob README hands `cogbench report` matches a folder `eval` or `score` names by default."""
    import fnmatch

    from cogbench.reference_eval.run.runner import default_run_dir
    from cogbench.reference_eval.scoring.options import default_score_dir

    defaults = [default_run_dir(task, "openai:gpt-4o", "spontaneous").as_posix() for task in DEFAULT_MAX_NEW_TOKENS]
    defaults += [default_score_dir(task, "answers.jsonl") for task in DEFAULT_MAX_NEW_TOKENS]
    readme = user_guide()
    globs = [
        arg for line in re.findall(r"^cogbench report (.*?) --out", readme, re.M) for arg in line.split() if "*" in arg
    ]
    assert len(globs) >= 3, globs
    for pattern in globs:
        assert fnmatch.filter(defaults, pattern), f"README's `cogbench report {pattern}` matches no default run folder"


def test_compare_tables_name_columns_as_the_papers_do_for_every_task(built_release, tmp_path, capsys):
    """Issue 32 item 8: VQA columns are CogBench's labels ("Special Time"), not keys ("time"); "Overall" everywhere."""
    from test_runs_report import vqa_run

    from cogbench.schemas.features import CATEGORY_LABEL

    a, b = vqa_run(built_release, tmp_path, "a", 2), vqa_run(built_release, tmp_path, "b", 3)
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 0
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines() if line.startswith("| accuracy ")]
    columns = {row[1] for row in rows}
    assert "Overall" in columns and "Special Time" in columns
    assert columns <= {*CATEGORY_LABEL.values(), "Overall"}, columns


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table of ``text``: its rows (header first, the --- line left out) as cells."""
    tables, current = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not all(set(cell) <= {"-"} for cell in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def test_a_description_report_has_no_empty_table_or_column(built_release, tmp_path):
    """Issue 32 item 8: the Recognition Score has no categories, so its interval table has no category columns."""
    from test_harnesses import model_args

    argv = ["score", "--task", "description", "--dataset", str(built_release), "--oracle", *model_args()]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 0
    tables = markdown_tables((tmp_path / "run" / "report.md").read_text())
    assert len(tables) >= 2
    for table in tables:
        header, *rows = table
        assert rows, f"a table with no row: {header}"
        for index, name in enumerate(header):
            assert any(row[index] for row in rows), f"column {name!r} is empty in every row"
