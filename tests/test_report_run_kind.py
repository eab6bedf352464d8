"""Reports and comparisons say each run's description mode and judge, read from what the run used (issue 32, item 1).

The mode comes from the prompt templates the predictions name (scores.json provenance), never from a
default: directed predictions scored with ``cogbench score`` land in the Mode 2 column, official-format
ones (no prompt named) in "Mode not recorded". Runs judged differently are labelled everywhere and
``compare`` refuses them without ``--allow-mismatch``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from conftest import needs_real_data
from test_intervals import score_codis
from test_score import codis_truth_responder, minilm_path

from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.reference_eval.recording.run_kind import description_mode, judge_difference, judge_label
from cogbench.reference_eval.tasks.prompts import DESCRIPTION_DIRECTED, DESCRIPTION_SPONTANEOUS

from openai_server import numbered_verdicts
from shared_files import codis_example, spacy_stand_in


def description_predictions(built_release, path: Path, template=None) -> Path:
    """The annotated descriptions as a model's outputs: project format naming ``template``, or the official JSONL."""
    from cogbench.dataset_builders.load import load_config

    rows = load_config(str(built_release), "description").remove_columns("image").to_list()
    lines = []
    for row in rows:
        if template is None:
            lines.append({"filename": row["image_file"], "model_output": row["description"]})
        else:
            lines.append(
                {
                    "task": "description",
                    "item_id": row["image_id"],
                    "output": row["description"],
                    "model": "tiny-vlm",
                    "prompt_id": template.id,
                    "prompt_sha256": template.sha256,
                }
            )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def score_description(built_release, predictions: Path, out: Path, *judge: str) -> Path:
    argv = ["score", "--task", "description", "--dataset", str(built_release), "--predictions", str(predictions)]
    argv += ["--spacy-model", str(spacy_stand_in()), "--embedder", minilm_path(), "--out", str(out), *judge]
    assert main(argv) == 0
    return out


def table_rows(markdown: str, title: str) -> list[list[str]]:
    """The cells of each row of the table titled ``title`` in report.md."""
    block = markdown.split(f"## {title}\n", 1)[1].lstrip("\n").split("\n\n", 1)[0]
    lines = [line for line in block.splitlines() if line.startswith("| ")]
    return [[cell.strip().replace("**", "") for cell in line.strip("|").split(" | ")] for line in lines]


@needs_real_data
def test_directed_predictions_land_in_the_directed_column(built_release, tmp_path, capsys):
    directed = score_description(
        built_release,
        description_predictions(built_release, tmp_path / "directed.jsonl", DESCRIPTION_DIRECTED),
        tmp_path / "directed",
    )
    spontaneous = score_description(
        built_release,
        description_predictions(built_release, tmp_path / "spont.jsonl", DESCRIPTION_SPONTANEOUS),
        tmp_path / "spontaneous",
    )
    official = score_description(
        built_release, description_predictions(built_release, tmp_path / "official.jsonl"), tmp_path / "official"
    )
    assert not (directed / "run.json").exists()  # a `score` run: the mode can only come from the prompts used
    assert "judge `none`; description mode: Mode 2 (directed)." in (directed / "report.md").read_text()
    assert "description mode: mode not recorded." in (official / "report.md").read_text()
    out = tmp_path / "report"
    assert main(["report", str(directed), str(spontaneous), str(official), "--out", str(out)]) == 0
    markdown = (out / "report.md").read_text()
    header, *rows = table_rows(markdown, "Recognition Score, Description task (CogBench Table 2)")
    assert header[2:5] == ["Mode 1 (spontaneous)", "Mode 2 (directed)", "Mode not recorded"]
    by_run = {row[0].split(" [")[0]: row for row in rows}
    value = json.loads((directed / "scores.json").read_text())["metrics"]["recognition_micro"]["overall"]
    assert by_run["tiny-vlm · directed"][2] == "" and by_run["tiny-vlm · directed"][3].startswith(f"{value:.1f} [")
    assert (
        by_run["tiny-vlm · spontaneous"][2].startswith(f"{value:.1f} [") and by_run["tiny-vlm · spontaneous"][3] == ""
    )
    assert by_run["official"][2:4] == ["", ""] and by_run["official"][4].startswith(f"{value:.1f} [")
    assert "mode not recorded: the predictions name no prompt template" in markdown
    with (out / "leaderboard.csv").open() as handle:
        board = {row["folder"]: row for row in csv.DictReader(handle)}
    assert [board[str(f)]["mode"] for f in (directed, spontaneous, official)] == [
        "directed",
        "spontaneous",
        "unrecorded",
    ]
    assert board[str(official)]["model_recorded"] == "False" and board[str(directed)]["judge"] == "none"


