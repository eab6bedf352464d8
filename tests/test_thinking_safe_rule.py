"""No answer is read from reasoning (issue 48 item 3), end to end through ``cogbench score`` on the real data.

DeepSeek-R1's and Qwen3-Thinking's chat templates open the think block in the prompt: a reply carries only
``...</think>answer``, and one cut at the token limit carries no tag at all. Every reply shape below is scored
as its final answer alone; the expected numbers come from the authors' ``vqa_accuracy.py`` run on those final
answers (an independent derivation), and the judges' requests are read as the judge server got them.
"""

from __future__ import annotations

import json

import pytest
from test_judge_failures import truth_verdict

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.formats.official import write_official
from cogbench.reference_eval.formats.predictions import Prediction

from openai_server import Reply
from oracle_scripts import run_vqa_accuracy
from shared_files import codis_example

HARMONY = "<|channel|>analysis<|message|>Answer: {w}. {w} fits.<|end|><|start|>assistant<|channel|>final<|message|>"


@pytest.fixture(scope="module")
def vqa_rows(built_release):
    return load_config(str(built_release), "vqa").remove_columns("image").to_list()


def _same(text: str) -> dict[str, str]:
    return dict.fromkeys(("auto", "on", "off"), text)


def shaped(row, index) -> tuple[str, str, dict[str, str]]:
    """(reply, finish reason, its final answer under each thinking setting) for one row, by index mod 6.

    The reasoning always names a letter: the right one where reading it would credit the model."""
    right, wrong = "ABCD"[row["answer"]], "ABCD"[(row["answer"] + 1) % 4]
    kind = index % 6
    if kind == 0:  # R1-style: the template opened the block, the reply closes it
        return f"Answer: {wrong}. {wrong} fits best, not {right}.</think>\n\n{right}", "stop", _same(right)
    if kind == 1:  # cut at the limit with no tag: reasoning (thinking on) or answer (off): unknown under auto
        text = f"Answer: {right}. Hmm, or {wrong}"
        return text, "length", {"auto": "", "on": "", "off": text}
    if kind == 2:
        return f"<THINK>Answer: {wrong}</THINK>{right}", "stop", _same(right)
    if kind == 3:  # gpt-oss's harmony channels served raw
        return HARMONY.format(w=wrong) + right + "<|return|>", "stop", _same(right)
    if kind == 4:  # stopped normally inside a block never closed
        return f"<think>Answer: {right}. But", "stop", _same("")
    # no tag: the answer, unless thinking is on (then the block the template opened, never closed)
    return wrong, "stop", {"auto": wrong, "on": "", "off": wrong}


def _file(path, rows, generation=None):
    lines = []
    for index, row in enumerate(rows):
        reply, finish, _ = shaped(row, index)
        prediction = Prediction(
            task="vqa", item_id=row["question_id"], output=reply, finish_reason=finish, generation=generation or {}
        )
        lines.append(prediction.to_json() + "\n")
    path.write_text("".join(lines))
    return path


def _score(built_release, predictions, out, *extra):
    argv = ["score", "--task", "vqa", "--dataset", str(built_release), "--predictions", str(predictions)]
    assert main([*argv, "--out", str(out), *extra]) == 0
    return json.loads((out / "scores.json").read_text())


@pytest.mark.parametrize("setting", ["auto", "on", "off"])
def test_vqa_scores_each_reply_shape_by_its_final_answer_only(built_release, vqa_rows, tmp_path, setting):
    """With thinking unknown (a third-party file, eval's default), stated on, or stated off."""
    predictions = _file(tmp_path / "replies.jsonl", vqa_rows)
    out = tmp_path / "run"
    scores = _score(built_release, predictions, out, *([] if setting == "auto" else ["--thinking", setting]))
    # The authors' script stops on an empty response (IndexError): an item without an answer is a miss, "-" there.
    finals = [
        Prediction(task="vqa", item_id=row["question_id"], output=shaped(row, i)[2][setting] or "-")
        for i, row in enumerate(vqa_rows)
    ]
    oracle = run_vqa_accuracy(write_official("vqa", tmp_path / "finals", vqa_rows, finals))
    assert scores["metrics"]["accuracy_official"]["overall"] / 100 == pytest.approx(oracle["Overall Acc."])
    cut = sum(1 for i in range(len(vqa_rows)) if i % 6 == 1)
    unclosed = sum(1 for i in range(len(vqa_rows)) if i % 6 == 4 or (setting == "on" and i % 6 == 5))
    answers = scores["answers"]
    expected = {"auto": ("unscored", 0), "on": ("truncated", cut), "off": ("cut", 0)}[setting]
    assert answers[expected[0]] == cut and answers["truncated"] == expected[1]
    assert answers["unclosed"] == unclosed
    assert answers.get("thinking", "auto") == setting
    details = [json.loads(line) for line in (out / "details.jsonl").read_text().splitlines()]
    unread = [d for i, d in enumerate(details) if shaped(vqa_rows[i], i)[2][setting] == ""]
    assert len(unread) == cut * (setting != "off") + unclosed
    assert all((d["response"], d["extracted"], d["extracted_official"]) == ("", None, None) for d in unread)
    assert main(["verify", str(out)]) == 0  # the statuses re-derived from each kept reply, by the same rule


