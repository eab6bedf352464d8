"""Nothing outside what cogbench wrote is ever deleted or replaced (issue 21, part 1).

Every command that writes a folder (build, eval, score, report, export) follows one rule
(dataset_builders.output): a new, empty, or own-marked folder; anything else is refused in
one line, and a user's files beside and inside each --out survive byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import REAL_RAW_DIR, needs_real_data
from test_harnesses import model_args  # the Recognition Score's models as local files

from cogbench.cli import main
from cogbench.dataset_builders.output import MARKER_FILE

pytestmark = needs_real_data


def codis_example() -> Path:
    return REAL_RAW_DIR / "codis" / "output_example.json"


def snapshot(folder: Path) -> dict[str, str]:
    """sha256 of every file below ``folder`` (user files: must never change)."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def user_files(folder: Path, names: list[str]) -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(f"the user's own {name}\n".encode() + bytes(range(256)))
    return snapshot(folder)


def one_line_error(code: int, err: str, exit_code: int = 2) -> str:
    assert code == exit_code, err
    assert err.count("error: ") == 1 and "Traceback" not in err, err
    return err.strip().splitlines()[-1]


def score_argv(dataset, out, task="codis", predictions=None):
    return [
        "score",
        "--task",
        task,
        "--dataset",
        str(dataset),
        "--predictions",
        str(predictions or codis_example()),
        "--out",
        str(out),
        "--resamples",
        "50",
    ]


