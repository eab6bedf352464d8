"""Conventions every `cogbench` command follows: defaults in --help, named positionals,
one exit-code table, options that do not apply refused (exit 2), usage errors exit 2."""

from __future__ import annotations

import argparse

import pytest

from cogbench.cli import EXIT_CODES_HELP, build_parser, main
from cogbench.errors import EXIT_CODES, EXIT_QUERIES_FAILED, EXIT_USAGE


def subparsers():
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


COMMANDS = sorted(subparsers())


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_every_default_names_positionals_and_lists_exit_codes(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert " ".join(EXIT_CODES_HELP.split()) in text
    parser = subparsers()[command]
    in_required_group = {
        id(a) for group in parser._mutually_exclusive_groups if group.required for a in group._group_actions
    }
    undocumented = []
    for action in parser._actions:
        if not action.option_strings:
            assert action.metavar and action.metavar.isupper(), f"{command}: positional {action.dest} has no NAME"
            assert action.help, f"{command}: positional {action.metavar} is not described"
        flag = isinstance(action, (argparse._HelpAction, argparse._StoreTrueAction, argparse._StoreFalseAction))
        if not (flag or action.required or id(action) in in_required_group or "default" in (action.help or "")):
            undocumented.append(action.option_strings[0] if action.option_strings else action.metavar)
    assert undocumented == [], f"{command}: no default in --help"


def test_exit_code_table_includes_failed_queries():
    assert EXIT_CODES[EXIT_QUERIES_FAILED].startswith("some judge or model queries failed")
    assert "3 some judge or model queries failed" in EXIT_CODES_HELP


def usage_errors(tmp):
    """One wrong call of every command (a missing input), each of which must exit 2."""
    return {
        "fetch-raw": ["fetch-raw", "cogbench", "--dest", str(tmp / "raw")],
        "build": ["build", "--raw-dir", str(tmp / "missing"), "--out", str(tmp / "out")],
        "diff": ["diff", str(tmp / "missing-old"), str(tmp / "missing-new")],
        "publish": ["publish", str(tmp / "missing"), "--repo-id", "org/name", "--version", "1.0.0", "--dry-run"],
        "validate": ["validate", str(tmp / "missing")],
        "score": ["score", "--task", "vqa", "--dataset", str(tmp / "missing"), "--predictions", str(tmp / "p.jsonl")],
        "eval": ["eval", "--task", "vqa", "--dataset", str(tmp / "missing"), "--model", "no-backend"],
        "export": ["export", "--format", "lmms-eval", "--dataset", str(tmp / "missing"), "--out", str(tmp / "x")],
        "compare": ["compare", str(tmp / "missing-a"), str(tmp / "missing-b")],
        "report": ["report", str(tmp / "missing"), "--out", str(tmp / "report")],
        "publish-results": ["publish-results", str(tmp / "missing"), "--model-repo", "o/m", "--details-repo", "o/d"],
        "verify": ["verify", str(tmp / "missing")],
        "judges": ["judges", "certify", "--reference", str(tmp / "missing"), "--candidate", str(tmp / "missing-b")],
        "explain": ["explain", str(tmp / "missing-a"), str(tmp / "missing-b")],
        "rescore": ["rescore", str(tmp / "missing"), "--dataset", str(tmp / "missing-b"), "--out", str(tmp / "o")],
        "demo": ["demo", "server", "--url-file", str(tmp / "missing-folder" / "url.txt")],
        "sweep": ["sweep", "plan", str(tmp / "missing.yaml"), "--out", str(tmp / "o")],
        "label": ["label", str(tmp / "missing"), "--out", str(tmp / "page")],
        "labels": ["labels", "check", str(tmp / "missing.jsonl")],
        "fingerprints": ["fingerprints", str(tmp / "missing")],
        "leak-scan": ["leak-scan", str(tmp / "missing"), "--dataset", str(tmp / "missing-b"), "--out", str(tmp / "o")],
    }


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_exits_2_on_a_usage_error(command, tmp_path, capsys):
    argv = usage_errors(tmp_path)[command]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") >= 1 and "Traceback" not in err


@pytest.mark.parametrize("command", COMMANDS)
def test_bad_option_values_exit_2(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([command, "--no-such-option"])
    assert done.value.code == EXIT_USAGE


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["eval", "--task", "vqa", "--mode", "directed", "--model", "hf:m"],
            "--mode applies only to --task description, not to --task vqa",
        ),
        (
            ["eval", "--task", "codis", "--model", "hf:m", "--embedder", "e"],
            "--embedder applies only to --task description",
        ),
        (
            ["eval", "--task", "vqa", "--model", "openai:gpt-4o", "--device", "cpu"],
            "--device applies only to hf: models, not to --model openai:gpt-4o",
        ),
        (
            ["eval", "--task", "vqa", "--model", "hf:m", "--base-url", "http://x/v1"],
            "--base-url applies only to openai: models",
        ),
        (
            ["eval", "--task", "vqa", "--model", "hf:m", "--tensor-parallel-size", "2"],
            "--tensor-parallel-size applies only to vllm: models, not to --model hf:m",
        ),
        (
            ["eval", "--task", "vqa", "--model", "openai:m", "--batch-size", "2"],
            "--batch-size applies only to hf: models or vllm: models, not to --model openai:m",
        ),
        (
            ["eval", "--task", "vqa", "--model", "vllm:m", "--device", "cpu"],
            "--device applies only to hf: models, not to --model vllm:m",
        ),
        (
            ["score", "--task", "vqa", "--predictions", "p.jsonl", "--spacy-model", "x"],
            "--spacy-model applies only to --task description",
        ),
        (
            ["score", "--task", "codis", "--predictions", "p.jsonl", "--judge-cache", "c.sqlite"],
            "--judge-cache applies only with an LLM judge (--judge openai:MODEL), not to --judge rule",
        ),
        (
            ["score", "--task", "description", "--oracle", "--judge", "rouge", "--judge-parsing", "official"],
            "--judge-parsing applies only with an LLM judge (--judge openai:MODEL), not to --judge rouge",
        ),
        (
            ["score", "--task", "vqa", "--predictions", "p.jsonl", "--judge-base-url", "http://x/v1"],
            "--judge-base-url applies only with an LLM judge (--judge openai:MODEL), not to --judge none",
        ),
        (
            ["eval", "--task", "codis", "--model", "hf:m", "--judge-parsing", "tolerant"],
            "--judge-parsing applies only with an LLM judge (--judge openai:MODEL), not to --judge rule",
        ),
    ],
)
def test_options_that_do_not_apply_are_refused(argv, message, tmp_path, capsys):
    argv = [*argv, "--dataset", str(tmp_path / "missing")]
    assert main(argv) == EXIT_USAGE
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["score", "--task", "vqa", "--datset", "dist/x", "--predictions", "p.jsonl"],
            "cogbench score: error: unrecognized option: --datset (did you mean --dataset?)",
        ),
        (
            ["eval", "--datset=dist/x"],
            "cogbench eval: error: unrecognized option: --datset=dist/x (did you mean --dataset?)",
        ),
        (["build", "--raw-dir", "raw", "--zzz"], "cogbench build: error: unrecognized option: --zzz"),
    ],
)
def test_an_unknown_option_is_named_before_a_missing_required_one(argv, line, capsys):
    """Issue 32 item 8: `--datset` is named (argparse alone reports only the missing --dataset)."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[-1] == line


def test_help_still_marks_required_options(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    assert "usage: cogbench score [-h] --task {description,vqa,codis} --dataset DATASET" in capsys.readouterr().out


def test_no_user_facing_text_cites_an_internal_issue():
    """Issue 48 item 9f: what cogbench prints or writes (every string literal that is not a docstring, and its
    templates) never cites the project's own issue numbers ("issue 40"), which mean nothing to a user."""
    import ast
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    found = []
    for folder in ("cogbench", "cards", "dataset_builders", "validation", "reference_eval", "schemas"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".md", ".yaml", ".json", ".html", ".js", ".css"):
                found += [f"{path.name}: {m}" for m in re.findall(r"(?i)\bissues? \d+", path.read_text())]
            if path.suffix != ".py":
                continue
            tree = ast.parse(path.read_text())
            docstrings = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and node.body
                and isinstance(node.body[0], ast.Expr)
            }
            found += [
                f"{path.relative_to(root)}:{node.lineno}"
                for node in ast.walk(tree)
                if isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and re.search(r"(?i)\bissues? \d", node.value)
            ]
    assert found == []
