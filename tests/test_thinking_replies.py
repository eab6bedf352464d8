"""Replies that reason (issue 39): only the final answer is scored, the reasoning is kept, truncation counted.

The rules are ``answers/reasoning.py``'s (docs/scoring.md, "Replies that reason"). The end-to-end
tests pin their numbers independently: the authors' ``vqa_accuracy.py`` run on the final answers
alone must equal cogbench on the whole replies, and CODIS truncation is counted by hand from the
authors' ground-truth example (every output right, so each truncated query is exactly one miss).
"""

from __future__ import annotations

import csv
import json
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.errors import UsageError
from cogbench.reference_eval.answers.reasoning import THINK_TAGS, parse_tags, prompt_opens_think, split_reply
from cogbench.reference_eval.formats.official import write_official
from cogbench.reference_eval.formats.predictions import Prediction
from cogbench.reference_eval.metrics import vqa
from cogbench.reference_eval.publishing.hub_results import results_notes
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from oracle_scripts import run_vqa_accuracy
from shared_files import codis_example

HARMONY_RAW = "<|channel|>analysis<|message|>Answer: A? A fits.<|end|><|start|>assistant<|channel|>final<|message|>"

# (content, separate reasoning, finish reason, thinking) -> (answer, status): one row per rule.
RULES = [
    ("B", None, None, None, "B", "answered"),  # no tag, no field: the text as given
    (" B ", None, "stop", None, " B ", "answered"),  # ... unstripped, as the authors' parsing reads it
    ("<think>A, surely A</think>\n\nB", None, "stop", None, "B", "answered"),  # rule 1
    ("◁think▷A◁/think▷B", None, None, None, "B", "answered"),  # Kimi-VL's tags
    ("<think>a<think>b</think>c</think> D", None, None, None, "D", "answered"),  # nested: the last close ends all
    ("<think>a</think>x<think>b</think>C", None, None, None, "C", "answered"),  # several blocks
    ("A, surely A</think>B", None, None, "on", "B", "answered"),  # the template opened the block
    ("B", "I think A", "stop", None, "B", "answered"),  # separate field (reasoning_content)
    (None, "I think A", "stop", None, "", "empty"),  # content null, reasoning only
    ("<think>A is likely", None, "stop", None, "", "unclosed"),  # rule 2: never closed, stopped normally
    ("<think>A is likely", None, None, None, "", "unclosed"),  # ... or no finish reason recorded
    ("<think>A is likely", None, "length", None, "", "truncated"),  # ... at the token limit
    ("<think>a</think>B<think>c", None, "stop", None, "", "unclosed"),  # re-opened, never closed
    ("", "so far A", "length", None, "", "truncated"),  # rule 3: the limit, no answer
    ("A is likely, so", None, "length", "on", "", "truncated"),  # rule 3: thinking on, block never closed
    ("Answer: A, hmm", None, "stop", "on", "", "unclosed"),  # thinking on: untagged text is the open block
    ("Answer: A, hmm", None, None, "on", "", "unclosed"),
    ("B", "I think A", "stop", "on", "B", "answered"),  # ... unless a reasoning field took the reasoning
    ("A, surely A</think>B", None, "stop", None, "B", "answered"),  # R1-style: the template opened the block
    ("A, surely A</think>B", None, "stop", "auto", "B", "answered"),
    ("Answer: A. Or is it", None, "length", None, "", "unscored"),  # rule 4: cut, thinking unknown: not read
    ("Answer: A. Or is it", None, "length", "auto", "", "unscored"),
    ("Answer: A. Or is it", None, "length", "on", "", "truncated"),
    ("The answer is B because", None, "length", "off", "The answer is B because", "cut"),  # rule 5
    ("The answer is B because", "so B", "length", None, "The answer is B because", "cut"),  # a field took it
    ("<think>x</think>B, since", None, "length", None, "B, since", "cut"),
    ("<THINK>Answer: A</THINK>B", None, "stop", None, "B", "answered"),  # tags in any case
    ("<Think>Answer: A</think>\nB", None, "stop", None, "B", "answered"),
    ("◁THINK▷A◁/Think▷B", None, None, None, "B", "answered"),
    ("<Thinking>A", None, "length", "off", "", "truncated"),
    (HARMONY_RAW + "B", None, "stop", None, "B", "answered"),  # gpt-oss harmony served raw
    (HARMONY_RAW + "B<|return|>", None, "stop", None, "B", "answered"),
    ("<|channel|>analysis<|message|>Answer: A", None, "length", None, "", "truncated"),
    ("<|channel|>analysis<|message|>Answer: A<|end|>", None, "stop", None, "", "unclosed"),
    ("<think>A</think>   ", None, "stop", None, "", "empty"),  # rule 6
    ("B", 42, None, None, "B", "answered"),  # a reasoning field of the wrong type: ignored, noted
]


