"""Replies that reason (issue 39): only the final answer is scored, the reasoning is kept, truncation counted.

The rules are ``answers/reasoning.py``'s (docs/scoring.md, "Replies that reason"), each pinned by hand in
``test_reasoning_rules.py``. The end-to-end
tests pin their numbers independently: the authors' ``vqa_accuracy.py`` run on the final answers
alone must equal cogbench on the whole replies, and CODIS truncation is counted by hand from the
authors' ground-truth example (every output right, so each truncated query is exactly one miss).
"""

from __future__ import annotations

import csv
import json

import pytest

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.formats.official import write_official
from cogbench.reference_eval.formats.predictions import Prediction
from cogbench.reference_eval.publishing.hub_results import results_notes
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from oracle_scripts import run_vqa_accuracy
from shared_files import codis_example


@pytest.fixture(scope="module")
def vqa_rows(built_release):
    return load_config(str(built_release), "vqa").remove_columns("image").to_list()


def thinking_reply(row, index):
    """A reasoning that argues for a wrong letter, then the final answer: right for even rows."""
    right = "ABCD"[row["answer"]]
    wrong = "ABCD"[(row["answer"] + 1) % 4]
    final = right if index % 2 == 0 else wrong
    return f"<think>Answer: {wrong}. {wrong} fits best, not {right}.</think>\n\n{final}", final


def test_vqa_of_a_thinking_model_equals_the_oracle_on_its_final_answers(built_release, vqa_rows, tmp_path):
    replies = [thinking_reply(row, index) for index, row in enumerate(vqa_rows)]
    ours_path = tmp_path / "thinking.jsonl"
    ours_path.write_text(
        "".join(
            Prediction(task="vqa", item_id=row["question_id"], output=reply, finish_reason="stop").to_json() + "\n"
            for row, (reply, _) in zip(vqa_rows, replies)
        )
    )
    finals = [Prediction(task="vqa", item_id=row["question_id"], output=f) for row, (_, f) in zip(vqa_rows, replies)]
    oracle = run_vqa_accuracy(write_official("vqa", tmp_path / "finals", vqa_rows, finals))
    for name, predictions in (("ours", ours_path), ("authors", _authors_file(vqa_rows, replies, tmp_path))):
        scores = run_scoring(
            ScoreOptions(task="vqa", dataset=str(built_release), predictions=str(predictions), out=str(tmp_path / name))
        )
        assert scores["metrics"]["accuracy_official"]["overall"] / 100 == pytest.approx(oracle["Overall Acc."])
        assert scores["answers"]["with_reasoning"] == len(vqa_rows)
        assert scores["answers"]["answered"] == len(vqa_rows)
    details = [json.loads(line) for line in (tmp_path / "ours" / "details.jsonl").read_text().splitlines()]
    assert details[0]["reply"]["content"].startswith("<think>Answer:")  # the reasoning kept, never scored
    assert details[0]["response"] == replies[0][1]


def _authors_file(rows, replies, tmp_path):
    """The same whole replies in the authors' VQA format (third-party predictions with think blocks)."""
    predictions = [Prediction(task="vqa", item_id=row["question_id"], output=r) for row, (r, _) in zip(rows, replies)]
    return write_official("vqa", tmp_path / "authors-format", rows, predictions)


def _codis_mix(pairs) -> list[str]:
    """One predictions line per query of the authors' example, every reply status by the pair's index mod 10:
    0 (query 1) reasoning only, then the limit: truncated; 3 (query 1) nothing after the block: empty;
    5 (both) an inline block never closed, stopped normally: unclosed; 7 (query 2) no tag, cut at the limit,
    thinking unknown, the truth in the thought: unscored; 8 (both) upper-case tags; 9 (query 2) the answer
    after the block, then the limit: cut; else answered. Every answer is the truth (the rule judge: right)."""
    lines = []
    for index, pair in enumerate(pairs):
        for query in (1, 2):
            truth = pair["output"][f"output_{query}"]
            record = {"task": "codis", "item_id": pair["id"], "query": query, "finish_reason": "stop"}
            kind = index % 10
            if kind == 0 and query == 1:
                record.update(output="", reasoning=f"The answer may be {truth}", finish_reason="length")
            elif kind == 3 and query == 1:
                record.update(output=f"<think>{truth}</think>   ")
            elif kind == 5:
                record.update(output=f"<think>It is {truth}")
            elif kind == 7 and query == 2:
                record.update(output=f"The answer may be {truth}, or", finish_reason="length")
            elif kind == 8:
                record.update(output=f"<THINK>not {truth}?</THINK>{truth}")
            elif kind == 9 and query == 2:
                record.update(output=f"<think>x</think>{truth}", finish_reason="length")
            else:
                record.update(output=f"<think>not {truth}?</think>{truth}")
            lines.append(json.dumps(record) + "\n")
    return lines


