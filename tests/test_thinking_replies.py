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
from cogbench.reference_eval.answers.reasoning import THINK_TAGS, parse_tags, split_reply
from cogbench.reference_eval.formats.official import write_official
from cogbench.reference_eval.formats.predictions import Prediction
from cogbench.reference_eval.metrics import vqa
from cogbench.reference_eval.publishing.hub_results import results_notes
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from oracle_scripts import run_vqa_accuracy
from shared_files import codis_example

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
    ("<think>A is likely", None, "stop", None, "", "truncated"),  # rule 2: never closed
    ("<think>a</think>B<think>c", None, "stop", None, "", "truncated"),  # re-opened, never closed
    ("", "so far A", "length", None, "", "truncated"),  # rule 3: the limit, no answer
    ("A is likely, so", None, "length", "on", "", "truncated"),  # rule 3: thinking on, block never closed
    ("The answer is B because", None, "length", None, "The answer is B because", "cut"),  # rule 4
    ("<think>x</think>B, since", None, "length", None, "B, since", "cut"),
    ("<think>A</think>   ", None, "stop", None, "", "empty"),  # rule 5
    ("B", 42, None, None, "B", "answered"),  # a reasoning field of the wrong type: ignored, noted
]


@pytest.mark.parametrize(("content", "reasoning", "finish", "thinking", "answer", "status"), RULES)
def test_each_rule(content, reasoning, finish, thinking, answer, status):
    reply = split_reply(content, reasoning, finish, thinking)
    assert (reply.answer, reply.status) == (answer, status)
    assert ("ignored" in reply.note) == (reasoning == 42)


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


def test_codis_truncation_is_no_answer_counted_and_labelled_everywhere(built_release, tmp_path, capsys):
    """The authors' example holds the ground truth: with K queries truncated, Acc_q is exactly (706 - K) / 706."""
    pairs = json.loads(codis_example().read_text())
    lines, truncated = [], set()
    for index, pair in enumerate(pairs):
        for query in (1, 2):
            truth = pair["output"][f"output_{query}"]
            record = {"task": "codis", "item_id": pair["id"], "query": query, "finish_reason": "stop"}
            if index % 10 == 0 and query == 1:  # reasoning only, then the token limit
                record.update(output="", reasoning=f"The answer may be {truth}", finish_reason="length")
                truncated.add(pair["id"])
            elif index % 10 == 5:  # an inline block never closed
                record.update(output=f"<think>It is {truth}")
                truncated.add(pair["id"])
            else:
                record.update(output=f"<think>not {truth}?</think>{truth}")
            lines.append(json.dumps(record) + "\n")
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(lines))
    out = tmp_path / "run"
    args = ["score", "--task", "codis", "--dataset", str(built_release), "--predictions", str(path), "--out", str(out)]
    assert main(args) == 0
    scores = json.loads((out / "scores.json").read_text())
    n_truncated = sum(1 for i in range(len(pairs)) if i % 10 == 0) + 2 * sum(
        1 for i in range(len(pairs)) if i % 10 == 5
    )
    answers = scores["answers"]
    assert (answers["replies"], answers["truncated"], answers["answered"]) == (706, n_truncated, 706 - n_truncated)
    assert scores["metrics"]["acc_q"]["overall"] == pytest.approx(100 * (706 - n_truncated) / 706)
    assert scores["metrics"]["acc_p"]["overall"] == pytest.approx(100 * (353 - len(truncated)) / 353)
    assert sum(c["truncated"] for c in answers["per_category"].values()) == n_truncated
    label = f"TRUNCATED ({n_truncated}/706 replies"
    assert label in capsys.readouterr().out  # the summary
    assert label in (out / "report.md").read_text()
    assert f"no answer (truncated) {n_truncated} of 706 replies" in results_notes(scores, "acc_p")
    report = tmp_path / "report"
    assert main(["report", str(out), "--out", str(report)]) == 0
    row = next(csv.DictReader((report / "leaderboard.csv").open()))
    assert (row["truncated"], row["replies"]) == (str(n_truncated), "706")
    assert label in (report / "report.md").read_text()
    # details keep the reasoning and say why each reply scored as it did
    details = [json.loads(line) for line in (out / "details.jsonl").read_text().splitlines()]
    first = details[0]["queries"][0]
    assert first["answer_status"] == "truncated" and first["output"] == ""
    assert first["reply"] == {
        "reasoning": f"The answer may be {pairs[0]['output']['output_1']}",
        "finish_reason": "length",
    }


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
    assert scores["answers"]["truncated"] == len(expected) - sum(expected)


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
