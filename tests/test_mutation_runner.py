"""The mutation-testing runner (tests/mutation/run.py): what it counts, and that it never touches the checkout.

The counts are checked on cosmic-ray's own WorkItem/WorkResult objects; the end-to-end run mutates a
real module of the scoring core in its copies and must leave the working tree's file as it was.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path

import pytest
from cosmic_ray.work_item import MutationSpec, WorkerOutcome, WorkItem, WorkResult
from cosmic_ray.work_item import TestOutcome as Outcome  # (a Test* name would be collected by pytest)

RUNNER_DIR = Path(__file__).resolve().parent / "mutation"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, RUNNER_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


run = _load("run")
mutation_report = sys.modules["mutation_report"]


def test_only_annotations_that_python_never_evaluates_are_spanned():
    deferred = "from __future__ import annotations\n\ndef f(x: int | None, *, y: list[str] = ()) -> dict | None:\n    z: int = 1\n    return x | 2\n"
    spans = run.in_annotation(deferred)
    assert ((3, 9), (3, 19)) in spans  # int | None
    assert ((3, 27), (3, 36)) in spans  # list[str]
    assert ((3, 46), (3, 57)) in spans  # dict | None
    assert ((4, 7), (4, 10)) in spans  # z: int
    assert not any(start <= (5, 11) <= end for start, end in spans)  # x | 2 in the body is code
    assert run.in_annotation(deferred.replace("from __future__ import annotations\n", "")) == []


def _completed(line: int, col: int, worker: WorkerOutcome, test: Outcome | None, output: str = ""):
    mutation = MutationSpec(
        "m.py",
        "core/ReplaceComparisonOperator_Gt_GtE",
        line * 100 + col,
        (line, col),
        (line, col + 1),
        definition_name="f",
    )
    return WorkItem.single(f"job-{line}-{col}", mutation), WorkResult(worker, output, test, "-a\n+b\n")


def test_summary_counts_equivalents_apart_and_flags_a_killed_or_stale_entry(tmp_path):
    (tmp_path / "m.py").write_text("if a > 0 and b > 0:\n    pass\nx = 1 > 2\ny = 3 > 4\nz: int\n")
    normal = WorkerOutcome.NORMAL
    completed = [
        _completed(1, 5, normal, Outcome.SURVIVED),  # a > 0: named below (nth 0)
        _completed(1, 15, normal, Outcome.SURVIVED),  # b > 0: same line, not named
        _completed(3, 6, normal, Outcome.KILLED),  # named, but killed
        _completed(4, 6, normal, Outcome.KILLED),
        _completed(5, 3, WorkerOutcome.SKIPPED, None, run.ANNOTATION),
    ]
    equivalent = mutation_report.Equivalent
    op = "core/ReplaceComparisonOperator_Gt_GtE"
    named = [
        equivalent("m.py", op, "if a > 0 and b > 0:", "a is never 0", nth=0),
        equivalent("m.py", op, "x = 1 > 2", "claimed"),
        equivalent("m.py", op, "w = 5 > 6", "the code changed"),
    ]
    summary = mutation_report.summarize(completed, tmp_path, named, fail_under=60.0)
    # run 4; equivalent 1; judged 3 (killed 2 + survived 1): 66.7%, but a named mutant was killed -> not passed
    assert summary.text.startswith(
        "mutation score: 2 killed of 3 non-equivalent mutants run = 66.7% (target 60%); "
        "1 named equivalent, 1 in annotations (not run)"
    )
    assert "survivors not named as equivalent (1):\n  m.py:1 core/ReplaceComparisonOperator_Gt_GtE in f" in summary.text
    assert "named as equivalent but killed (1)" in summary.text and "m.py:3" in summary.text
    assert "matching no mutant (1)" in summary.text and "w = 5 > 6" in summary.text
    assert not summary.passed
    assert mutation_report.summarize(completed[:2] + completed[3:], tmp_path, named[:1], 50.0).passed
    assert not mutation_report.summarize(completed[:2] + completed[3:], tmp_path, named[:1], 51.0).passed


def test_an_equivalent_outside_a_sample_is_not_sampled_not_stale(tmp_path):
    """A sampled run that did not draw a named mutant says so; only an entry matching no mutant at all is stale."""
    (tmp_path / "m.py").write_text("x = 1 > 2\ny = 3 > 4\n")
    completed = [
        _completed(1, 6, WorkerOutcome.NORMAL, Outcome.KILLED),
        _completed(2, 6, WorkerOutcome.SKIPPED, None, run.NOT_SAMPLED),
    ]
    op = "core/ReplaceComparisonOperator_Gt_GtE"
    named = [
        mutation_report.Equivalent("m.py", op, "y = 3 > 4", "not drawn"),
        mutation_report.Equivalent("m.py", op, "w = 5 > 6", "the code changed"),
    ]
    text = mutation_report.summarize(completed, tmp_path, named, fail_under=100.0).text
    assert "named as equivalent, not sampled (1): their mutants were outside the random sample" in text
    assert "matching no mutant (1)" in text and "w = 5 > 6" in text and "y = 3 > 4" not in text


def test_an_entry_without_a_reason_is_refused(tmp_path):
    listed = tmp_path / "equivalent.toml"
    listed.write_text('[[equivalent]]\nfile = "m.py"\noperator = "core/AddNot"\nline = "x"\nreason = " "\n')
    with pytest.raises(SystemExit, match="gives no reason"):
        mutation_report.load_equivalents(listed)


def test_a_foreign_non_empty_out_folder_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit, match="not empty and was not made by this script"):
        run.main(["--module", "aggregate", "--out", str(tmp_path)])
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.slow
def test_a_sampled_run_mutates_copies_only_and_resumes(tmp_path):
    module = run.REPO_ROOT / "reference_eval" / "metrics" / "aggregate.py"
    before = hashlib.sha256(module.read_bytes()).hexdigest()
    out = tmp_path / "run"
    assert run.main(["--module", "aggregate", "--sample", "3", "--workers", "2", "--out", str(out)]) == 0
    assert hashlib.sha256(module.read_bytes()).hexdigest() == before
    report = (out / "report.txt").read_text()
    assert "mutation score: 3 killed of 3 non-equivalent mutants run = 100.0%" in report
    assert re.search(r"a SAMPLE: 3 of \d+ runnable mutants", report)
    assert run.main(["--module", "aggregate", "--sample", "3", "--workers", "1", "--out", str(out)]) == 0
    assert (out / "report.txt").read_text().splitlines()[:4] == report.splitlines()[:4]
    with pytest.raises(SystemExit, match="other settings"):
        run.main(["--module", "aggregate", "--sample", "4", "--out", str(out)])


def test_an_out_that_is_a_file_is_refused(tmp_path):
    out = tmp_path / "notes.txt"
    out.write_text("mine")
    with pytest.raises(SystemExit, match="exists and is not a folder"):
        run.main(["--module", "aggregate", "--out", str(out)])
    assert out.read_text() == "mine"


def test_an_out_with_a_damaged_marker_is_refused(tmp_path):
    (tmp_path / run.MARKER).write_text('{"tool": "cogbench mutation ru')
    with pytest.raises(SystemExit, match="damaged .*pass another --out"):
        run.main(["--module", "aggregate", "--out", str(tmp_path)])
    assert (tmp_path / run.MARKER).read_text() == '{"tool": "cogbench mutation ru'
