"""Models that reason, through the ``openai:`` backend: each provider's documented reply shape,
replayed by the real local server (tests/openai_server.py), reaches predictions.jsonl as it
should (issue 39), online and through request files; ``--thinking`` reaches the request body.

The reply shapes, each from its provider's documentation:

- DeepSeek (https://api-docs.deepseek.com/guides/reasoning_model): ``message.reasoning_content``
  beside ``message.content``; usage's ``completion_tokens_details.reasoning_tokens``
  (https://api-docs.deepseek.com/api/create-chat-completion).
- OpenRouter (https://openrouter.ai/docs/use-cases/reasoning-tokens): ``message.reasoning`` (a
  string) with ``message.reasoning_details`` (a list of objects), and reasoning tokens in usage.
- OpenAI reasoning models (https://platform.openai.com/docs/guides/reasoning): the reasoning is
  hidden, ``content`` only, ``usage.completion_tokens_details.reasoning_tokens``; a reply whose
  budget ran out in the reasoning has ``finish_reason: "length"`` and empty content.
- vLLM's reasoning parser (https://docs.vllm.ai/en/latest/features/reasoning_outputs.html):
  ``message.reasoning_content``, ``content`` null when the reasoning did not end (the budget ran
  out), ``finish_reason: "length"``.
"""

from __future__ import annotations

import json

import pytest

from cogbench.cli import main
from cogbench.reference_eval.answers.reasoning import split_reply
from cogbench.reference_eval.formats.predictions import read_predictions

from openai_server import Reply, answer_as_engine, request_lines

REASONING = "The image shows a red car; the context says it is parked. Answer: B? No, A."

SHAPES = {
    "deepseek": (
        Reply(
            message={"role": "assistant", "content": "yes", "reasoning_content": REASONING},
            completion_tokens=40,
            completion_details={"reasoning_tokens": 38},
        ),
        {
            "output": "yes",
            "reasoning": REASONING,
            "finish_reason": "stop",
            "tokens": {"completion": 40, "reasoning": 38},
        },
    ),
    "openrouter": (
        Reply(
            message={
                "role": "assistant",
                "content": "yes",
                "reasoning": REASONING,
                "reasoning_details": [{"type": "reasoning.text", "text": REASONING, "format": "unknown", "index": 0}],
            },
            completion_tokens=40,
            completion_details={"reasoning_tokens": 38},
        ),
        {
            "output": "yes",
            "reasoning": REASONING,
            "finish_reason": "stop",
            "tokens": {"completion": 40, "reasoning": 38},
        },
    ),
    "openai-reasoning": (
        Reply(text="yes", completion_tokens=300, completion_details={"reasoning_tokens": 298, "audio_tokens": 0}),
        {"output": "yes", "reasoning": "", "finish_reason": "stop", "tokens": {"completion": 300, "reasoning": 298}},
    ),
    "openai-reasoning-out-of-tokens": (
        Reply(text="", finish_reason="length", completion_tokens=64, completion_details={"reasoning_tokens": 64}),
        {"output": "", "reasoning": "", "finish_reason": "length", "tokens": {"completion": 64, "reasoning": 64}},
    ),
    "vllm-reasoning-parser-truncated": (
        Reply(
            message={"role": "assistant", "content": None, "reasoning_content": REASONING},
            finish_reason="length",
            completion_tokens=64,
        ),
        {"output": "", "reasoning": REASONING, "finish_reason": "length", "tokens": {"completion": 64}},
    ),
    "wrong-type-reasoning": (
        Reply(message={"role": "assistant", "content": "<think>x</think>yes", "reasoning_content": 42}),
        {"output": "<think>x</think>yes", "reasoning": "", "finish_reason": "stop", "tokens": {"completion": 2}},
    ),
}


def _argv(server, dataset, out, *extra):
    return [
        "eval",
        "--task",
        "codis",
        "--model",
        "openai:thinker",
        *(["--base-url", server.base_url] if server else []),
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--limit",
        "1",
        "--no-score",
        *extra,
    ]


def _fields(prediction) -> dict:
    return {name: getattr(prediction, name) for name in ("output", "reasoning", "finish_reason", "tokens")}


