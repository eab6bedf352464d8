"""A model that refuses (issue 50 item 5): OpenAI-compatible chat completions put the refusal in
``choices[0].message.refusal`` (https://platform.openai.com/docs/guides/structured-outputs#refusals), most
often beside ``content: null``. ``eval`` through the ``openai:`` backend keeps it in predictions.jsonl's
``refusal``, scoring scores the empty content as an empty answer (not a failed query) and keeps the refusal in
details' ``reply``, ``verify`` checks the one against the other, and the board's health counts refusals.

The loopback server (tests/openai_server.py) refuses the 1st and 3rd of 4 VQA questions, asked one at a time."""

from __future__ import annotations

import json
import shutil
import threading

import pytest

from cogbench.cli import main
from cogbench.reference_eval.backends.batch_files import read_responses
from cogbench.reference_eval.explaining.stages import compare_item, shown_fields
from cogbench.reference_eval.formats.predictions import Prediction, read_predictions
from cogbench.reference_eval.site.board_health import health

from openai_server import Reply

NULL_CONTENT = "I'm sorry, I can't help with that."  # OpenAI's shape: content null
WITH_CONTENT = "I cannot identify people."  # a server that sends content beside its refusal


def _refusing_responder():
    """Question 1: a refusal with content null; question 3: a refusal beside the content "B"; else "A"."""
    lock, asked = threading.Lock(), [0]

    def responder(request):
        with lock:
            asked[0] += 1
            number = asked[0]
        if number == 1:
            return Reply(refusal=NULL_CONTENT)
        if number == 3:
            return Reply(text="B", refusal=WITH_CONTENT)
        return Reply(text="A")

    return responder


@pytest.fixture(scope="module")
def refused_run(built_release, tmp_path_factory):
    from openai_server import OpenAIServer

    out = tmp_path_factory.mktemp("refusals") / "run"
    with OpenAIServer(_refusing_responder()) as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "test")
        argv = ["eval", "--task", "vqa", "--model", "openai:refuser", "--base-url", server.base_url]
        argv += ["--dataset", str(built_release), "--out", str(out), "--limit", "4", "--concurrency", "1"]
        assert main(argv) == 0  # no query failed: a refusal is a reply
    return out


def _details(run) -> list[dict]:
    return [json.loads(line) for line in (run / "score" / "details.jsonl").read_text().splitlines()]


def test_a_refusal_reaches_predictions_and_details_and_scores_as_an_empty_answer(refused_run):
    lines = (refused_run / "predictions.jsonl").read_text().splitlines()
    predictions = read_predictions(refused_run / "predictions.jsonl")
    assert [(p.output, p.refusal) for p in predictions] == [
        ("", NULL_CONTENT),
        ("A", ""),
        ("B", WITH_CONTENT),
        ("A", ""),
    ]
    assert ['"refusal"' in line for line in lines] == [True, False, True, False]  # absent when none
    details = {d["item_id"]: d for d in _details(refused_run)}
    units = [details[p.item_id] for p in predictions]
    assert [(u["response"], u["answer_status"], u["extracted"]) for u in units] == [
        ("", "empty", None),  # as the task scores an empty answer
        ("A", "answered", "A"),
        ("B", "answered", "B"),  # content beside a refusal is scored as written
        ("A", "answered", "A"),
    ]
    assert [u.get("reply") for u in units] == [
        {"refusal": NULL_CONTENT, "finish_reason": "stop", "thinking": "auto"},
        {"finish_reason": "stop", "thinking": "auto"},
        {"refusal": WITH_CONTENT, "finish_reason": "stop", "thinking": "auto"},
        {"finish_reason": "stop", "thinking": "auto"},
    ]
    scores = json.loads((refused_run / "score" / "scores.json").read_text())
    assert scores["answers"]["empty"] == 1 and scores["answers"]["answered"] == 3


def test_a_plain_prediction_line_is_written_as_before():
    """The line of a reply without a refusal, byte for byte as before the field existed (written out by hand)."""
    line = Prediction(task="vqa", item_id="7", output="A", finish_reason="stop").to_json()
    assert line == (
        '{"finish_reason": "stop", "generation": {}, "item_id": "7", "model": "", "output": "A", "prompt_id": "", '
        '"prompt_sha256": "", "query": null, "reasoning": "", "rendered_prompt_sha256": "", "seconds": null, "task": "vqa", '
        '"think_opened": null, "tokens": {}}'
    )
    assert '"refusal": "no"' in Prediction(task="vqa", item_id="7", output="", refusal="no").to_json()