def test_mode_comes_from_the_templates_before_run_json():
    provenance = {"prompt_templates": [{"id": DESCRIPTION_DIRECTED.id, "sha256": "x", "role": "model"}]}
    scores = {"task": "description", "predictions": "p.jsonl", "provenance": provenance}
    assert description_mode(scores, {"mode": "spontaneous"}) == "directed"
    both = {"id": DESCRIPTION_SPONTANEOUS.id, "sha256": "y", "role": "model"}
    mixed = {**scores, "provenance": {"prompt_templates": [*provenance["prompt_templates"], both]}}
    assert description_mode(mixed) == "mixed"
    assert description_mode({**scores, "provenance": {"prompt_templates": []}}) == "unrecorded"
    assert description_mode({**scores, "provenance": {"prompt_templates": []}}, {"mode": "directed"}) == "directed"
    assert description_mode({**scores, "predictions": "oracle"}) == "oracle"


def test_judges_differ_in_model_or_parsing():
    def scores(**judge):
        return {"metrics": {"acc_p": {}}, "provenance": {"judge": judge}}

    gpt_tolerant = scores(kind="openai", model="gpt-4o", parsing="tolerant")
    assert judge_label(gpt_tolerant) == "judge gpt-4o (tolerant parsing)"
    assert judge_difference(gpt_tolerant, scores(kind="openai", model="gpt-4o", parsing="tolerant")) is None
    assert judge_difference(gpt_tolerant, scores(kind="openai", model="gpt-4o", parsing="official")) == (
        "judge parsing 'tolerant' vs 'official' (acc_p)"
    )
    assert judge_difference(gpt_tolerant, scores(kind="rule")) == "judge 'openai:gpt-4o' vs 'rule' (acc_p)"
    unjudged = {"metrics": {"accuracy": {}}, "provenance": {"judge": {"kind": "none"}}}
    assert judge_difference(unjudged, {**unjudged, "provenance": {"judge": {"kind": "rule"}}}) is None


def test_a_judge_is_labelled_by_what_it_is_a_panel_by_its_members():
    """Issue 48 item 9c: only an offline judge reads "(offline)"; a panel with LLM members names them and its
    parsing, a vllm: judge its model."""

    def scores(**judge):
        return {"metrics": {"acc_p": {}}, "provenance": {"judge": judge}}

    members = [{"name": "openai:gpt-4o", "kind": "openai"}, {"name": "rule", "kind": "rule"}]
    panel = scores(kind="panel", model="openai:gpt-4o + rule", members=members, parsing="tolerant")
    assert judge_label(panel) == "judge panel openai:gpt-4o + rule (tolerant parsing)"
    vllm = scores(kind="vllm", model="/models/qwen", parsing="constrained")
    assert judge_label(vllm) == "judge vllm:/models/qwen (constrained parsing)"
    assert judge_label(scores(kind="rule")) == "judge rule (offline)"
    assert judge_label(scores(kind="rouge")) == "judge rouge (offline)"