def test_the_unscored_count_is_shown_in_report_md_and_the_site(built_release, vqa_rows, tmp_path):
    predictions = _file(tmp_path / "replies.jsonl", vqa_rows)
    out = tmp_path / "run"
    scores = _score(built_release, predictions, out)
    unscored, replies = scores["answers"]["unscored"], scores["answers"]["replies"]
    label = f"UNSCORED ({unscored}/{replies} replies, {100 * unscored / replies:.1f}%: cut at the token limit"
    assert label in (out / "report.md").read_text()
    site = tmp_path / "site"
    assert main(["report", str(out), "--site", str(site), "--permutations", "99"]) == 0
    data = (site / "data" / "site.js").read_text()
    run = json.loads(data.split('window.COGBENCH["site"]=', 1)[1].rstrip().rstrip(";"))["runs"][0]
    assert any(text.startswith(label) for text in run["coverage"])
    assert (site / "data" / "items-vqa.js").read_text().count('"status":"unscored"') == unscored


def test_a_predictions_files_thinking_on_is_read(built_release, vqa_rows, tmp_path, capsys):
    """``generation.thinking: on`` (what `eval --thinking on` writes): a reply with no closing tag and no
    reasoning field is the open block, whether it stopped normally or not; the same file without it is read as given."""
    rows = vqa_rows[:12]
    lines = {}
    for name, generation in (("stated", {"thinking": "on"}), ("silent", {})):
        lines[name] = "".join(
            Prediction(
                task="vqa",
                item_id=row["question_id"],
                output="ABCD"[row["answer"]],
                finish_reason="stop",
                generation=generation,
            ).to_json()
            + "\n"
            for row in rows
        )
        (tmp_path / f"{name}.jsonl").write_text(lines[name])
    stated = _score(built_release, tmp_path / "stated.jsonl", tmp_path / "on", "--allow-partial")
    silent = _score(built_release, tmp_path / "silent.jsonl", tmp_path / "plain", "--allow-partial")
    assert (stated["answers"]["unclosed"], stated["metrics"]["accuracy"]["overall_partial"]) == (12, 0.0)
    assert (silent["answers"]["answered"], silent["metrics"]["accuracy"]["overall_partial"]) == (12, 100.0)
    assert main(["verify", str(tmp_path / "on")]) == 0
    capsys.readouterr()
    argv = ["score", "--task", "vqa", "--dataset", str(built_release), "--predictions", str(tmp_path / "stated.jsonl")]
    assert main([*argv, "--out", str(tmp_path / "off"), "--allow-partial", "--thinking", "off"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {tmp_path / 'stated.jsonl'}: item '{rows[0]['question_id']}'")
    assert "generation.thinking is 'on' but --thinking off was given" in err[0]
    assert not (tmp_path / "off" / "scores.json").exists()


def test_no_judge_sees_text_from_reasoning(built_release, tmp_path, openai_server, monkeypatch):
    """CODIS: the rule judge and the LLM judge get the final answer only; a reply cut with no tag (thinking
    unknown), a block never closed and an R1-style reply carry a marker in their reasoning that no request holds."""
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    pairs = json.loads(codis_example().read_text())
    lines = []
    for index, pair in enumerate(pairs):
        for query in (1, 2):
            truth = pair["output"][f"output_{query}"]
            record = {"task": "codis", "item_id": pair["id"], "query": query, "finish_reason": "stop"}
            thought = f"MARKER-{index}-{query}: the answer is {truth}"
            output = {
                0: (thought, "length"),
                1: (f"<think>{thought}", "stop"),
                2: (f"{thought}</think>{truth}", "stop"),
                3: (f"<Think>{thought}</Think>{truth}", "stop"),
            }.get(index % 5, (truth, "stop"))
            record.update(output=output[0], finish_reason=output[1])
            lines.append(json.dumps(record) + "\n")
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(lines))
    asked: list[str] = []

    def judge(request):
        asked.append(request.prompt_text)
        return Reply(text=truth_verdict(request))

    server = openai_server(judge)
    runs = {}
    for name, extra in (("rule", []), ("llm", ["--judge", "openai:judge", "--judge-base-url", server.base_url])):
        out = tmp_path / name
        argv = ["score", "--task", "codis", "--dataset", str(built_release), "--predictions", str(path)]
        assert main([*argv, "--out", str(out), *extra]) == 0
        runs[name] = [json.loads(line) for line in (out / "details.jsonl").read_text().splitlines()]
    assert asked and not any("MARKER" in prompt for prompt in asked)  # (identical prompts are asked once)
    for details in runs.values():
        for index, line in enumerate(details):
            for query in line["queries"]:
                assert "MARKER" not in query["output"] + query["final_answer"]
                no_answer = index % 5 in (0, 1)
                assert query["answer_status"] == (("unscored", "unclosed")[index % 5] if no_answer else "answered")
                assert query["rule_right"] is (not no_answer) and query["right"] is (not no_answer)


def test_verify_refuses_an_unread_reply_made_an_answer(built_release, vqa_rows, tmp_path, capsys):
    """An unscored reply relabelled cut, its thought put back as the response, is caught: verify splits the
    kept reply again by the same rule."""
    predictions = _file(tmp_path / "replies.jsonl", vqa_rows[:6])
    out = tmp_path / "run"
    _score(built_release, predictions, out, "--allow-partial")
    assert main(["verify", str(out)]) == 0
    path = out / "details.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    unread = lines[1]
    assert unread["answer_status"] == "unscored"
    unread.update(answer_status="cut", response=unread["reply"]["content"])
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    assert main(["verify", str(out)]) != 0
    printed = capsys.readouterr()
    assert f"item {unread['item_id']}: final answer and status" in printed.out + printed.err
