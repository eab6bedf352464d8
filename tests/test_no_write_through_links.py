"""No command writes through a link planted in its output folder (issue 31, item 1).

A symbolic link at a final name, at a temporary name or as a folder, pointing at a file, a folder
or a name that does not exist yet outside ``--out``: a re-run of score, report, export, build or
eval ends in one ``error:`` line (exit 2) and nothing outside the folder changes. The helper every
command writes with (``dataset_builders/writes.py``) is checked alone too, with links planted at
every depth, as they could be between the folder check and the write.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import REAL_RAW_DIR, needs_real_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogbench.cli import main
from cogbench.dataset_builders.writes import open_existing_or_new, write_file
from cogbench.errors import UsageError

from openai_server import OpenAIServer, Reply

TARGETS = ("file", "folder", "missing")  # what the link points at, outside the output folder


def outside_state(folder: Path) -> dict[str, str]:
    """Every name below ``folder`` with its content's sha256 (a folder or link by its kind)."""
    state = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink():
            state[name] = "link " + os.readlink(path)
        elif path.is_dir():
            state[name] = "folder"
        else:
            state[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def make_victim(home: Path) -> Path:
    victim = home / "victim"
    (victim / "folder").mkdir(parents=True)
    (victim / "file.txt").write_bytes(b"the user's file\n" + bytes(range(256)))
    (victim / "folder" / "kept.txt").write_text("kept")
    return victim


def plant(out: Path, name: str, victim: Path, target: str) -> None:
    """Replace whatever is at ``out/name`` by a link to the victim's file, folder or a missing name."""
    path = out / name
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to({"file": victim / "file.txt", "folder": victim / "folder", "missing": victim / "new.txt"}[target])


# --- the helper alone: every depth, every kind of link ------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    depth=st.integers(0, 2),
    at=st.integers(0, 2),
    target=st.sampled_from(TARGETS),
    append=st.booleans(),
)
def test_the_write_helper_never_follows_a_link(depth, at, target, append):
    with tempfile.TemporaryDirectory() as home:
        home = Path(home)
        victim = make_victim(home)
        before = outside_state(victim)
        root = home / "out"
        root.mkdir()
        parts = [f"sub{i}" for i in range(depth)] + ["scores.json"]
        planted = "/".join(parts[: min(at, depth) + 1])  # a folder on the way, or the file itself
        plant(root, planted, victim, target)
        path = root.joinpath(*parts)
        with pytest.raises(UsageError, match="symbolic link|not a plain file|not a folder"):
            if append:
                open_existing_or_new(path, "a", root).close()
            else:
                write_file(path, "new text", root)
        assert outside_state(victim) == before
        assert not any(name.endswith(".tmp") for name in os.listdir(root))  # no temporary left behind


def test_the_write_helper_replaces_a_plain_file_and_leaves_no_temporary(tmp_path):
    (tmp_path / "scores.json").write_text("old")
    write_file(tmp_path / "sub" / "scores.json", "sub", tmp_path)
    write_file(tmp_path / "scores.json", "new")
    assert (tmp_path / "scores.json").read_text() == "new" and (tmp_path / "sub" / "scores.json").read_text() == "sub"
    assert sorted(os.listdir(tmp_path)) == ["scores.json", "sub"]


# --- every command, re-run into its own folder with a link planted -------------------------------


def score_argv(dataset, out):
    predictions = REAL_RAW_DIR / "codis" / "output_example.json"
    return ["score", "--task", "codis", "--dataset", str(dataset), "--predictions", str(predictions), "--out", str(out)]


def eval_argv(server, dataset, out):
    return [
        "eval",
        "--task",
        "codis",
        "--model",
        "openai:m",
        "--base-url",
        server.base_url,
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--limit",
        "2",
        "--no-score",
    ]


