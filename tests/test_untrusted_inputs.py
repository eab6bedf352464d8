"""Nothing unchecked is used (issue 21, parts 2-4): builds are verified before score/eval/export/report,
run folders are recomputed before report/compare, and every bad input is one `error:` line."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REAL_RAW_DIR, needs_real_data

from cogbench.cli import main
from cogbench.dataset_builders.output import MARKER_FILE

pytestmark = needs_real_data


def codis_example() -> Path:
    return REAL_RAW_DIR / "codis" / "output_example.json"


def error_line(code: int, err: str, exit_code: int) -> str:
    assert code == exit_code, err
    assert err.count("error: ") == 1 and "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("error: ")
    return line


def rewrite_column(shard: Path, column: str, change) -> None:
    table = pq.read_table(shard)
    index = table.schema.get_field_index(column)
    values = pa.array([change(v) for v in table.column(column).to_pylist()], type=table.schema.field(column).type)
    pq.write_table(table.set_column(index, table.schema.field(column), values), shard)


@pytest.fixture
def build_copy(built_release, tmp_path) -> Path:
    copy = tmp_path / "build"
    shutil.copytree(built_release, copy)
    return copy


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


# --- part 2: builds --------------------------------------------------------------------


def test_every_command_refuses_a_build_whose_vqa_answers_were_shifted(build_copy, tmp_path, capsys, openai_server):
    assert main(score_argv(build_copy, tmp_path / "scored")) == 0
    shard = next((build_copy / "data" / "vqa").glob("*.parquet"))
    rewrite_column(shard, "answer", lambda a: (a + 1) % 4)
    capsys.readouterr()
    code = main(["validate", str(build_copy)])
    validate_out = capsys.readouterr().out
    assert code == 1 and "files.hash_mismatch" in validate_out
    predictions = tmp_path / "vqa.jsonl"
    predictions.write_text(json.dumps({"task": "vqa", "item_id": "x", "output": "A"}) + "\n")
    commands = [
        score_argv(build_copy, tmp_path / "s", "vqa", predictions),
        [
            "eval",
            "--task",
            "vqa",
            "--model",
            "openai:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--dataset",
            str(build_copy),
            "--out",
            str(tmp_path / "e"),
        ],
        ["export", "--format", "vlmevalkit", "--dataset", str(build_copy), "--out", str(tmp_path / "x")],
        ["report", str(tmp_path / "scored"), "--out", str(tmp_path / "r")],
    ]
    for argv in commands:
        line = error_line(main(argv), capsys.readouterr().err, 1)
        finding = line.split(f"{build_copy}: ", 1)[1].split(" (and ")[0].split("; the build")[0]
        assert finding in validate_out and shard.relative_to(build_copy).as_posix() in finding, argv
    assert not any((tmp_path / name).exists() for name in ("s", "e", "x", "r"))


def test_a_build_from_an_older_cogbench_or_dataset_version_says_rebuild(build_copy, tmp_path, capsys):
    marker = json.loads((build_copy / MARKER_FILE).read_text())
    (build_copy / MARKER_FILE).write_text(json.dumps({k: v for k, v in marker.items() if k != "sha256"}))
    line = error_line(main(score_argv(build_copy, tmp_path / "s")), capsys.readouterr().err, 1)
    assert "older cogbench" in line and "rebuild" in line
    # Dataset version 1.0.0: CODIS image_id carried the file's '.jpg'.
    rewrite_column(next((build_copy / "data" / "codis").glob("*.parquet")), "image_id", lambda i: f"{i}.jpg")
    line = error_line(main(score_argv(build_copy, tmp_path / "s")), capsys.readouterr().err, 1)
    assert "dataset version" in line and ".jpg" in line and "cogbench build" in line


def test_verifying_the_codis_build_takes_well_under_a_second(built_release):
    import time

    from cogbench.validation.integrity import verify_build

    started = time.perf_counter()
    verify_build(built_release)
    assert time.perf_counter() - started < 1.0


# --- part 3: run folders ---------------------------------------------------------------


@pytest.fixture
def scored(built_release, tmp_path) -> Path:
    assert main(score_argv(built_release, tmp_path / "scored")) == 0
    return tmp_path / "scored"


def edit_scores(folder: Path, change) -> None:
    scores = json.loads((folder / "scores.json").read_text())
    change(scores)
    (folder / "scores.json").write_text(json.dumps(scores))


def test_report_and_compare_refuse_an_edited_score(scored, tmp_path, capsys):
    true = json.loads((scored / "scores.json").read_text())["metrics"]["acc_p"]["overall"]
    edit_scores(scored, lambda s: s["metrics"]["acc_p"].update(overall=99.9))
    capsys.readouterr()
    for argv in (["report", str(scored), "--out", str(tmp_path / "r")], ["compare", str(scored), str(scored)]):
        line = error_line(main(argv), capsys.readouterr().err, 1)
        assert f"scores.json says 99.9, details.jsonl gives {true:.1f}: the run folder was edited" in line
        assert "metrics.acc_p.overall" in line
    assert not (tmp_path / "r").exists()


def test_duplicated_or_missing_details_lines_are_refused(scored, capsys):
    details = (scored / "details.jsonl").read_text().splitlines(keepends=True)
    (scored / "details.jsonl").write_text("".join(details + details[3:4]))
    line = error_line(main(["compare", str(scored), str(scored)]), capsys.readouterr().err, 1)
    assert f"record {len(details) + 1}: field item_id" in line and "also on line 4" in line
    (scored / "details.jsonl").write_text("".join(details[1:]))
    line = error_line(main(["compare", str(scored), str(scored)]), capsys.readouterr().err, 1)
    assert "counts.items" in line


@pytest.mark.parametrize(
    "case, expect",
    [
        ("list", "(top level)"),
        ("no task", "'task' is a required property"),
        ("no metrics", "'metrics' is a required"),
        ("string number", "metrics.acc_p.overall"),
        ("not utf-8", "not UTF-8"),
        ("unknown task", "field task"),
        ("run.json broken", "run.json: not valid JSON"),
        ("run.json list", "run.json"),
    ],
)
def test_broken_run_files_are_one_line_errors(case, expect, scored, capsys):
    path = scored / "scores.json"
    scores = json.loads(path.read_text())
    if case == "list":
        path.write_text(json.dumps([scores]))
    elif case == "no task":
        path.write_text(json.dumps({k: v for k, v in scores.items() if k != "task"}))
    elif case == "no metrics":
        path.write_text(json.dumps({k: v for k, v in scores.items() if k != "metrics"}))
    elif case == "string number":
        edit_scores(scored, lambda s: s["metrics"]["acc_p"].update(overall="99.9"))
    elif case == "not utf-8":
        path.write_bytes(path.read_bytes().replace(b'"codis"', b'"c\xffdis"', 1))
    elif case == "unknown task":
        edit_scores(scored, lambda s: s.update(task="ocr"))
    elif case == "run.json broken":
        (scored / "run.json").write_text('{"task": ')
    else:
        (scored / "run.json").write_text("[]")
    line = error_line(main(["report", str(scored), "--out", str(scored.parent / "r")]), capsys.readouterr().err, 1)
    assert expect in line


def test_compare_json_naming_a_folder(scored, tmp_path, capsys):
    line = error_line(main(["compare", str(scored), str(scored), "--json", str(tmp_path)]), capsys.readouterr().err, 2)
    assert "--json" in line


# --- part 4: predictions and options ---------------------------------------------------


def write_xlsx_halves(tmp_path: Path) -> tuple[Path, Path]:
    import pandas as pd

    whole = tmp_path / "whole.xlsx"
    pd.DataFrame({"question_id": ["q1"], "prediction": ["A"]}).to_excel(whole, index=False)
    cut = tmp_path / "cut.xlsx"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    fake = tmp_path / "fake.xlsx"
    with zipfile.ZipFile(fake, "w") as archive:
        archive.writestr("hello.txt", "not a workbook")
    return cut, fake


@pytest.mark.parametrize(
    "case, expect",
    [
        ("deep", "nested too deeply"),
        ("surrogate", "lone surrogate"),
        ("latin-1", "not UTF-8"),
        ("cut xlsx", "cannot read it"),
        ("fake xlsx", "cannot read it"),
        ("query true", "cogbench_query"),
    ],
)
def test_bad_predictions_are_one_line_errors(case, expect, built_release, tmp_path, capsys):
    path, task = tmp_path / "p.jsonl", "codis"
    if case == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif case == "surrogate":
        path.write_text('[{"id": "000", "output": {"output_1": "\\ud800", "output_2": "b"}}]')
    elif case == "latin-1":
        path.write_bytes('[{"id": "000", "output": {"output_1": "café", "output_2": "b"}}]'.encode("latin-1"))
    elif case in ("cut xlsx", "fake xlsx"):
        path, task = write_xlsx_halves(tmp_path)[case == "fake xlsx"], "vqa"
    else:
        path.write_text(
            json.dumps({"doc_id": 0, "doc": {"id": "000", "cogbench_query": True}, "filtered_resps": ["x"]}) + "\n"
        )
    harness = case in ("cut xlsx", "fake xlsx", "query true")  # formats/harness.py reports exit 1, as before
    line = error_line(
        main(score_argv(built_release, tmp_path / "s", task, path)), capsys.readouterr().err, 1 if harness else 2
    )
    assert expect in line and str(path) in line


def test_a_first_record_longer_than_64_kib_is_read_whole(built_release, tmp_path, capsys):
    pairs = json.loads(codis_example().read_text())
    pairs[0]["output"]["output_1"] += " " + "x" * 200_000
    path = tmp_path / "long.jsonl"
    path.write_text(
        "".join(
            json.dumps({"task": "codis", "item_id": p["id"], "query": q, "output": p["output"][f"output_{q}"]}) + "\n"
            for p in pairs
            for q in (1, 2)
        )
    )
    assert main(score_argv(built_release, tmp_path / "s", "codis", path)) == 0, capsys.readouterr().err


@pytest.mark.parametrize("threshold", ["2", "-1", "nan"])
def test_offline_threshold_outside_0_to_1(threshold, built_release, tmp_path, capsys):
    argv = [
        "score",
        "--task",
        "description",
        "--dataset",
        str(built_release),
        "--oracle",
        "--judge",
        "rouge",
        "--offline-threshold",
        threshold,
        "--out",
        str(tmp_path / "s"),
    ]
    if threshold == "nan":  # refused by the option's own type, before any command code runs (argparse: exit 2)
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2 and "--offline-threshold: nan is not a finite number" in capsys.readouterr().err
        return
    assert "--offline-threshold" in error_line(main(argv), capsys.readouterr().err, 2)


# --- the judge cache answers only for the same judge ------------------------------------


def test_judge_cache_is_keyed_by_the_endpoint(built_release, tmp_path, openai_server, monkeypatch, capsys):
    from openai_server import Reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    right = openai_server(lambda request: Reply(text="right"))
    wrong = openai_server(lambda request: Reply(text="wrong"))
    out = tmp_path / "s"
    argv = [*score_argv(built_release, out), "--judge", "openai:judge", "--judge-base-url"]
    assert main([*argv, right.base_url]) == 0
    first = json.loads((out / "scores.json").read_text())
    assert main([*argv, right.base_url]) == 0
    again = json.loads((out / "scores.json").read_text())
    assert again["judge"]["cache_hits"] == again["judge"]["prompts"] and again["judge"]["calls"] == 0
    assert main([*argv, wrong.base_url]) == 0
    other = json.loads((out / "scores.json").read_text())
    assert other["judge"]["cache_hits"] == 0 and other["judge"]["calls"] > 0 and wrong.chat_requests
    assert other["metrics"]["acc_q"]["overall"] == 0.0 and first["metrics"]["acc_q"]["overall"] == 100.0
    assert other["judge"]["cache_key"] != first["judge"]["cache_key"] == again["judge"]["cache_key"]
