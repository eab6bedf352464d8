"""Tracebacks and bounds (issue 48, item 7): files of odd shapes are one `error:` line, exit 2, and what
others named is printed short.

Each case here was a traceback or ran unbounded: `verify RECORD.json` on EEE records of other shapes,
`diff --reasons` and `report --certificate` files nested too deeply, `eval` resuming a folder whose
run.json is nested too deeply or a list, `certify --resamples` without an upper bound, a verdict
archive's verdict 7 read as a verdict, reasons for items the diff does not change dropped without a
word, and 2 MB model names and 5 MB item ids printed whole.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_eee_records import record_files, written  # noqa: F401  (the module's fixture)
from test_hub_results import codis_run  # noqa: F401  (the module's fixture)
from test_judge_certify import simulated_judges

from cogbench.cli import main
from cogbench.option_types import MAX_RESAMPLES, resample_count
from cogbench.reference_eval.certifying.verdict_archive import COLUMNS, JudgedAnswers, write_archive

from openai_server import OpenAIServer, Reply

DEEP = "[" * 100_000 + "]" * 100_000  # far deeper than Python's recursion limit


def one_line(code: int, capsys, expect: str, exit_code: int = 2) -> str:
    err = capsys.readouterr().err
    assert code == exit_code, err[:500]
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err[:500]
    assert expect in err, err[:500]
    assert len(err) < 1200, err[:500]
    return err


# --- verify RECORD.json ----------------------------------------------------------------


def _edit_aggregate(change):
    def edit(aggregate: dict, rows: list[dict]) -> None:
        change(aggregate)

    return edit


def _edit_row(change):
    def edit(aggregate: dict, rows: list[dict]) -> None:
        change(rows[0])

    return edit


RECORD_CASES = {
    "evaluation_results of other types": (
        _edit_aggregate(lambda a: a.update(evaluation_results=[1, "x"])),
        "is not of type 'object' (not an EEE record as cogbench writes one)",
    ),
    "score_details a list": (
        _edit_aggregate(lambda a: a["evaluation_results"][0].update(score_details=[1])),
        "field evaluation_results.0.score_details",
    ),
    "uncertainty a list": (
        _edit_aggregate(lambda a: a["evaluation_results"][0]["score_details"].update(uncertainty=[])),
        "field evaluation_results.0.score_details.uncertainty",
    ),
    "model_info a list": (_edit_aggregate(lambda a: a.update(model_info=["me/model"])), "field model_info"),
    "detailed_evaluation_results a string": (
        _edit_aggregate(lambda a: a.update(detailed_evaluation_results="rows.jsonl")),
        "field detailed_evaluation_results",
    ),
    "evaluation a string": (_edit_row(lambda r: r.update(evaluation="right")), "line 1: field evaluation"),
    "metadata a list": (_edit_row(lambda r: r.update(metadata=[])), "line 1: field metadata"),
    "total a string zero": (_edit_row(lambda r: r["metadata"].update(total="0")), "total '0' are not counts"),
    "total zero": (_edit_row(lambda r: r["metadata"].update(total=0)), "total 0 are not counts"),
    "hits not a number": (_edit_row(lambda r: r["metadata"].update(hits="x")), "hits 'x' and total"),
    "total infinite": (_edit_row(lambda r: r["metadata"].update(total="inf")), "total 'inf' are not counts"),
}


@pytest.mark.parametrize("case", list(RECORD_CASES))
def test_verify_refuses_a_record_of_another_shape_in_one_line(case, written, tmp_path, capsys):  # noqa: F811
    aggregate_path, samples_path = record_files(written)
    aggregate = json.loads(aggregate_path.read_text())
    rows = [json.loads(line) for line in samples_path.read_text().split("\n") if line]
    edit, expect = RECORD_CASES[case]
    edit(aggregate, rows)
    (tmp_path / aggregate_path.name).write_text(json.dumps(aggregate))
    (tmp_path / samples_path.name).write_text("".join(json.dumps(row) + "\n" for row in rows))
    capsys.readouterr()
    one_line(main(["verify", str(tmp_path / aggregate_path.name)]), capsys, expect)


@pytest.mark.parametrize("where", ["aggregate", "row"])
def test_verify_refuses_a_record_nested_too_deeply(where, written, tmp_path, capsys):  # noqa: F811
    aggregate_path, samples_path = record_files(written)
    shutil.copy(aggregate_path, tmp_path)
    shutil.copy(samples_path, tmp_path)
    if where == "aggregate":
        (tmp_path / aggregate_path.name).write_text('{"schema_version": "0.3.0", "evaluation_results": ' + DEEP + "}")
    else:
        lines = samples_path.read_text().split("\n")
        (tmp_path / samples_path.name).write_text("\n".join(['{"metadata": ' + DEEP + "}", *lines[1:]]))
    capsys.readouterr()
    err = one_line(main(["verify", str(tmp_path / aggregate_path.name)]), capsys, "nested too deeply")
    assert ("line 1" in err) == (where == "row")


# --- files given to diff, report and eval ----------------------------------------------


def test_reasons_nested_too_deeply_are_one_line(built_release, tmp_path, capsys):
    notes = tmp_path / "notes.yaml"
    notes.write_text("'000': " + "[" * 5000 + "]" * 5000 + "\n")
    argv = ["diff", str(built_release), str(built_release), "--errata", str(tmp_path / "e.json")]
    code = main([*argv, "--reasons", str(notes)])
    one_line(code, capsys, f"--reasons {notes}: not a readable JSON or YAML file (nested too deeply)")


@pytest.mark.parametrize(
    ("notes", "named"),
    [("'999': a typo fixed\n", "'999'"), ("010: a typo fixed\n", "'8'")],  # YAML reads 010 as the number 8
    ids=["no-such-item", "unquoted-octal-id"],
)
def test_reasons_for_items_the_diff_does_not_change_are_refused(notes, named, built_release, tmp_path, capsys):
    """They were dropped without a word; the errata file is not written."""
    path = tmp_path / "notes.yaml"
    path.write_text(notes)
    errata = tmp_path / "errata.json"
    code = main(["diff", str(built_release), str(built_release), "--errata", str(errata), "--reasons", str(path)])
    err = one_line(code, capsys, "1 reason(s) for items this diff does not change")
    assert named in err and "(it changes: none)" in err
    assert not errata.exists()


def test_a_certificate_nested_too_deeply_is_one_line(tmp_path, capsys):
    certificate = tmp_path / "certificate.json"
    certificate.write_text(DEEP)
    code = main(["report", str(tmp_path), "--out", str(tmp_path / "report"), "--certificate", str(certificate)])
    one_line(code, capsys, f"--certificate {certificate}: not usable JSON (nested too deeply)")


@pytest.fixture(scope="module")
def eval_run(codis_run, tmp_path_factory):  # noqa: F811
    """(argv of a one-pair `openai:` eval on the real CODIS build, its folder, the server)."""
    out = tmp_path_factory.mktemp("resume") / "run"
    with OpenAIServer(lambda request: Reply(text="I cannot tell.")) as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "x")
        argv = ["eval", "--task", "codis", "--dataset", str(codis_run[0]), "--model", "openai:vlm"]
        argv += ["--base-url", server.base_url, "--out", str(out), "--limit", "1", "--no-score"]
        assert main(argv) == 0
        yield argv, out, server


@pytest.mark.parametrize(
    ("run_json", "expect"),
    [
        (DEEP.encode(), "not usable JSON (nested too deeply)"),
        (b"[1, 2]", "not a run record (a JSON object"),
        (b'"run"', "not a run record (a JSON object"),
        (b'{"task": ', "not valid JSON"),
        (b'{"task": "c\xffdis"}', "not UTF-8 text"),
    ],
    ids=["nested-too-deeply", "a-list", "a-string", "broken", "not-utf-8"],
)
def test_resuming_a_run_whose_run_json_is_not_a_record_is_one_line(run_json, expect, eval_run, capsys, monkeypatch):
    argv, out, server = eval_run
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    before = (out / "run.json").read_bytes()
    asked = len(server.chat_requests)
    try:
        (out / "run.json").write_bytes(run_json)
        capsys.readouterr()
        err = one_line(main(argv), capsys, expect)
    finally:
        (out / "run.json").write_bytes(before)
    assert f"{out / 'run.json'}" in err and "remove it or use another --out" in err
    assert len(server.chat_requests) == asked


# --- certify: resamples, verdicts, what others named -----------------------------------


def test_resamples_have_an_upper_bound():
    assert resample_count(str(MAX_RESAMPLES)) == MAX_RESAMPLES == 100_000
    for bad in (str(MAX_RESAMPLES + 1), "0", "10" * 40):
        with pytest.raises(argparse.ArgumentTypeError, match="a positive integer up to 100,000"):
            resample_count(bad)


@pytest.mark.parametrize(
    "argv",
    [
        ["judges", "certify", "--reference", "r", "--candidate", "c", "--resamples"],
        ["compare", "a", "b", "--resamples"],
        ["compare", "a", "b", "--permutations"],
        ["report", "a", "--site", "s", "--permutations"],
        ["score", "--task", "codis", "--dataset", "d", "--out", "o", "--resamples"],
    ],
    ids=["certify", "compare", "compare-permutations", "site-permutations", "score"],
)
def test_every_resampling_option_refuses_more_than_the_bound(argv, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "1000000000000"])
    assert stopped.value.code == 2
    assert "1000000000000 is not a positive integer up to 100,000" in capsys.readouterr().err


def archive(path: Path, rows: dict[str, list]) -> Path:
    schema = pa.schema([(c, pa.int64() if c == "verdict" else pa.string()) for c in COLUMNS])
    pq.write_table(pa.table(rows, schema=schema), path)
    return path


def row(number: int, **values) -> dict[str, object]:
    base = {"task": "codis", "model": "m", "answers_sha256": "a" * 64, "item_id": f"{number:03d}", "query": "1"}
    base |= {"image_id": "i", "category": "Attributes", "verdict": 1, "judge": "official"}
    return base | values


@pytest.mark.parametrize("verdict", [7, 3, -1])
def test_a_verdict_outside_0_1_2_is_refused_naming_the_row(verdict, tmp_path, capsys):
    rows = [row(1), row(2), row(3, verdict=verdict)]
    path = archive(tmp_path / "ref.parquet", {c: [r[c] for r in rows] for c in COLUMNS})
    code = main(["judges", "certify", "--reference", str(path), "--candidate", str(path)])
    one_line(code, capsys, f"{path}: record 3: field verdict: {verdict} is not a verdict (0, 1, 2 or null)")


NAME = "M" * 2_000_000 + "\n\x1b[31merror: forged"
ITEM = "I" * 5_000_000


@pytest.mark.parametrize(
    ("reference", "candidate", "expect"),
    [
        ([row(1, model=NAME), row(2, model="other")], [row(1, judge="c")], "is 'MMMMM"),
        ([row(1, item_id=ITEM), row(2, item_id=ITEM)], [row(1, judge="c")], "is given twice"),
        ([row(1, task=NAME)], [row(1, judge="c")], "expected one of codis, description"),
        ([row(1)], [row(1, judge="c"), row(2, judge=NAME)], "one candidate judge at a time"),
        ([row(1)], [row(1, judge="c", model=NAME, answers_sha256="b")], "no reference verdicts"),
    ],
    ids=["model-differs", "item-twice", "task-unknown", "two-candidate-judges", "unpaired-model"],
)
def test_archive_errors_name_long_values_short(reference, candidate, expect, tmp_path, capsys):
    path = archive(tmp_path / "ref.parquet", {c: [r[c] for r in reference] for c in COLUMNS})
    cand = archive(tmp_path / "cand.parquet", {c: [r[c] for r in candidate] for c in COLUMNS})
    code = main(["judges", "certify", "--reference", str(path), "--candidate", str(cand)])
    err = one_line(code, capsys, expect)
    assert "\x1b" not in err and "characters)" in err


def test_a_certificate_of_2_mb_model_names_prints_them_short(tmp_path, capsys):
    refs, cands = simulated_judges(5, [0.5, 0.6, 0.7], 0.02, 0.02, images=40)
    named = []
    for judged in (*refs, *cands):
        model = NAME + judged.model  # three models, each named 2 MB
        units = dict(judged.units)
        key = next(iter(units))
        units[(ITEM, key[1], key[2])] = units.pop(key)  # one 5 MB item id
        named.append(JudgedAnswers(judged.task, model, judged.answers, judged.judge * 50_000, judged.where, units))
    write_archive(named[:3], tmp_path / "ref.parquet")
    write_archive(named[3:], tmp_path / "cand.parquet")
    argv = ["judges", "certify", "--reference", str(tmp_path / "ref.parquet"), "--candidate"]
    code = main([*argv, str(tmp_path / "cand.parquet"), "--resamples", "50", "--card", str(tmp_path / "card.md")])
    printed = capsys.readouterr()
    assert code in (0, 1), printed.err[:300]
    lines = [*printed.out.split("\n"), *printed.err.split("\n"), *(tmp_path / "card.md").read_text().split("\n")]
    assert max(len(line) for line in lines) < 1000 and not any("\x1b" in line for line in lines)
    assert f"({len(NAME) + 2:,} characters)" in printed.out  # a model's name, cut and counted