def _verify(folder, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(folder)])
    return code, capsys.readouterr().out


def _edit_lines(path, edit) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    edit(lines)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _refused(lines, refused: bool = True) -> dict:
    return next(line for line in lines if ("refusal" in line["reply"]) == refused)


EDITS = {
    "details: refusal text changed": (
        "score/details.jsonl",
        lambda lines: _refused(lines)["reply"].update(refusal="edited"),
    ),
    "details: refusal added to an answer that had none": (
        "score/details.jsonl",
        lambda lines: _refused(lines, False)["reply"].update(refusal="made up"),
    ),
    "predictions: refusal dropped": (
        "predictions.jsonl",
        lambda lines: next(line for line in lines if "refusal" in line).pop("refusal"),
    ),
}


@pytest.mark.parametrize("edit", EDITS)
def test_verify_checks_each_refusal_against_predictions(refused_run, tmp_path, capsys, edit):
    folder = shutil.copytree(refused_run, tmp_path / "run")
    code, out = _verify(folder / "score", capsys)
    assert code == 0, out
    path, change = EDITS[edit]
    _edit_lines(folder / path, change)
    code, out = _verify(folder / "score", capsys)
    assert code == 1 and "reply (predictions.jsonl's finish_reason, thinking, reasoning, refusal)" in out, out


def test_the_board_health_counts_refusals_of_an_openai_run_only(refused_run, tmp_path):
    details = _details(refused_run)
    figures = health("vqa", details, refused_run / "predictions.jsonl")
    assert figures["answers"] == 4
    assert figures["refusals"] == {"n": 2, "pct": 50.0, "t": "50.0% (2)"}
    assert figures["empty"] == {"n": 1, "pct": 25.0, "t": "25.0% (1)"}  # only the refusal without content
    # The same replies made by another backend, which reads no refusal field: not recorded, never a made-up 0.
    other = tmp_path / "predictions.jsonl"
    _edit_lines(
        shutil.copy(refused_run / "predictions.jsonl", other),
        lambda lines: [line["generation"].update(backend="hf") for line in lines],
    )
    assert health("vqa", details, other)["refusals"] == {"n": None, "pct": None, "t": "n/a"}
    # An openai run without a refusal: a real 0.
    plain = [{**d, "reply": {k: v for k, v in d["reply"].items() if k != "refusal"}} for d in details]
    assert health("vqa", plain, refused_run / "predictions.jsonl")["refusals"] == {"n": 0, "pct": 0.0, "t": "0.0% (0)"}


def test_a_refusal_in_request_file_output_is_a_reply(tmp_path):
    """``eval --responses``: the Batch API output line of a refusal reads as an empty reply with its refusal."""
    message = {"role": "assistant", "content": None, "refusal": NULL_CONTENT}
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    line = {"custom_id": "a@1", "response": {"status_code": 200, "body": body}}
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(line) + "\n")
    response = read_responses([str(path)])["a@1"]
    assert (response.text, response.error, response.refusal) == ("", None, NULL_CONTENT)


def test_explain_tells_a_refused_reply_from_an_empty_one():
    """Two scorings of one item, both an empty answer, one of them refused: the output stage differs, and the
    side-by-side fields show the refusal (absent where there is none, as before)."""
    empty = {"item_id": "1", "image_id": "i", "category": "Event", "answer": "B", "response": "", "extracted": None}
    empty |= {"extracted_official": None, "correct": False, "correct_official": False, "answer_status": "empty"}
    refused = {**empty, "reply": {"refusal": NULL_CONTENT}}
    assert compare_item("vqa", empty, refused, None, None).differing == ["output"]
    assert compare_item("vqa", refused, refused, None, None).differing == []
    assert shown_fields("vqa", refused)["answer"]["refusal"] == NULL_CONTENT
    assert "refusal" not in shown_fields("vqa", empty)["answer"]


def test_a_refusal_that_is_not_a_string_is_refused_by_file_line_and_field(tmp_path):
    from cogbench.errors import UsageError

    path = tmp_path / "predictions.jsonl"
    path.write_text(json.dumps({"task": "vqa", "item_id": "1", "output": "", "refusal": 7}) + "\n")
    with pytest.raises(UsageError, match=r"line 1: field refusal: not a string$"):
        read_predictions(path)
