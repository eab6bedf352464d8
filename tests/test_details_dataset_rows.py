"""The details dataset from hand-made runs: each row's columns, the card and the folder, by hand.

Every expected column is the details line's own field, picked out by hand (the module docstring
says which field goes where); the card's lines are written out in full. No server, no build: the
mutation run of ``publishing/details_dataset.py`` uses this file (tests/test_details_dataset.py holds
the end-to-end runs against a real local server).
"""

from __future__ import annotations

import hashlib
import json

from cogbench.reference_eval.publishing.details_dataset import (
    detail_rows,
    read_details_folder,
    render_card,
    row_fields,
    template_sha256,
    write_details,
)
from cogbench.reference_eval.recording.run_reader import ScoredRun

CODIS_LINE = {
    "item_id": "pair7",
    "image_id": "img7",
    "category": "emotional",
    "outputs_differ": True,
    "queries": [
        {
            "query": 1,
            "output": "Il est ravi.\ncafé",
            "rendered_prompt_sha256": "1" * 64,
            "final_answer": "café",
            "right": True,
            "judge_reply": "right",
            "judge_error": None,
        },
        {"query": 2, "output": "sad", "final_answer": "sad", "right": None, "judge_error": "timeout"},
    ],
}


def test_codis_columns_are_per_query_lists_in_the_lines_order():
    # the task as scores.json gives it: json.loads makes a new string, never this module's constant
    assert row_fields(json.loads('"codis"'), CODIS_LINE) == {
        "raw_output": ["Il est ravi.\ncafé", "sad"],
        "prompt_sha256": ["1" * 64, None],
        "parsed_answer": ["café", "sad"],
        "judge_verdicts": [True, None],
        "judge_replies": ["right", None],
        "judge_errors": [None, "timeout"],
    }


def test_vqa_columns_one_answer_or_four_rotations():
    single = {"item_id": "q", "response": "B", "rendered_prompt_sha256": "e" * 64}
    single.update(extracted="B", extracted_official=None)
    assert row_fields(json.loads('"vqa"'), single) == {
        "raw_output": "B",
        "prompt_sha256": "e" * 64,
        "parsed_answer": {"robust": "B", "official": None},
        "judge_verdicts": None,
        "judge_replies": None,
        "judge_errors": None,
    }
    rotations = [{"response": f"({x})", "extracted": x, "extracted_official": None} for x in "ABCD"]
    circular = {"item_id": "q", "response": "ignored", "rotations": rotations}
    assert row_fields("vqa", circular) == {
        "raw_output": ["(A)", "(B)", "(C)", "(D)"],
        "prompt_sha256": [None] * 4,
        "parsed_answer": [{"robust": x, "official": None} for x in "ABCD"],
        "judge_verdicts": None,
        "judge_replies": None,
        "judge_errors": None,
    }


def test_description_columns_come_from_the_llm_judge_when_there_is_one():
    llm = [{"category": "time", "figure": 8, "verdict": 0, "judge_error": "unreadable"}]
    offline = [{"category": "time", "verdict": 1, "score": 0.9, "best_sentence": "At noon."}]
    replies = [{"figure": 8, "prompt_sha256": "f" * 64, "reply": "1. [7]"}]
    line = {"item_id": "i", "recognition": {"annotated": 0, "recognized": 0}, "description": "Noon."}
    both = {**line, "cognition": llm, "cognition_nli": offline, "judge_replies": replies}
    fields = row_fields("description", both)
    assert (fields["judge_verdicts"], fields["judge_replies"], fields["judge_errors"]) == ([0], replies, ["unreadable"])
    assert (fields["raw_output"], fields["prompt_sha256"], fields["parsed_answer"]) == ("Noon.", None, None)
    alone = row_fields("description", {**line, "cognition_bertscore": offline})
    assert alone["judge_verdicts"] == [1]
    assert alone["judge_replies"] == [{"score": 0.9, "best_sentence": "At noon."}]
    assert alone["judge_errors"] == [None]
    # no judge at all, and an LLM-judged line whose calls kept no reply
    assert row_fields("description", line) == {
        "raw_output": "Noon.",
        "prompt_sha256": None,
        "parsed_answer": None,
        "judge_verdicts": None,
        "judge_replies": None,
        "judge_errors": None,
    }
    assert row_fields("description", {**line, "cognition": llm})["judge_replies"] is None