@pytest.mark.parametrize("shape", SHAPES)
def test_each_documented_reply_shape_reaches_the_predictions(
    shape, openai_server, built_release, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    reply, expected = SHAPES[shape]
    server = openai_server(lambda request: reply)
    out = tmp_path / "run"
    assert main(_argv(server, built_release, out)) == 0  # content null beside a reasoning is a reply, not a failure
    predictions = read_predictions(out / "predictions.jsonl")
    assert len(predictions) == 2 and all(_fields(p) == expected for p in predictions)
    assert all(p.generation["thinking"] == "auto" for p in predictions)
    warnings = capsys.readouterr().err
    assert ("reasoning_content: reasoning field of type int ignored" in warnings) == (shape == "wrong-type-reasoning")


def test_scored_answers_of_the_shapes(openai_server, built_release, tmp_path, monkeypatch):
    """What the scoring side reads of each shape (answers.reasoning.split_reply): the reasoning never
    becomes the answer, and a reply whose budget ran out in the reasoning is no answer."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    status = {}
    for shape, (reply, _) in SHAPES.items():
        server = openai_server(lambda request, reply=reply: reply)
        out = tmp_path / shape
        assert main(_argv(server, built_release, out)) == 0
        (first, *_) = read_predictions(out / "predictions.jsonl")
        split = split_reply(first.output, first.reasoning, first.finish_reason)
        status[shape] = (split.answer, split.status)
    assert status == {
        "deepseek": ("yes", "answered"),
        "openrouter": ("yes", "answered"),
        "openai-reasoning": ("yes", "answered"),
        "openai-reasoning-out-of-tokens": ("", "truncated"),
        "vllm-reasoning-parser-truncated": ("", "truncated"),
        "wrong-type-reasoning": ("yes", "answered"),
    }


def test_thinking_on_reaches_the_request_body_and_auto_sends_nothing(
    openai_server, built_release, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    server = openai_server(lambda request: Reply(text="<think>hm</think>yes"))
    for setting in ("auto", "on", "off"):
        assert main(_argv(server, built_release, tmp_path / setting, "--thinking", setting)) == 0
    bodies = {}
    for request in server.chat_requests:
        kwargs = request.body.get("chat_template_kwargs")
        bodies.setdefault(json.dumps(kwargs), set()).add(request.body["max_tokens"])
    # auto: no unknown field for the OpenAI API and the task's budget (codis 512); on: the
    # thinking budget (32768, the Qwen3 model cards' output length for thinking mode).
    assert bodies == {
        "null": {512},
        json.dumps({"enable_thinking": True}): {32768},
        json.dumps({"enable_thinking": False}): {512},
    }
    for setting in ("auto", "on", "off"):
        run = json.loads((tmp_path / setting / "run.json").read_text())
        assert run["generation"]["thinking"] == setting
        assert {p.generation["thinking"] for p in read_predictions(tmp_path / setting / "predictions.jsonl")} == {
            setting
        }


def test_a_run_made_before_the_thinking_setting_resumes_as_auto(openai_server, built_release, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    server = openai_server(lambda request: Reply(text="yes"))
    out = tmp_path / "run"
    assert main(_argv(server, built_release, out)) == 0
    record = json.loads((out / "run.json").read_text())
    del record["generation"]["thinking"]  # as cogbench wrote it before the setting existed
    (out / "run.json").write_text(json.dumps(record))
    assert main(_argv(server, built_release, out)) == 0
    assert main(_argv(server, built_release, out, "--thinking", "on")) == 1  # a different run: refused


def test_request_files_carry_the_setting_and_responses_keep_the_reasoning(
    openai_server, built_release, tmp_path, monkeypatch
):
    """--write-requests bodies are the online ones (chat_template_kwargs with --thinking on); a vLLM
    run-batch / Batch API output line's ``body`` is a chat completion: read with the same rules."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    requests = tmp_path / "requests"
    run = tmp_path / "run"
    assert main(_argv(None, built_release, run, "--thinking", "on", "--write-requests", str(requests))) == 0
    lines = request_lines(requests)
    assert len(lines) == 2
    assert all(line["body"]["chat_template_kwargs"] == {"enable_thinking": True} for line in lines)
    assert all(line["body"]["max_tokens"] == 32768 for line in lines)
    reply, expected = SHAPES["vllm-reasoning-parser-truncated"]
    server = openai_server(lambda request: reply)
    outputs = answer_as_engine(server, lines, tmp_path / "out.jsonl")
    assert main(_argv(None, built_release, run, "--thinking", "on", "--read-responses", str(outputs))) == 0
    predictions = read_predictions(run / "predictions.jsonl")
    assert [_fields(p) for p in predictions] == [expected, expected]
    assert {p.generation["thinking"] for p in predictions} == {"on"}


def test_structured_regex_reaches_the_body_is_recorded_and_a_different_one_is_another_run(
    openai_server, built_release, tmp_path, monkeypatch, capsys
):
    """--structured-regex is vLLM's ``structured_outputs`` field (tests/test_vllm_thinking.py runs it
    for real); unset, the body has no such field. hf: has no structured outputs: refused, one line."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    server = openai_server(lambda request: Reply(text="abc</think>Answer: B"))
    regex = "[a-z]{1,9}</think>Answer: [A-D]"
    assert main(_argv(server, built_release, tmp_path / "plain")) == 0
    assert main(_argv(server, built_release, tmp_path / "run", "--structured-regex", regex)) == 0
    bodies = [request.body.get("structured_outputs") for request in server.chat_requests]
    assert bodies == [None, None, {"regex": regex}, {"regex": regex}]
    assert "structured_regex" not in json.loads((tmp_path / "plain" / "run.json").read_text())["generation"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["generation"]["structured_regex"] == regex
    assert {p.generation["structured_regex"] for p in read_predictions(tmp_path / "run" / "predictions.jsonl")} == {
        regex
    }
    requests = tmp_path / "requests"
    batch = _argv(
        None, built_release, tmp_path / "batch", "--structured-regex", regex, "--write-requests", str(requests)
    )
    assert main(batch) == 0
    assert all(line["body"]["structured_outputs"] == {"regex": regex} for line in request_lines(requests))
    capsys.readouterr()
    assert main(_argv(server, built_release, tmp_path / "run", "--structured-regex", "[A-D]")) == 1  # another run
    assert "structured_regex" in capsys.readouterr().err
    hf = ["eval", "--task", "codis", "--model", "hf:x", "--dataset", str(built_release), "--out", str(tmp_path / "hf")]
    assert main([*hf, "--structured-regex", regex]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: --structured-regex")


def test_verify_passes_an_eval_run_whose_replies_think_inline(openai_server, built_release, tmp_path, monkeypatch):
    """scores.json hashes the final answers; verify hashes predictions.jsonl the same way, not the
    reply as written (an inline block, as `vllm:` and `hf:` write it; tests/test_vllm_thinking.py)."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    server = openai_server(lambda request: Reply(text="<think>Not a dog? Answer: no</think>yes"))
    out = tmp_path / "run"
    assert main([word for word in _argv(server, built_release, out) if word != "--no-score"]) == 0
    assert main(["verify", str(out / "score")]) == 0
