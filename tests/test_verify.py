"""``cogbench verify``: equal on a real run, and any single edit of a verdict, a parsed answer or a
number in details.jsonl, scores.json, report.md or an .eval_results file is found (Hypothesis).

The run is test_hub_results' real CODIS run (rule judge, hand-worked Acc_p 273/353, Acc_q 576/706).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hub_results import codis_run  # noqa: F401 (the module-scoped run fixture)

from cogbench.cli import main
from cogbench.reference_eval.recording.run_reader import RunNotVerified
from cogbench.reference_eval.verifying.verify import verify

from shared_files import codis_example

NUMBER = re.compile(r"-?\d+\.\d+")


@pytest.fixture(scope="module")
def published(codis_run, tmp_path_factory):  # noqa: F811
    """(run folder, dry-run output with .eval_results/ and details/)."""
    out = tmp_path_factory.mktemp("published") / "out"
    args = ["publish-results", str(codis_run[1]), "--model-repo", "me/m", "--details-repo", "me/d"]
    assert main([*args, "--dry-run", "--out", str(out)]) == 0
    return codis_run[1], out


def test_verify_says_equal_on_the_real_run_its_details_and_its_results(published, capsys):
    run, out = published
    assert main(["verify", str(run)]) == 0
    first = capsys.readouterr().out.splitlines()
    # Two sections: what was re-derived, and what could only be read as stated (never counted as verified).
    assert re.fullmatch(r"re-derived: \d+ numbers and fields equal .*", first[0])
    assert first[1].startswith("stated, not re-derivable: ") and "give --dataset BUILD" in first[1]
    assert re.fullmatch(r"verified: \d+ numbers and fields re-derived, \d+ stated field\(s\) listed above", first[2])
    assert main(["verify", str(out / "details")]) == 0
    assert main(["verify", str(out / ".eval_results" / "codis_acc_p.yaml"), "--details", str(out / "details")]) == 0
    assert capsys.readouterr().out.count("verified: ") == 2


def test_a_flipped_verdict_is_named_with_its_item(published, tmp_path, capsys):
    run = shutil.copytree(published[0], tmp_path / "run")
    lines = (run / "details.jsonl").read_text().splitlines()
    detail = json.loads(lines[0])  # pair 000: swapped, both queries wrong
    detail["queries"][0]["right"] = True
    lines[0] = json.dumps(detail)
    (run / "details.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["verify", str(run)]) == 1
    printed = capsys.readouterr().out
    assert "details.jsonl: item 000: query 1: verdict right=True, the rule judge says False\n" in printed
    # By hand: 576/706 stated, 577/706 = 81.7280 from the edited details.
    assert "metrics.acc_q.overall: says 81.5864, the details give 81.7280 (items: 000)" in printed
    assert printed.splitlines()[-1].startswith("NOT verified: ")


def _edit_details(folder: Path, data, kind: str) -> str:
    path = folder / "details.jsonl"
    lines = path.read_text().splitlines()
    index = data.draw(st.integers(0, len(lines) - 1))
    detail = json.loads(lines[index])
    query = detail["queries"][data.draw(st.integers(0, 1))]
    if kind == "verdict":
        query["right"] = not query["right"]
    elif kind == "rule verdict":
        query["rule_right"] = not query["rule_right"]
    elif kind == "parsed answer":
        query["final_answer"] = query["final_answer"] + data.draw(st.text("xyz ", min_size=1, max_size=3))
    else:
        detail["outputs_differ"] = not detail["outputs_differ"]
    lines[index] = json.dumps(detail)
    path.write_text("\n".join(lines) + "\n")
    return detail["item_id"]


def _edit_score(path: Path, data) -> None:
    """One score value of scores.json: a metric's overall or category value, or an interval bound."""
    scores = json.loads(path.read_text())
    metric = scores["metrics"][data.draw(st.sampled_from(sorted(scores["metrics"])))]
    spots = [(metric, "overall")] + [(metric["per_category"], c) for c in metric["per_category"]]
    spots += [(metric["interval"]["overall"], i) for i in (0, 1)]
    spots += [(bounds, i) for bounds in metric["interval"]["per_category"].values() for i in (0, 1)]
    holder, key = data.draw(st.sampled_from(spots))
    holder[key] = round(holder[key] + data.draw(st.sampled_from([-3.0, -0.5, -0.05, 0.05, 0.5])), 4)
    path.write_text(json.dumps(scores, indent=2))