def test_the_template_hash_comes_from_run_json_else_the_one_model_template():
    provenance = {"prompt_templates": [{"role": "judge", "sha256": "j"}, {"role": "model", "sha256": "m"}]}
    run = ScoredRun(None, {"provenance": provenance}, [], None)
    assert template_sha256(run) == "m"
    # as scores.json gives it: the roles are new strings, never this module's constants
    assert template_sha256(ScoredRun(None, json.loads(json.dumps({"provenance": provenance})), [], None)) == "m"
    assert template_sha256(ScoredRun(None, {"provenance": provenance}, [], None, {"prompt_sha256": "r"})) == "r"
    assert template_sha256(ScoredRun(None, {"provenance": provenance}, [], None, {"prompt_sha256": None})) == "m"
    two = {"prompt_templates": [{"role": "model", "sha256": "a"}, {"role": "model", "sha256": "b"}]}
    assert template_sha256(ScoredRun(None, {"provenance": two}, [], None)) is None
    assert template_sha256(ScoredRun(None, {"provenance": None}, [], None)) is None
    assert template_sha256(ScoredRun(None, {}, [], None)) is None


def codis_run(folder) -> ScoredRun:
    folder.mkdir()
    scores = {
        "task": "codis",
        "model": "org/m",
        "judge": {"kind": "openai", "model": "gpt-x", "parsing": "strict"},
        "provenance": {"cogbench_version": "9.9", "prompt_templates": [{"role": "model", "sha256": "t" * 8}]},
    }
    (folder / "scores.json").write_text(json.dumps(scores))
    (folder / "report.md").write_text("# report\n")
    vqa_line = {"item_id": "q", "category": None}
    return ScoredRun(folder, scores, [CODIS_LINE, {**CODIS_LINE, **vqa_line, "outputs_differ": False}], None)


def test_a_row_per_line_with_json_text_columns_and_its_score_contributions(tmp_path):
    first, second = detail_rows(codis_run(tmp_path / "run"))
    assert {k: v for k, v in first.items() if k != "detail"} == {
        "item_id": "pair7",
        "image_id": "img7",
        "category": "emotional",
        "model": "org/m",
        "prompt_template_sha256": "t" * 8,
        "raw_output": '["Il est ravi.\\ncafé", "sad"]',
        "prompt_sha256": '["' + "1" * 64 + '", null]',
        "parsed_answer": '["café", "sad"]',
        "judge_verdicts": "[true, null]",
        "judge_replies": '["right", null]',
        "judge_errors": '[null, "timeout"]',
        # one query judged right (acc_q 1 of 1); the pair has an unjudged query, so no acc_p unit
        "score_contributions": '{"acc_q": [["emotional", 1.0, 1.0]], "context_awareness": [["emotional", 1.0, 1.0]]}',
    }
    assert first["detail"] == json.dumps(CODIS_LINE, ensure_ascii=False, sort_keys=True)
    assert first["detail"].index('"category"') < first["detail"].index('"image_id"') and "café" in first["detail"]
    assert (second["item_id"], second["image_id"], second["category"]) == ("q", "img7", None)
    assert json.loads(second["score_contributions"]) == {
        "acc_q": [[None, 1.0, 1.0]],
        "context_awareness": [[None, 0.0, 1.0]],
    }


