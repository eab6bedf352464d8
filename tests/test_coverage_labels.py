"""Every number says what it covers (issue 22, items 1 and 2): a subset is PARTIAL (n/N) in scores.json,
on the terminal, in report.md/.html/.csv, in the charts' legends and in compare, never bold; a build that
is not the full release is SAMPLE (x of 251 images) beside the published numbers; rotated predictions
need --circular. All on the real built data (64 public VQA questions on 5 of the 251 images)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from cogbench.cli import main
from cogbench.errors import IncompleteRunError, UsageError
from cogbench.reference_eval.reports.report_runs import load_report_runs
from cogbench.reference_eval.run.completeness import SCALE_LABEL, mark_scale, scale_text

from openai_server import Reply
from shared_files import codis_example


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-coverage-test-000")


def vqa_rows(built_release):
    from cogbench.dataset_builders.load import load_config

    data = load_config(str(built_release), "vqa").remove_columns("image")
    return [{**row, "answer": data.features["answer"].int2str(row["answer"])} for row in data.to_list()]


def write_vqa(path: Path, rows, model: str, right_every: int = 1, rotations=(None,)) -> Path:
    lines = [
        json.dumps(
            {
                "task": "vqa",
                "item_id": r["question_id"],
                "query": q,
                "model": model,
                "output": r["answer"] if i % right_every == 0 else "ABCD"[("ABCD".index(r["answer"]) + 1) % 4],
            }
        )
        for i, r in enumerate(rows)
        for q in rotations
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def score(built_release, predictions, out, *extra) -> int:
    return main(
        [
            "score",
            "--task",
            "vqa",
            "--dataset",
            str(built_release),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
            *extra,
        ]
    )


@pytest.fixture
def two_vqa_runs(built_release, tmp_path, capsys):
    rows = vqa_rows(built_release)
    assert (
        score(built_release, write_vqa(tmp_path / "five.jsonl", rows[:5], "five"), tmp_path / "five", "--allow-partial")
        == 0
    )
    terminal = capsys.readouterr().out
    assert score(built_release, write_vqa(tmp_path / "all.jsonl", rows, "all", right_every=3), tmp_path / "all") == 0
    return tmp_path / "five", tmp_path / "all", terminal, capsys.readouterr().out


def test_subset_is_partial_in_scores_json_and_on_the_terminal(two_vqa_runs):
    five, full, terminal, full_terminal = two_vqa_runs
    metric = json.loads((five / "scores.json").read_text())["metrics"]["accuracy"]
    assert (metric["partial"], metric["n_scored"], metric["n_expected"], metric["unit"]) == (True, 5, 64, "questions")
    assert metric["overall"] is None and metric["overall_partial"] == 100.0
    assert "PARTIAL (5/64 questions)" in terminal.splitlines()[0]
    assert "59 questions of the config have no prediction" in terminal
    assert "dataset item(s)" not in terminal  # the old wording (issue 24, item 10)
    complete = json.loads((full / "scores.json").read_text())["metrics"]["accuracy"]
    assert (complete["partial"], complete["n_scored"], complete["n_expected"]) == (False, 64, 64)
    assert "PARTIAL" not in full_terminal


def test_report_labels_partial_never_bold_and_sample_beside_published(two_vqa_runs, tmp_path):
    five, full, _, _ = two_vqa_runs
    assert main(["report", str(five), str(full), "--out", str(tmp_path / "report")]) == 0
    markdown = (tmp_path / "report" / "report.md").read_text()
    partial_rows = [line for line in markdown.splitlines() if line.startswith("| five")]
    assert partial_rows and all("PARTIAL (5/64 questions) 100.0" in row and "**" not in row for row in partial_rows)
    # 100.0 would be the best of every column it has; the published rows keep the bold
    assert "**81.4**" in markdown
    sample_rows = [line for line in markdown.splitlines() if line.startswith("| all")]
    assert sample_rows and all("SAMPLE (5 of 251 images)" in row for row in sample_rows)
    assert "| _GPT-4o_ | published" in markdown
    page = (tmp_path / "report" / "report.html").read_text()
    assert "PARTIAL (5/64 questions) 100.0" in page and "SAMPLE (5 of 251 images)" in page
    assert not re.search(r"<td class=best>PARTIAL", page)
    rows = {row["model"]: row for row in csv.DictReader((tmp_path / "report" / "leaderboard.csv").open())}
    assert (
        rows["five"]["accuracy.partial"],
        rows["five"]["accuracy.n_scored"],
        rows["five"]["accuracy.n_expected"],
    ) == ("True", "5", "64")
    assert rows["all"]["sample"] == "SAMPLE (5 of 251 images)" and rows["all"]["accuracy.partial"] == "False"
    # the charts' legends are the runs' labels
    labels = [run.label for run in load_report_runs([str(five), str(full)])]
    assert labels == ["five [PARTIAL (5/64 questions)] [SAMPLE (5 of 251 images)]", "all [SAMPLE (5 of 251 images)]"]


def test_report_refuses_runs_of_another_build_or_labels_them_never_ranked(
    two_vqa_runs, synthetic_raw, tmp_path, capsys
):
    """The rule of `compare` (reports/comparable.py): a run scored on another build is refused, or with
    --allow-mismatch labelled NOT COMPARABLE and never bold (its 100% would otherwise top every column)."""
    from cogbench.cards.release import build_release

    _five, full, _, _ = two_vqa_runs
    build_release(synthetic_raw, tmp_path / "other-build")
    rows = vqa_rows(tmp_path / "other-build")
    other = tmp_path / "other"
    assert score(tmp_path / "other-build", write_vqa(tmp_path / "o.jsonl", rows, "other"), other) == 0
    capsys.readouterr()
    assert main(["report", str(full), str(other), "--out", str(tmp_path / "refused")]) == UsageError.exit_code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: cannot rank") and "dataset revision" in err
    assert "--allow-mismatch" in err and not (tmp_path / "refused" / "report.md").exists()
    assert main(["report", str(full), str(other), "--out", str(tmp_path / "r"), "--allow-mismatch"]) == 0
    markdown = (tmp_path / "r" / "report.md").read_text()
    other_rows = [line for line in markdown.splitlines() if line.startswith("| other")]
    assert len(other_rows) == 2  # robust and official extractor
    assert all("[NOT COMPARABLE: dataset revision, dataset fingerprint]" in r and "**" not in r for r in other_rows)
    assert "100.0" in other_rows[0] and "**NOT COMPARABLE**: dataset revision" in markdown
    full_rows = [line for line in markdown.splitlines() if line.startswith("| all")]
    assert full_rows and "NOT COMPARABLE" not in "".join(full_rows)
    table = {row["model"]: row for row in csv.DictReader((tmp_path / "r" / "leaderboard.csv").open())}
    assert table["other"]["not_comparable"].startswith("dataset revision") and table["all"]["not_comparable"] == ""


def test_compare_refuses_other_items_and_labels_every_line_with_allow_mismatch(two_vqa_runs, capsys):
    five, full, _, _ = two_vqa_runs
    assert main(["compare", str(five), str(full)]) == UsageError.exit_code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "59 only in B" in err and "--allow-mismatch" in err
    assert main(["compare", str(five), str(full), "--allow-mismatch"]) == 0
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.startswith("| accuracy")]
    assert table and all("shared items only (5)" in line and "a PARTIAL (5/64 questions)" in line for line in table)
    # the five questions are on one image: no interval, no p-value, instead of a zero-width interval and p = 1
    overall = next(line for line in table if "| Overall |" in line and line.startswith("| accuracy |"))
    assert "n/a (1 image)" in overall and "| n/a |" in overall


def test_compare_refuses_different_generation_settings(two_vqa_runs, capsys):
    five, full, _, _ = two_vqa_runs
    for folder, tokens in ((full, 16), (five, 512)):  # an eval run's record (schemas/run.schema.json)
        scores = json.loads((folder / "scores.json").read_text())
        record = {name: scores.get(name) for name in ("task", "model", "dataset", "dataset_revision")} | {
            "prompt_id": "p"
        }
        (folder / "run.json").write_text(json.dumps({**record, "generation": {"max_new_tokens": tokens}}))
    assert main(["compare", str(full), str(full)]) == 0
    capsys.readouterr()
    assert main(["compare", str(five), str(full), "--allow-mismatch"]) == 0
    assert "max_new_tokens 512 vs 16" in capsys.readouterr().out


def test_rotated_predictions_need_circular(built_release, tmp_path, capsys):
    rows = vqa_rows(built_release)
    rotated = write_vqa(tmp_path / "c.jsonl", rows, "c", rotations=(0, 1, 2, 3))
    assert score(built_release, rotated, tmp_path / "plain") == UsageError.exit_code
    err = capsys.readouterr().err
    assert "circular predictions" in err and "--circular" in err and not (tmp_path / "plain" / "scores.json").exists()
    assert score(built_release, rotated, tmp_path / "circ", "--circular") == 0


def test_exit_3_run_is_partial_in_the_report(built_release, tmp_path, openai_server, capsys):
    """A judge that gives no verdict on a third of the queries: score exits 3, and the run it wrote is labelled."""

    def judge(request):
        return Reply(text="I cannot say." if len(request.prompt_text) % 3 == 0 else "right")

    server = openai_server(judge)
    code = main(
        [
            "score",
            "--task",
            "codis",
            "--predictions",
            str(codis_example()),
            "--dataset",
            str(built_release),
            "--judge",
            "openai:judge",
            "--judge-base-url",
            server.base_url,
            "--judge-max-attempts",
            "1",
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert code == IncompleteRunError.exit_code
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    acc_q = scores["metrics"]["acc_q"]
    assert acc_q["partial"] and acc_q["n_expected"] == 706 and 0 < acc_q["n_scored"] < 706
    assert acc_q["failed"] == 706 - acc_q["n_scored"]
    capsys.readouterr()
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "report")]) == 0
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert f"PARTIAL ({acc_q['n_scored']}/706 queries)" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| output_example"))
    # Acc_p and Acc_q are partial: never bold; context awareness is complete, but the table's only run is the
    # best of nothing (it is never ranked against the papers' rows): no bold in the run's row at all
    assert "**" not in row and re.search(r"\*\*\d", markdown)  # the papers' best rows keep theirs


def test_codis_subset_counts_queries_and_pairs(built_release, tmp_path, capsys):
    pairs = json.loads(codis_example().read_text())[:10]
    (tmp_path / "ten.json").write_text(json.dumps(pairs))
    assert (
        main(
            [
                "score",
                "--task",
                "codis",
                "--predictions",
                str(tmp_path / "ten.json"),
                "--dataset",
                str(built_release),
                "--out",
                str(tmp_path / "ten"),
                "--allow-partial",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "PARTIAL (10/353 pairs)" in out and "PARTIAL (20/706 queries)" in out
    assert "686 queries of the config have no prediction" in out
    assert "SAMPLE" not in out  # all of CODIS: the full release


def test_only_a_metric_labelled_exceeds_scale_may_pass_100(two_vqa_runs):
    """scores.schema.json: above 100 (a verdict of 2 counts 2) only with "exceeds_scale", value or interval."""
    import jsonschema

    from cogbench.reference_eval.recording.run_files import scores_schema

    _, full, _, _ = two_vqa_runs
    scores = json.loads((full / "scores.json").read_text())
    jsonschema.validate(scores, scores_schema())
    metric = scores["metrics"]["accuracy"]
    for edit in (
        lambda m: m.update(overall=150.0),
        lambda m: m["per_category"].update({next(iter(m["per_category"])): 101.0}),
        lambda m: m["interval"].update(overall=[90.0, 120.0]),
    ):
        edited = json.loads(json.dumps(metric))
        edit(edited)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**scores, "metrics": {"accuracy": edited}}, scores_schema())
        jsonschema.validate({**scores, "metrics": {"accuracy": {**edited, "exceeds_scale": True}}}, scores_schema())


@pytest.mark.parametrize(
    "metric, exceeds",
    [
        ({"overall": 100.0, "per_category": {"x": 100.0}}, False),  # 100 is on the scale
        ({"overall": 100.01, "per_category": {"x": 90.0}}, True),
        ({"overall": 90.0, "per_category": {"x": 90.0, "y": 100.5}}, True),
        ({"overall": None, "overall_partial": 101.0, "per_category": {"x": None}}, True),
        ({"overall": 90.0, "per_category": {"x": 90.0}, "interval": {"overall": [80.0, 100.5]}}, True),
        ({"overall": 90.0, "per_category": {"x": 90.0}, "interval": {"per_category": {"x": [99.0, 102.0]}}}, True),
        ({"overall": 90.0, "per_category": {"x": 90.0}, "interval": {"overall": [80.0, 100.0]}}, False),
    ],
)
def test_a_value_or_bound_above_100_marks_the_metric_and_labels_the_number(metric, exceeds):
    """Official parsing counts a verdict of 2 as 2 (the authors' sum), so a Cognition score can pass 100."""
    marked = mark_scale(dict(metric))
    assert marked.get("exceeds_scale") is (True if exceeds else None)
    assert SCALE_LABEL == "exceeds the 0-100 scale"
    assert scale_text(100.0) == "" and scale_text(None) == ""
    assert scale_text(100.25) == " (exceeds the 0-100 scale)"
