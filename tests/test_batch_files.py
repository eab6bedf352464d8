"""Batch API output lines read back (backends/batch_files.py), one line shape at a time: fast, no dataset.

The lines are written here as the Batch API documents them (``response.status_code``, ``response.body``,
``error``), so each expectation follows from the line itself, not from our reader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogbench.errors import CogbenchError
from cogbench.reference_eval.backends.batch_files import read_responses


def answered(custom_id: str, text: str, status: int = 200, tokens: int = 3) -> dict:
    body = {"choices": [{"message": {"role": "assistant", "content": text}}], "usage": {"completion_tokens": tokens}}
    return {"custom_id": custom_id, "response": {"status_code": status, "body": body}, "error": None}


def failed(custom_id: str, message: str) -> dict:
    return {"custom_id": custom_id, "response": None, "error": {"code": "server_error", "message": message}}


def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("error_first", [False, True])
def test_an_error_line_never_replaces_an_answer_for_the_same_custom_id(tmp_path, error_first):
    """A retried request leaves an error and an answer in the output, in either order: the answer is kept."""
    lines = [answered("item-1@abc", "The cat."), failed("item-1@abc", "engine died")]
    path = write_lines(tmp_path / "out.jsonl", lines[::-1] if error_first else lines)
    (response,) = read_responses([str(path)]).values()
    assert (response.text, response.error, response.completion_tokens) == ("The cat.", None, 3)
    assert response.where == f"{path} line {2 if error_first else 1}"


def test_two_errors_for_one_custom_id_keep_the_first(tmp_path):
    path = write_lines(tmp_path / "out.jsonl", [failed("q@1", "first"), failed("q@1", "second")])
    assert read_responses([str(path)])["q@1"].error == "engine error: first"


def test_a_response_whose_http_status_is_not_200_is_an_error_even_with_a_body(tmp_path):
    """vLLM's run-batch and the Batch API put a failed request's status beside a body; its text is no answer."""
    path = write_lines(
        tmp_path / "out.jsonl",
        [answered("a@1", "rate limited", status=429), answered("b@2", "fine"), answered("c@3", "oops", status=500)],
    )
    responses = read_responses([str(path)])
    assert {name: (r.text, r.error) for name, r in responses.items()} == {
        "a@1": (None, "HTTP 429"),
        "b@2": ("fine", None),
        "c@3": (None, "HTTP 500"),
    }


def test_a_response_without_a_status_is_read_as_200(tmp_path):
    record = answered("a@1", "The dog.")
    del record["response"]["status_code"]
    path = write_lines(tmp_path / "out.jsonl", [record])
    assert read_responses([str(path)])["a@1"].text == "The dog."


def test_the_same_answer_twice_is_kept_once_and_two_answers_are_refused(tmp_path):
    same = write_lines(tmp_path / "same.jsonl", [answered("a@1", "x"), answered("a@1", "x")])
    assert read_responses([str(same)])["a@1"].where == f"{same} line 1"
    different = write_lines(tmp_path / "different.jsonl", [answered("a@1", "x"), answered("a@1", "y")])
    with pytest.raises(
        CogbenchError, match=r"line 2: custom_id 'a@1' answered twice, differently \(also at .* line 1\)"
    ):
        read_responses([str(different)])