def test_a_description_row_is_keyed_by_its_image(tmp_path):
    """A Description line has no image_id: its item id is the image; no category of its own."""
    line = {"item_id": "img3", "recognition": {"annotated": 2, "recognized": 1}}
    (row,) = detail_rows(ScoredRun(tmp_path, {"task": "description", "model": "m"}, [line], None))
    assert (row["item_id"], row["image_id"], row["category"], row["prompt_template_sha256"]) == (
        "img3",
        "img3",
        None,
        None,
    )
    # 1 of 2 entities: micro pools 1 hit of 2, macro counts the image's 0.5 once
    assert json.loads(row["score_contributions"]) == {
        "recognition_micro": [[None, 1.0, 2.0]],
        "recognition_macro": [[None, 0.5, 1.0]],
    }


def card_row(task: str, items: int, judge: str, parsing: str, template: str, version: str, scores_file) -> str:
    digest = hashlib.sha256(scores_file.read_bytes()).hexdigest()[:16]
    return f"| {task} | {items} | {judge} | {parsing} | `{template}` | {version} | `{digest}` |"


def test_the_card_lists_each_runs_config_and_provenance(tmp_path):
    run = codis_run(tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "scores.json").write_text("{}")
    bare = ScoredRun(tmp_path / "b", {"task": "vqa", "model": "other", "judge": {"kind": "rule"}}, [], None)
    card = render_card([run, bare], "org/cogbench", "rev1").splitlines()
    assert card[:15] == [
        "---",
        "configs:",
        "- config_name: codis",
        "  data_files:",
        "  - split: test",
        "    path: data/codis/test.parquet",
        "- config_name: vqa",
        "  data_files:",
        "  - split: test",
        "    path: data/vqa/test.parquet",
        "tags:",
        "- evaluation",
        "- cogbench",
        "---",
        "",
    ]
    assert card[15] == "# Per-item details: org/m on `org/cogbench`"
    assert card[17].startswith("Written by `cogbench publish-results`. Dataset `org/cogbench` at revision `rev1`.")
    assert card[21:25] == [
        "| config | items | judge | parsing | prompt template sha256 | cogbench | scores.json sha256 |",
        "|---|---|---|---|---|---|---|",
        card_row("codis", 2, "openai:gpt-x", "strict", "t" * 8, "9.9", tmp_path / "a" / "scores.json"),
        card_row("vqa", 0, "rule", "-", "-", "-", tmp_path / "b" / "scores.json"),
    ]
    assert card[25] == "" and card[-1].startswith("Load with `load_dataset(")


def test_the_folder_holds_rows_scores_and_report_and_reads_back(tmp_path):
    run = codis_run(tmp_path / "run")
    written = write_details([run], tmp_path / "out", "org/d", "r")
    assert written == ["README.md", "data/codis/test.parquet", "runs/codis/scores.json", "runs/codis/report.md"]
    out = tmp_path / "out"
    assert (out / "README.md").read_text() == render_card([run], "org/d", "r")
    assert (out / "runs/codis/report.md").read_text() == "# report\n"
    assert (out / "runs/codis/scores.json").read_bytes() == (tmp_path / "run" / "scores.json").read_bytes()
    found = read_details_folder(out)
    assert list(found) == ["codis"]
    assert found["codis"]["details"] == run.details
    assert found["codis"]["rows"] == detail_rows(run)
    assert found["codis"]["scores_path"] == out / "runs/codis/scores.json"
    assert found["codis"]["report_path"] == out / "runs/codis/report.md"
    assert read_details_folder(tmp_path / "run") == {}


def test_writing_again_into_the_same_folder_replaces_the_tasks_files(tmp_path):
    """A second dry run into one --out: the task's folders exist already and are written over."""
    run = codis_run(tmp_path / "run")
    write_details([run], tmp_path / "out", "org/d", "r")
    shorter = ScoredRun(run.folder, run.scores, run.details[:1], None)
    write_details([shorter], tmp_path / "out", "org/d", "r2")
    assert read_details_folder(tmp_path / "out")["codis"]["details"] == run.details[:1]
    assert "at revision `r2`" in (tmp_path / "out" / "README.md").read_text()
