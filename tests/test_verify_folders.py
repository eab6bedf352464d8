"""``verify`` on one real scored run folder: how it is read (``run_folder_tasks``), dispatched
(``verify``) and checked whole (``check_task``: the report number by number, the build's fields).

`cogbench score` on the build's VQA samples, once (~5 s). The mutation run of ``verifying/verify.py``
runs this file second, after tests/test_verify_units.py, so only the mutants that file misses pay
for the run; the end-to-end files (tests/test_verify*.py) come after.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cogbench.reference_eval.verifying.verify import RESULTS_DIR, check_task, run_folder_tasks, verify
from cogbench.reference_eval.verifying.verify_result import Difference, Verification

READ_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")  # a number as a reader of report.md sees one


@pytest.fixture(scope="module")
def scored_run(built_release, tmp_path_factory) -> Path:
    """A VQA run on the build's samples: every other answer right by both extractors, the rest wrong."""
    from cogbench.dataset_builders.load import load_config
    from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

    lines = []
    for index, row in enumerate(load_config(str(built_release), "vqa").remove_columns("image").to_list()):
        answer, wrong = "ABCD"[row["answer"]], "ABCD"[(row["answer"] + 1) % 4]
        record = {k: row[k] for k in ("question", "choice_a", "choice_b", "choice_c", "choice_d")}
        response = f"{answer}. {row['choice_' + answer.lower()]}" if index % 2 else wrong
        record.update(img_id=row["image_id"], answer=answer, response=response)
        lines.append(json.dumps(record))
    root = tmp_path_factory.mktemp("scored")
    (root / "vqa.jsonl").write_text("\n".join(lines) + "\n")
    predictions, out = str(root / "vqa.jsonl"), str(root / "run")
    run_scoring(ScoreOptions(task="vqa", dataset=str(built_release), predictions=predictions, out=out))
    return root / "run"


def without_report(run: Path) -> Verification:
    (data,) = run_folder_tasks(run).values()
    data.report = None
    result = Verification()
    check_task(data, result)
    return result


def test_a_run_folder_is_read_whole_and_its_report_counts_number_by_number(scored_run, tmp_path):
    tasks = run_folder_tasks(scored_run)
    assert list(tasks) == ["vqa"]
    data = tasks["vqa"]
    report = (scored_run / "report.md").read_text()
    assert (data.where, data.scores_path, data.report, data.rows, data.run_dir) == (
        str(scored_run / "details.jsonl"),
        scored_run / "scores.json",
        report,
        None,
        None,
    )
    assert data.scores == json.loads((scored_run / "scores.json").read_text())
    assert data.details == [json.loads(line) for line in (scored_run / "details.jsonl").read_text().splitlines()]
    result = verify(str(scored_run))
    assert result.differences == []
    assert "how the answers were generated (no eval run folder: run.json absent)" in result.stated
    assert result.equal == without_report(scored_run).equal + len(READ_NUMBER.findall(report))
    # The same run with a data/ folder beside scores.json is still a run folder, not a details dataset.
    copy = shutil.copytree(scored_run, tmp_path / "run")
    (copy / "data").mkdir()
    assert verify(str(copy)).equal == result.equal
    (copy / "report.md").unlink()
    (data,) = run_folder_tasks(copy).values()
    assert data.report is None and verify(str(copy)).equal == without_report(scored_run).equal


@pytest.mark.parametrize(
    "folder, beside, is_eval_run",
    [
        ("score", "run.json", True),
        ("score", "predictions.jsonl", True),
        ("score", "notes.txt", False),
        ("scores", "run.json", False),
        ("a", "run.json", False),
    ],
)
def test_an_eval_runs_score_folder_is_read_with_its_run_folder(scored_run, tmp_path, folder, beside, is_eval_run):
    shutil.copytree(scored_run, tmp_path / "eval" / folder)
    (tmp_path / "eval" / beside).write_text("{}\n")
    (data,) = run_folder_tasks(tmp_path / "eval" / folder).values()
    assert data.run_dir == (tmp_path / "eval" if is_eval_run else None)


def test_with_the_build_its_fields_are_re_derived_not_only_stated(scored_run, built_release):
    (data,) = run_folder_tasks(scored_run).values()
    stated, built = Verification(), Verification()
    check_task(data, stated)
    check_task(data, built, str(built_release))
    assert stated.differences == built.differences == []
    assert [s for s in stated.stated if "--dataset BUILD" in s] == [
        "item ids, image ids, categories and reference answers (give --dataset BUILD to check them)"
    ]
    assert [s for s in built.stated if "--dataset BUILD" in s] == [] and built.equal > stated.equal


def edit_first_number(path: Path, by: float) -> tuple[int, str, str]:
    """(its position among all numbers, the number as written, as edited): the first decimal in the file."""
    text = path.read_text()
    spot = re.search(r"\d+\.\d+", text)
    edited = f"{float(spot.group()) + by:.1f}"
    path.write_text(text[: spot.start()] + edited + text[spot.end() :])
    return len(READ_NUMBER.findall(text[: spot.start()])) + 1, spot.group(), edited


def test_a_report_is_compared_number_by_number_unless_this_tasks_scores_differ(scored_run, tmp_path):
    run = shutil.copytree(scored_run, tmp_path / "run")
    position, written, edited = edit_first_number(run / "report.md", 1.0)
    # An earlier task's 300 differences (past CPython's cached small ints) do not count as this task's.
    earlier = [Difference("earlier task", "1", "2") for _ in range(300)]
    result = Verification(differences=list(earlier))
    (data,) = run_folder_tasks(run).values()
    check_task(data, result)
    assert result.differences[:300] == earlier
    assert [d.line() for d in result.differences[300:]] == [
        f"{run / 'report.md'}: number {position}: says {edited}, the details give {written}"
    ]
    # scores.json edited too: the report, rendered from it, is not blamed number by number.
    scores = json.loads((run / "scores.json").read_text())
    scores["metrics"]["accuracy"]["overall"] += 1.0
    (run / "scores.json").write_text(json.dumps(scores))
    lines = [d.line() for d in verify(str(run)).differences]
    assert lines[-1] == (
        f"{run / 'report.md'}: not compared number by number: it is rendered from scores.json, which differs "
        "from the details (above); once that is put right, run verify again"
    )
    assert [line for line in lines if "report.md" in line] == lines[-1:]
    assert any(line.startswith(f"{run / 'scores.json'}: metrics.accuracy.overall: says ") for line in lines)


def test_a_run_folder_whose_name_sorts_before_eval_results_is_still_a_run_folder(scored_run, tmp_path):
    """Only a folder named exactly `.eval_results` is read as results files: `.a-run` sorts before it and is a
    run folder, re-derived as the same run under its own name."""
    renamed = shutil.copytree(scored_run, tmp_path / ".a-run")
    assert renamed.name < RESULTS_DIR  # the mutant `name <= RESULTS_DIR` would read it as results files
    found, expected = verify(str(renamed)), verify(str(scored_run))
    assert found.differences == [] and found.equal == expected.equal > 0