# Per command: how to run it into OUT, and where a link may be planted in its folder.
COMMANDS = {
    "score": (
        lambda built, out, scored, server: score_argv(built, out),
        [
            "scores.json",
            "details.jsonl",
            "report.md",
            ".cogbench-output.json",
            "judge_cache.sqlite",
            "scores.json.partial",
            ".scores.json.0123456789abcdef.tmp",
            "sub",
        ],
    ),
    "report": (
        lambda built, out, scored, server: ["report", str(scored), "--out", str(out)],
        [
            "report.md",
            "report.html",
            "leaderboard.csv",
            "report.md.partial",
            ".report.html.0123456789abcdef.tmp",
            "chart.png",
            "sub",
        ],
    ),
    "export": (
        lambda built, out, scored, server: [
            "export",
            "--format",
            "vlmevalkit",
            "--dataset",
            str(built),
            "--out",
            str(out),
        ],
        ["CogBench_VQA.tsv", ".cogbench-output.json", "..cogbench-output.json.0123456789abcdef.tmp", "sub"],
    ),
    "build": (
        lambda built, out, scored, server: ["build", "--raw-dir", str(REAL_RAW_DIR / "codis"), "--out", str(out)],
        ["README.md", "manifest.json", ".cogbench-build.json", "data", "data/codis", ".README.md.0123456789abcdef.tmp"],
    ),
    "eval": (
        lambda built, out, scored, server: eval_argv(server, built, out),
        [
            "run.json",
            "predictions.jsonl",
            "official_codis_output.json",
            "shards",
            "shards/rank-0.jsonl",
            "rank-0.lock",
            "rank-0.lock.json",
            "run.json.1.tmp",
            ".run.json.0123456789abcdef.tmp",
            "score",
        ],
    ),
}


@pytest.fixture(scope="module")
def finished(built_release, tmp_path_factory):
    """Each command's output folder, made once; each example re-runs the command into a copy."""
    home = tmp_path_factory.mktemp("finished")
    with pytest.MonkeyPatch.context() as patch, OpenAIServer(lambda request: Reply(text="an answer")) as server:
        patch.setenv("OPENAI_API_KEY", "local")
        assert main(score_argv(built_release, home / "scored")) == 0
        outs = {}
        for command, (argv, _) in COMMANDS.items():
            outs[command] = home / command
            assert main(argv(built_release, outs[command], home / "scored", server)) == 0, command
        yield outs, home / "scored", server


@needs_real_data
@pytest.mark.parametrize("command, name", [(c, n) for c, (_, names) in sorted(COMMANDS.items()) for n in names])
def test_a_link_planted_in_an_output_folder_is_never_followed(command, name, finished, built_release, capsys):
    outs, scored, server = finished
    argv = COMMANDS[command][0]

    @settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(target=st.sampled_from(TARGETS))
    def planted(target):
        with tempfile.TemporaryDirectory() as home:
            home = Path(home)
            victim = make_victim(home)
            before = outside_state(victim)
            out = home / command
            shutil.copytree(outs[command], out, symlinks=True)
            plant(out, name, victim, target)
            capsys.readouterr()
            code = main(argv(built_release, out, scored, server))
            err = capsys.readouterr().err
            assert outside_state(victim) == before, ("followed", target, code, err)
            assert code == 2 and err.count("error: ") == 1 and "Traceback" not in err, (target, code, err)
            assert err.strip().splitlines()[-1].startswith("error: "), err

    planted()


@needs_real_data
def test_compare_json_never_lands_on_a_build_or_in_a_run(finished, built_release, tmp_path, capsys):
    scored = finished[1]
    for target in (built_release / "manifest.json", scored / "compare.json", scored / "scores.json"):
        before = outside_state(target.parent)
        assert main(["compare", str(scored), str(scored), "--json", str(target), "--permutations", "9"]) == 2
        err = capsys.readouterr().err
        assert err.count("error: ") == 1 and "refusing to write there" in err, err
        assert outside_state(target.parent) == before
    assert main(["compare", str(scored), str(scored), "--json", str(tmp_path / "c.json"), "--permutations", "9"]) == 0
    assert (tmp_path / "c.json").is_file()


@needs_real_data
def test_judge_cache_never_lands_in_a_build_nor_through_a_link(built_release, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    victim = make_victim(tmp_path)
    link = tmp_path / "cache.sqlite"
    link.symlink_to(victim / "file.txt")
    before = outside_state(built_release), outside_state(victim)
    for cache, message in ((built_release / "judge_cache.sqlite", "a built dataset"), (link, "not a plain file")):
        argv = [*score_argv(built_release, tmp_path / "s"), "--judge", "openai:j", "--judge-cache", str(cache)]
        assert main([*argv, "--judge-base-url", "http://127.0.0.1:9/v1"]) == 2
        err = capsys.readouterr().err
        assert err.count("error: ") == 1 and message in err, err
    assert (outside_state(built_release), outside_state(victim)) == before