def test_codis_replies_without_an_answer_are_counted_and_labelled_everywhere(built_release, tmp_path, capsys):
    """The authors' example holds the ground truth (353 pairs), so every count is by hand from ``_codis_mix``:
    index mod 10 = 0 for 36 pairs (0..350), 3, 5, 7, 8, 9 for 35 each (..343, ..345, ..347, ..348, ..349).
    Replies 706: truncated 36, empty 35, unclosed 70, unscored 35, cut 35, answered 495. The 176 replies
    without an answer are misses (no thought read); the pairs holding one: 36 + 35 + 35 + 35 = 141."""
    pairs = json.loads(codis_example().read_text())
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(_codis_mix(pairs)))
    out = tmp_path / "run"
    args = ["score", "--task", "codis", "--dataset", str(built_release), "--predictions", str(path), "--out", str(out)]
    assert main(args) == 0
    scores = json.loads((out / "scores.json").read_text())
    answers = scores["answers"]
    counted = {name: answers[name] for name in ("replies", "answered", "cut", "truncated", "unclosed", "unscored")}
    assert counted == {"replies": 706, "answered": 495, "cut": 35, "truncated": 36, "unclosed": 70, "unscored": 35}
    assert answers["empty"] == 35
    # The truncated rate is over every reply, whatever its status: 100 * 36 / 706 = 5.09915..., not over the
    # 671 that are not empty (5.365), the 636 not unclosed (5.660) nor the 531 answered or truncated (6.780).
    assert answers["truncated_rate"] == 5.0992
    assert scores["metrics"]["acc_q"]["overall"] == pytest.approx(100 * 530 / 706)
    assert scores["metrics"]["acc_p"]["overall"] == pytest.approx(100 * 212 / 353)
    for status, count in (("truncated", 36), ("unclosed", 70), ("unscored", 35), ("cut", 35)):
        assert sum(c[status] for c in answers["per_category"].values()) == count
    labels = [
        "TRUNCATED (36/706 replies, 5.1%: no answer before the token limit)",
        "UNCLOSED (70/706 replies, 9.9%: a think block never closed, not at the token limit: no answer)",
        "UNSCORED (35/706 replies, 5.0%: cut at the token limit, thinking unknown: not read, scored as no answer)",
    ]
    printed = capsys.readouterr().out  # the summary
    report_md = (out / "report.md").read_text()
    for label in labels:
        assert label in printed and label in report_md
    notes = results_notes(scores, "acc_p")
    assert "no answer (truncated) 36 of 706 replies; no answer (think block never closed) 70 of 706 replies; " in notes
    assert "no answer (cut, thinking unknown: not read) 35 of 706 replies; " in notes
    report = tmp_path / "report"
    assert main(["report", str(out), "--out", str(report)]) == 0
    row = next(csv.DictReader((report / "leaderboard.csv").open()))
    assert [row[k] for k in ("truncated", "unclosed", "unscored", "cut", "replies")] == ["36", "70", "35", "35", "706"]
    for label in labels:
        assert label in (report / "report.md").read_text()
    assert main(["verify", str(out)]) == 0  # every status re-derived from the kept replies
    # details keep the reasoning and say why each reply scored as it did
    details = [json.loads(line) for line in (out / "details.jsonl").read_text().splitlines()]
    first = details[0]["queries"][0]
    assert first["answer_status"] == "truncated" and first["output"] == ""
    assert first["reply"] == {
        "reasoning": f"The answer may be {pairs[0]['output']['output_1']}",
        "finish_reason": "length",
    }
    unread = details[7]["queries"][1]
    assert (unread["answer_status"], unread["output"], unread["final_answer"], unread["right"]) == (
        "unscored",
        "",
        "",
        False,
    )
    assert unread["reply"]["content"] == f"The answer may be {pairs[7]['output']['output_2']}, or"


def test_reasoning_kept_as_hash_on_request(built_release, vqa_rows, tmp_path):
    row = vqa_rows[0]
    path = tmp_path / "p.jsonl"
    path.write_text(Prediction(task="vqa", item_id=row["question_id"], output="<think>A</think>B").to_json() + "\n")
    out = tmp_path / "run"
    args = ["score", "--task", "vqa", "--dataset", str(built_release), "--predictions", str(path), "--out", str(out)]
    assert main([*args, "--allow-partial", "--reasoning-in-details", "hash"]) == 0
    detail = json.loads((out / "details.jsonl").read_text().splitlines()[0])
    assert "<think>" not in json.dumps(detail)
    assert detail["reply"]["content_chars"] == len("<think>A</think>B")