@needs_real_data
def test_runs_judged_apart_are_labelled_and_compare_refuses_them(
    built_release, tmp_path, openai_server, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    server = openai_server(codis_truth_responder)
    rule = tmp_path / "rule"
    score_codis(built_release, codis_example(), rule, resamples=100)
    llm = tmp_path / "llm"
    score_codis(
        built_release,
        codis_example(),
        llm,
        resamples=100,
        judge="openai:gpt-judge",
        judge_base_url=server.base_url,
        judge_backoff=0.01,
        judge_concurrency=16,
    )
    capsys.readouterr()
    assert main(["compare", str(rule), str(llm)]) == UsageError.exit_code
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "judge 'rule' vs 'openai:gpt-judge' (acc_p, acc_q)" in error
    assert main(["compare", str(rule), str(llm), "--allow-mismatch"]) == 0
    lines = capsys.readouterr().out.splitlines()
    acc_lines = [line for line in lines if line.startswith(("| acc_p |", "| acc_q |"))]
    assert acc_lines and all(
        "judged apart: A judge rule (offline), B judge gpt-judge (tolerant parsing)" in line for line in acc_lines
    )
    aware = [line for line in lines if line.startswith("| context_awareness |")]
    assert aware and not any("judged apart" in line for line in aware)  # not a judged metric

    out = tmp_path / "report"
    assert main(["report", str(rule), str(llm), "--out", str(out)]) == 0
    rows = table_rows((out / "report.md").read_text(), "CODIS (CODIS Table 3)")
    sources = {row[0]: row[1] for row in rows[1:]}
    assert sources["output_example · rule"] == "run, judge rule (offline)"
    assert sources["output_example · llm"] == "run, judge gpt-judge (tolerant parsing)"
    assert sources["_GPT-4V_"] == "published, CODIS Table 3, human judges"
    with (out / "leaderboard.csv").open() as handle:
        board = list(csv.DictReader(handle))
    assert [(row["judge"], row["judge_parsing"]) for row in board] == [("rule", ""), ("openai:gpt-judge", "tolerant")]


@needs_real_data
def test_official_runs_of_one_file_name_are_told_apart(built_release, tmp_path):
    """Two official-format files of the same name, scored into folders of the same name: the labels differ."""
    first, second = tmp_path / "a" / "codis" / "score", tmp_path / "b" / "codis" / "score"
    score_codis(built_release, codis_example(), first, resamples=50)
    score_codis(built_release, codis_example(), second, resamples=50)
    out = tmp_path / "report"
    assert main(["report", str(first), str(second), "--out", str(out)]) == 0
    with (out / "leaderboard.csv").open() as handle:
        assert [row["run"] for row in csv.DictReader(handle)] == [
            "output_example · a/codis",
            "output_example · b/codis",
        ]


@needs_real_data
def test_cognition_runs_say_their_judge_beside_the_gpt4_rows(built_release, tmp_path, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    server = openai_server(numbered_verdicts(lambda n: n % 2))
    judged = score_description(
        built_release,
        description_predictions(built_release, tmp_path / "directed.jsonl", DESCRIPTION_DIRECTED),
        tmp_path / "judged",
        "--judge",
        "openai:gpt-judge",
        "--judge-base-url",
        server.base_url,
        "--judge-parsing",
        "official",
    )
    assert "judge `openai:gpt-judge` (official parsing); description mode: Mode 2 (directed)." in (
        (judged / "report.md").read_text()
    )
    out = tmp_path / "report"
    assert main(["report", str(judged), "--out", str(out)]) == 0
    rows = table_rows((out / "report.md").read_text(), "Cognition Score, Description task (CogBench Table 3)")
    run_row = next(row for row in rows if row[0].startswith("tiny-vlm"))
    assert run_row[1:3] == ["run, judge gpt-judge (official parsing)", "Mode 2 (directed)"]
    assert any(row[1] == "published, CogBench Table 3, GPT-4 judge" for row in rows)