@pytest.mark.parametrize(("content", "reasoning", "finish", "thinking", "answer", "status"), RULES)
def test_each_rule(content, reasoning, finish, thinking, answer, status):
    reply = split_reply(content, reasoning, finish, thinking)
    assert (reply.answer, reply.status) == (answer, status)
    assert ("ignored" in reply.note) == (reasoning == 42)


# The chat template's generation prompt, where the backend saw it (``think_opened``), decides over the setting.
OPENED = [
    ("Answer: A. Or is it", "length", "auto", True, "", "truncated"),  # the template opened the block
    ("Answer: A. Or is it", "length", "auto", False, "Answer: A. Or is it", "cut"),  # it did not: the text is answer
    ("B", "stop", "on", False, "B", "answered"),  # thinking on, a template without the switch
    ("Answer: A", "stop", "off", True, "", "unclosed"),
    ("A</think>B", "length", None, True, "B", "cut"),
]


@pytest.mark.parametrize(("content", "finish", "thinking", "opened", "answer", "status"), OPENED)
def test_a_known_template_decides_where_the_reply_begins(content, finish, thinking, opened, answer, status):
    reply = split_reply(content, None, finish, thinking, opened=opened)
    assert (reply.answer, reply.status) == (answer, status)


@pytest.mark.parametrize(
    ("prompt", "opens"),
    [
        ("<|im_start|>assistant\n<think>\n", True),  # Qwen3-Thinking, Qwen3 with enable_thinking
        ("<｜Assistant｜><think>\n", True),  # DeepSeek-R1
        ("<|im_start|>assistant\n<THINK>", True),
        ("<|im_start|>assistant\n<think>\n\n</think>\n\n", False),  # Qwen3 with enable_thinking false
        ("<|im_start|>assistant\n", False),
        ("<|start|>assistant", False),  # gpt-oss: the model writes its channels itself
    ],
)
def test_a_generation_prompt_that_ends_in_an_open_block(prompt, opens):
    assert prompt_opens_think(prompt) is opens


def test_think_tags_are_configurable_and_checked():
    tags = parse_tags([["[R]", "[/R]"]])
    assert split_reply("[R]A[/R]B", tags=tags).answer == "B"
    assert split_reply("<think>A</think>B", tags=tags).answer == "<think>A</think>B"
    assert parse_tags(None) == THINK_TAGS
    with pytest.raises(UsageError, match="--think-tags"):
        parse_tags([["", "</think>"]])


LETTERS = st.sampled_from("ABCD")
NOISE = st.text(st.characters(blacklist_characters="<>◁▷"), max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    reasoning=st.lists(st.one_of(LETTERS, NOISE, LETTERS.map(lambda x: f"Answer: {x}")), max_size=8),
    final=LETTERS,
    tags=st.sampled_from(THINK_TAGS),
    field=st.booleans(),
)
def test_the_scored_letter_comes_from_the_final_answer_only(reasoning, final, tags, field):
    """Whatever letters or "Answer: X" the reasoning holds, inline or in a field, the letter is the final one."""
    thought = " ".join(reasoning)
    content = f"Answer: {final}" if field else f"{tags[0]}{thought}{tags[1]}\nAnswer: {final}"
    reply = split_reply(content, thought if field else None, "stop")
    choices = ["w", "x", "y", "z"]
    assert vqa.extract_robust(reply.answer, choices) == final
    assert reply.answer == f"Answer: {final}"
    assert thought in reply.reasoning


def test_ten_megabytes_of_reasoning_keep_memory_flat():
    thought = "hmm, maybe A. " * (10 * 2**20 // 14)
    content = f"<think>{thought}</think>B"
    tracemalloc.start()
    reply = split_reply(content, None, "stop")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert reply.answer == "B"
    assert peak < 3 * len(content)  # the reasoning copied at most twice, never per character


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