def _edit_number(path: Path, data) -> None:
    text = path.read_text()
    spots = list(NUMBER.finditer(text))
    spot = data.draw(st.sampled_from(spots))
    delta = data.draw(st.sampled_from([-3.0, -0.5, -0.1, 0.1, 0.5, 3.0]))
    new = f"{float(spot.group()) + delta:.{len(spot.group().split('.')[1])}f}"
    path.write_text(text[: spot.start()] + new + text[spot.end() :])


EDITS = ["verdict", "rule verdict", "parsed answer", "outputs_differ", "scores.json", "report.md", "result value"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), kind=st.sampled_from(EDITS))
def test_any_single_edit_is_detected(published, data, kind):
    with tempfile.TemporaryDirectory() as tmp:
        run = shutil.copytree(published[0], Path(tmp) / "run")
        out = shutil.copytree(published[1], Path(tmp) / "out")
        results = out / ".eval_results" / "codis_acc_q.yaml"
        if kind == "scores.json":
            _edit_score(run / "scores.json", data)
        elif kind == "report.md":
            _edit_number(run / "report.md", data)
        elif kind == "result value":
            entries = yaml.safe_load(results.read_text())
            entries[0]["value"] += data.draw(st.sampled_from([-1.0, -0.01, 0.01, 1.0]))
            results.write_text(yaml.safe_dump(entries))
        else:
            item = _edit_details(run, data, kind)
        try:
            found = verify(str(results), str(out / "details")) if kind == "result value" else verify(str(run))
        except RunNotVerified:  # an edit that breaks the file's schema (a value over 100): refused outright
            assert kind == "scores.json"
            return
        assert found.differences, kind
        if kind in ("verdict", "rule verdict", "parsed answer", "outputs_differ"):
            assert any(item in difference.items for difference in found.differences)


@pytest.fixture(scope="module")
def vqa_run(built_release, tmp_path_factory):
    """A VQA run on the real samples: 8 answers 'X. text', 8 'The answer is X', the rest wrong letters."""
    from cogbench.dataset_builders.load import load_config
    from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

    rows = load_config(str(built_release), "vqa").remove_columns("image").to_list()
    lines = []
    for index, row in enumerate(rows):
        answer, wrong = "ABCD"[row["answer"]], "ABCD"[(row["answer"] + 1) % 4]
        response = f"{answer}. {row['choice_' + answer.lower()]}" if index < 8 else f"The answer is {answer}"
        record = {k: row[k] for k in ("question", "choice_a", "choice_b", "choice_c", "choice_d")}
        record.update(img_id=row["image_id"], answer=answer, response=response if index < 16 else wrong)
        lines.append(json.dumps(record))
    root = tmp_path_factory.mktemp("vqa")
    (root / "vqa.jsonl").write_text("\n".join(lines) + "\n")
    run_scoring(
        ScoreOptions(task="vqa", dataset=str(built_release), predictions=str(root / "vqa.jsonl"), out=str(root / "run"))
    )
    return root / "run"


@pytest.mark.parametrize("field", ["correct", "correct_official", "extracted_official"])
def test_vqa_edits_are_named_with_their_item(vqa_run, tmp_path, field):
    assert not verify(str(vqa_run)).differences
    run = shutil.copytree(vqa_run, tmp_path / "run")
    lines = (run / "details.jsonl").read_text().splitlines()
    detail = json.loads(lines[3])  # 'X. text': both extractors right
    detail[field] = (
        "D"
        if field == "extracted_official" and detail[field] != "D"
        else ("C" if field == "extracted_official" else not detail[field])
    )
    lines[3] = json.dumps(detail)
    (run / "details.jsonl").write_text("\n".join(lines) + "\n")
    found = verify(str(run))
    assert any(detail["item_id"] in difference.items for difference in found.differences)