def test_third_party_files_with_think_blocks_score_as_their_final_answers(built_release, tmp_path):
    """VLMEvalKit's file (its own writer) and lmms-eval's samples holding think blocks score as the bare answers;
    the exported lmms-eval tasks' own process_results read the final answer too."""
    import pandas as pd
    from test_harnesses import lmms_samples, vlmevalkit_dump

    from cogbench.reference_eval.harnesses import lmms_eval_tasks as tasks

    assert (
        main(["export", "--format", "vlmevalkit", "--dataset", str(built_release), "--out", str(tmp_path / "v")]) == 0
    )
    table = pd.read_csv(tmp_path / "v" / "CogBench_VQA.tsv", sep="\t", dtype={"index": int}).drop(columns=["image"])
    wrong = {"A": "B", "B": "C", "C": "D", "D": "A"}
    finals = [row["answer"] if i % 3 else wrong[row["answer"]] for i, row in table.iterrows()]
    results = {}
    for name, replies in (("plain", finals), ("thinking", [f"<think>{wrong[f]} or {f}?</think>{f}" for f in finals])):
        table["prediction"] = replies
        vlmevalkit_dump(table, tmp_path / f"{name}_CogBench_VQA.xlsx")
        out = tmp_path / f"vlmevalkit-{name}"
        args = ["score", "--task", "vqa", "--dataset", str(built_release), "--out", str(out)]
        assert main([*args, "--predictions", str(tmp_path / f"{name}_CogBench_VQA.xlsx")]) == 0
        results[name] = json.loads((out / "scores.json").read_text())["metrics"]
    right = sum(1 for i in range(len(finals)) if i % 3)
    for name in ("plain", "thinking"):
        assert results[name]["accuracy_official"]["overall"] == pytest.approx(100 * right / len(finals))

    codis = load_config(str(built_release), "codis")
    docs = tasks.codis_process_docs(codis)
    truths = [d[f"answer_{d['cogbench_query']}"] for d in docs]
    outputs = [f"<think>It is not {t}.</think>\n{t}" if i % 5 else f"<think>{t}" for i, t in enumerate(truths)]
    items = [tasks.codis_process_results(doc, [output])["acc_q"] for doc, output in zip(docs, outputs)]
    expected = [i % 5 != 0 for i in range(len(docs))]  # a block never closed is no answer
    assert [item["right"] for item in items] == expected
    samples = tmp_path / "samples_cogbench_codis.jsonl"
    samples.write_text(lmms_samples(docs, outputs))
    out = tmp_path / "lmms"
    args = [
        "score",
        "--task",
        "codis",
        "--dataset",
        str(built_release),
        "--predictions",
        str(samples),
        "--out",
        str(out),
    ]
    assert main(args) == 0
    scores = json.loads((out / "scores.json").read_text())
    assert scores["metrics"]["acc_q"]["overall"] == pytest.approx(100 * sum(expected) / len(expected))
    # lmms-eval keeps no finish reason: a block never closed is no answer, but not said to be cut at the limit
    assert (scores["answers"]["unclosed"], scores["answers"]["truncated"]) == (len(expected) - sum(expected), 0)


def _edit_details(path, edit):
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    edit(lines)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.parametrize(
    "edit",
    [
        "status",  # a truncated reply relabelled answered
        "content",  # the kept reasoning edited so that its final answer is another
        "block",  # scores.json's count of truncated replies
    ],
)
def test_verify_rederives_each_final_answer_from_its_kept_reply(built_release, tmp_path, capsys, edit):
    pairs = json.loads(codis_example().read_text())[:6]
    lines = []
    for index, pair in enumerate(pairs):
        for query in (1, 2):
            truth = pair["output"][f"output_{query}"]
            output = f"<think>{truth}" if index == 0 else f"<think>not {truth}?</think>{truth}"
            record = {"task": "codis", "item_id": pair["id"], "query": query, "output": output}
            lines.append(json.dumps(record) + "\n")
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(lines))
    out = tmp_path / "run"
    args = ["score", "--task", "codis", "--dataset", str(built_release), "--predictions", str(path), "--out", str(out)]
    assert main([*args, "--allow-partial"]) == 0
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()
    details = out / "details.jsonl"
    if edit == "status":
        _edit_details(details, lambda d: d[0]["queries"][0].update(answer_status="answered"))
    elif edit == "content":
        _edit_details(details, lambda d: d[1]["queries"][0]["reply"].update(content="<think>x</think>something else"))
    else:
        scores = json.loads((out / "scores.json").read_text())
        scores["answers"]["truncated"] -= 1
        scores["answers"]["answered"] += 1
        (out / "scores.json").write_text(json.dumps(scores))
    assert main(["verify", str(out)]) != 0
    printed = capsys.readouterr()
    assert ("answers" if edit == "block" else "final answer and status") in printed.out + printed.err