# What each command writes over, given an --out that already holds a user's file of the same name.
COMMANDS = {
    "score": ("report.md", lambda built, out, tmp: score_argv(built, out)),
    "report": ("leaderboard.csv", lambda built, out, tmp: ["report", str(tmp / "scored"), "--out", str(out)]),
    "export-lmms-eval": (
        "utils.py",
        lambda built, out, tmp: [
            "export",
            "--format",
            "lmms-eval",
            "--dataset",
            str(built),
            "--out",
            str(out),
            *model_args(),
        ],
    ),
    "export-vlmevalkit": (
        "CogBench_VQA.tsv",
        lambda built, out, tmp: ["export", "--format", "vlmevalkit", "--dataset", str(built), "--out", str(out)],
    ),
    "build": (
        "README.md",
        lambda built, out, tmp: ["build", "--raw-dir", str(REAL_RAW_DIR / "codis"), "--out", str(out)],
    ),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_user_files_beside_and_inside_every_out_survive_byte_for_byte(command, built_release, tmp_path, capsys):
    name, argv = COMMANDS[command]
    if command == "report":
        assert main(score_argv(built_release, tmp_path / "scored")) == 0
    home = tmp_path / "home"
    beside = user_files(home, ["notes.txt", "out-old/keep.csv", "predictions.jsonl"])
    inside = user_files(home / "out", [name, "mine/data.bin"])
    capsys.readouterr()
    line = one_line_error(main(argv(built_release, home / "out", tmp_path)), capsys.readouterr().err)
    assert "did not write" in line or "nothing cogbench wrote" in line or "not a cogbench build" in line
    assert snapshot(home / "out") == inside
    # Into a new folder beside them: the command works and the user's files are untouched.
    assert main(argv(built_release, home / "new", tmp_path)) == 0, capsys.readouterr().err
    assert {k: v for k, v in snapshot(home).items() if not k.startswith("new/")} == {
        **beside,
        **{f"out/{k}": v for k, v in inside.items()},
    }
    # Run again into its own folder: allowed (own marker); a user file added there is refused, and kept.
    assert main(argv(built_release, home / "new", tmp_path)) == 0, capsys.readouterr().err
    (home / "new" / "user.txt").write_text("mine")
    capsys.readouterr()
    line = one_line_error(main(argv(built_release, home / "new", tmp_path)), capsys.readouterr().err)
    assert "user.txt" in line and (home / "new" / "user.txt").read_text() == "mine"


def test_export_refuses_a_stale_task_yaml_beside_its_own(built_release, tmp_path, capsys):
    out = tmp_path / "tasks"
    argv = ["export", "--format", "lmms-eval", "--dataset", str(built_release), "--out", str(out), *model_args()]
    assert main(argv) == 0
    (out / "cogbench_vqa_old.yaml").write_text("task: cogbench_vqa\n")  # lmms-eval would see two cogbench_vqa
    capsys.readouterr()
    assert "cogbench_vqa_old.yaml" in one_line_error(main(argv), capsys.readouterr().err)
    assert (out / "cogbench_vqa_old.yaml").read_text() == "task: cogbench_vqa\n"


def test_eval_refuses_a_folder_holding_a_users_predictions(built_release, tmp_path, capsys, openai_server, monkeypatch):
    from openai_server import Reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    server = openai_server(lambda request: Reply(text="The answer is A"))
    out = tmp_path / "run"
    inside = user_files(out, ["predictions.jsonl"])
    argv = [
        "eval",
        "--task",
        "vqa",
        "--model",
        "openai:m",
        "--base-url",
        server.base_url,
        "--dataset",
        str(built_release),
        "--out",
        str(out),
        "--limit",
        "2",
        "--no-score",
    ]
    line = one_line_error(main(argv), capsys.readouterr().err)
    assert "nothing cogbench wrote" in line and snapshot(out) == inside and not server.chat_requests
    argv[argv.index(str(out))] = str(tmp_path / "fresh")
    assert main(argv) == 0
    assert main(argv) == 0  # resumes into its own folder
    (tmp_path / "fresh" / "notes.md").write_text("mine")
    line = one_line_error(main(argv), capsys.readouterr().err)
    assert "notes.md" in line


@pytest.mark.parametrize("listed", ["../victim.txt", "ABSOLUTE", "link/victim.txt"])
def test_build_marker_listing_a_path_outside_its_folder_deletes_nothing(listed, tmp_path, capsys):
    victim_dir = tmp_path / "elsewhere"
    victim = victim_dir / "victim.txt"
    victim_dir.mkdir()
    victim.write_text("keep me")
    (tmp_path / "victim.txt").write_text("keep me too")
    out = tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(victim_dir)
    name = str(victim) if listed == "ABSOLUTE" else listed
    (out / MARKER_FILE).write_text(json.dumps({"builder": "cogbench", "format": 1, "files": [MARKER_FILE, name]}))
    code = main(["build", "--raw-dir", str(REAL_RAW_DIR / "codis"), "--out", str(out)])
    line = one_line_error(code, capsys.readouterr().err)
    assert "outside" in line and name in line
    assert victim.read_text() == "keep me" and (tmp_path / "victim.txt").read_text() == "keep me too"
    assert (out / MARKER_FILE).exists() and (out / "link").is_symlink()


def test_folders_inside_a_build_or_another_kind_of_output_are_refused(built_release, tmp_path, capsys):
    build = tmp_path / "build"
    shutil.copytree(built_release, build)
    before = snapshot(build)
    line = one_line_error(
        main(["export", "--format", "vlmevalkit", "--dataset", str(build), "--out", str(build / "x")]),
        capsys.readouterr().err,
    )
    assert f"inside --dataset {build}, which this command reads" in line and snapshot(build) == before
    scored = tmp_path / "scored"
    assert main(score_argv(build, scored)) == 0
    run_files = snapshot(scored)
    for out in (scored, scored / "sub"):  # report into a score folder (its own report.md) or below it
        capsys.readouterr()
        one_line_error(main(["report", str(scored), "--out", str(out)]), capsys.readouterr().err)
    assert snapshot(scored) == run_files
    (tmp_path / "file.txt").write_text("x")
    for argv in (
        score_argv(build, tmp_path / "file.txt"),
        ["report", str(scored), "--out", str(tmp_path / "file.txt")],
        ["export", "--format", "vlmevalkit", "--dataset", str(build), "--out", str(tmp_path / "file.txt")],
    ):
        capsys.readouterr()
        assert "not a folder" in one_line_error(main(argv), capsys.readouterr().err)
    assert (tmp_path / "file.txt").read_text() == "x"


def vqa_predictions(built_release, path: Path) -> Path:
    from cogbench.dataset_builders.load import load_config

    rows = load_config(str(built_release), "vqa").remove_columns("image").to_list()
    path.write_text(
        "".join(json.dumps({"task": "vqa", "item_id": r["question_id"], "output": "A"}) + "\n" for r in rows)
    )
    return path


def test_defaults_never_collide(built_release, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for task, predictions in (
        ("codis", codis_example()),
        ("vqa", vqa_predictions(built_release, tmp_path / "answers.jsonl")),
    ):
        argv = score_argv(built_release, "x", task, predictions)
        assert main(argv[: argv.index("--out")] + argv[argv.index("--out") + 2 :]) == 0, capsys.readouterr().err
    runs = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert runs == ["score-codis-output_example", "score-vqa-answers"]
    assert json.loads((tmp_path / "runs" / runs[0] / "scores.json").read_text())["task"] == "codis"
    for fmt in ("lmms-eval", "vlmevalkit"):
        assert (
            main(
                [
                    "export",
                    "--format",
                    fmt,
                    "--dataset",
                    str(built_release),
                    *(model_args() if fmt == "lmms-eval" else []),
                ]
            )
            == 0
        )
    assert sorted(p.name for p in (tmp_path / "exports").iterdir()) == [
        f"lmms-eval-{built_release.name}",
        f"vlmevalkit-{built_release.name}",
    ]


def test_score_never_replaces_a_score_of_another_task(built_release, tmp_path, capsys):
    """Issue 32 item 6: the rule is same command and same task; the other task's score stays as it was."""
    out = tmp_path / "run"
    assert main(score_argv(built_release, out)) == 0, capsys.readouterr().err
    before = snapshot(out)
    capsys.readouterr()
    vqa = vqa_predictions(built_release, tmp_path / "answers.jsonl")
    line = one_line_error(main(score_argv(built_release, out, "vqa", vqa)), capsys.readouterr().err)
    assert line == (
        f"error: {out} holds the output of `cogbench score --task codis`; refusing to replace it with --task vqa: "
        "choose another --out or empty it yourself"
    )
    assert snapshot(out) == before
    assert main(score_argv(built_release, out)) == 0  # the same command and task re-scores in place


@pytest.mark.parametrize("listed", ["../outside.txt", "images/../../outside.txt", "ABSOLUTE", "notes.txt"])
def test_a_marker_edited_to_list_a_foreign_file_deletes_nothing(listed, tmp_path):
    """record_written (issue 48 item 9m) removes only files its own patterns own, inside the folder, as written."""
    from cogbench.dataset_builders.output import OUTPUT_MARKER, WRITTEN, claim_output, record_written

    out = tmp_path / "site"
    claim_output(out, "site", ("images/*", "data/*.js"))
    (out / "images").mkdir()
    (out / "images" / "a.png").write_bytes(b"a")
    (out / "data").mkdir()
    (out / "data" / "old.js").write_bytes(b"old")
    assert record_written(out, ("images/*", "data/*.js"), ["images/a.png", "data/old.js"]) == ([], [])
    victim = out / "notes.txt" if listed == "notes.txt" else tmp_path / "outside.txt"
    victim.write_bytes(b"mine")
    marker = json.loads((out / OUTPUT_MARKER).read_text())
    listed = str(victim) if listed == "ABSOLUTE" else listed
    marker[WRITTEN][listed] = hashlib.sha256(b"mine").hexdigest()
    (out / OUTPUT_MARKER).write_text(json.dumps(marker))
    removed, kept = record_written(out, ("images/*", "data/*.js"), ["images/a.png"])
    assert removed == ["data/old.js"] and kept == [] and victim.read_bytes() == b"mine"


def test_a_hints_build_names_the_recorded_raw_folder_and_survives_an_edited_marker(tmp_path, monkeypatch):
    """Issue 48 item 9a: `build_command` names the raw folder the build marker records (quoted for the shell), the
    default one where the marker names none that is a folder here, and no edit of the marker makes it raise."""
    from cogbench.dataset_builders.output import build_command

    monkeypatch.delenv("COGBENCH_RAW_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    raw = tmp_path / "raw files"
    raw.mkdir()
    out = tmp_path / "dist"
    out.mkdir()
    for recorded, shown in [
        (str(raw), "'raw files'"),  # inside the current folder: relative, quoted
        ("/no/such/folder", "raw"),
        ("a" * 5000, "raw"),  # a name too long for the file system
        ("x\x00y", "raw"),
        (7, "raw"),
    ]:
        marker = {"builder": "cogbench", "format": 1, "files": [MARKER_FILE], "raw_dir": recorded}
        (out / MARKER_FILE).write_text(json.dumps(marker))
        assert (
            build_command(out, "--version", "3.0.0") == f"cogbench build --raw-dir {shown} --out {out} --version 3.0.0"
        )