def test_a_scores_json_edit_is_not_blamed_on_the_untouched_report(vqa_run, tmp_path):
    """report.md is rendered from scores.json: when only scores.json was edited, verify names scores.json and
    says report.md was not compared number by number, rather than listing report.md's (right) numbers as wrong."""
    run = shutil.copytree(vqa_run, tmp_path / "run")
    scores = json.loads((run / "scores.json").read_text())
    scores["metrics"]["accuracy"]["overall"] += 1.0
    (run / "scores.json").write_text(json.dumps(scores))
    lines = [difference.line() for difference in verify(str(run)).differences]
    assert any("scores.json: metrics.accuracy.overall" in line for line in lines), lines
    report = [line for line in lines if "report.md" in line]
    assert len(report) == 1 and "not compared number by number" in report[0], report


def test_a_details_datasets_edited_report_is_named(published, tmp_path, capsys):
    """The details dataset's runs/<task>/report.md is compared number by number too."""
    details = shutil.copytree(published[1] / "details", tmp_path / "details")
    report = details / "runs" / "codis" / "report.md"
    text = report.read_text()
    spot = NUMBER.search(text)
    report.write_text(text[: spot.start()] + f"{float(spot.group()) + 1:.4f}" + text[spot.end() :])
    assert main(["verify", str(details)]) == 1
    printed = capsys.readouterr().out
    assert f"{report}: number " in printed and printed.splitlines()[-1].startswith("NOT verified: ")


def test_only_a_score_folder_beside_run_json_is_read_as_an_eval_run(published, tmp_path, capsys):
    """A scored folder of another name is a score run, even with a run.json beside it."""
    folder = shutil.copytree(published[0], tmp_path / "tally")
    (tmp_path / "run.json").write_text("{}")
    assert main(["verify", str(folder)]) == 0
    stated = capsys.readouterr().out.splitlines()[1]
    assert "how the answers were generated (no eval run folder: run.json absent)" in stated


def test_a_run_scored_with_its_own_resamples_verifies_and_so_do_its_details(codis_run, tmp_path, capsys):  # noqa: F811
    """`score --resamples 20 --seed 7`: the run's own interval settings are taken as stated (no detail
    re-derives them; the intervals are not resampled), in the run folder and in the details dataset that
    publish-results writes; the dataset's card states its scores.json's sha256, so an edit of the stated
    resamples there is found."""
    build, _ = codis_run
    run, out = tmp_path / "run", tmp_path / "out"
    argv = ["score", "--task", "codis", "--dataset", str(build), "--predictions", str(codis_example())]
    assert main([*argv, "--out", str(run), "--resamples", "20", "--seed", "7"]) == 0
    assert json.loads((run / "scores.json").read_text())["intervals"]["resamples"] == 20
    args = ["publish-results", str(run), "--model-repo", "me/m", "--details-repo", "me/d"]
    assert main([*args, "--dry-run", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["verify", str(run)]) == 0
    assert main(["verify", str(out / "details")]) == 0
    assert main(["verify", str(out / ".eval_results" / "codis_acc_p.yaml"), "--details", str(out / "details")]) == 0
    printed = capsys.readouterr().out
    assert printed.count("intervals.resamples and seed (the run's settings, as scores.json states them)") == 3
    assert "says 20" not in printed

    stated = out / "details" / "runs" / "codis" / "scores.json"
    stated.write_text(stated.read_text().replace('"resamples": 20', '"resamples": 2000'))
    assert main(["verify", str(out / "details")]) == 1
    printed = capsys.readouterr().out
    assert re.search(r"README\.md: codis scores\.json sha256 .*: says '[0-9a-f]{16}', the details give", printed)
