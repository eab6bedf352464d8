"""The ``vllm:`` backend's own logic (chunks, pairing, stripping, the one-by-one retry), without vLLM.

``answer_queries`` hands each chunk to ``LLM.chat`` and pairs the outputs with the queries. What vLLM itself
does (the answers, their equality with ``vllm serve``) is tested with the real engine in
tests/test_vllm_server.py (marker ``vllm``, CI's .ci/run-vllm); here a stand-in engine with ``LLM.chat``'s
documented shape (one ``RequestOutput`` per conversation, in order, ``.outputs[0].text`` and
``.token_ids``) answers each conversation with its own prompt, so a reply given to the wrong query shows.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import time
import types
from types import SimpleNamespace

import pytest
import torch

from cogbench.errors import CogbenchError, UsageError
from cogbench.reference_eval.backends.vllm_offline import (
    EngineOptions,
    VLLMSettings,
    answer_queries,
    load_engine,
    placement,
    recorded_settings,
)
from cogbench.reference_eval.tasks.queries import Query


class StandInEngine:
    """``LLM.chat`` as vLLM returns it: replies padded with whitespace, one token id per word, each
    completion with its finish reason (vLLM's ``CompletionOutput.finish_reason``)."""

    def __init__(self, refuse: str | None = None):
        self.calls: list[list[str]] = []
        self.params: list = []
        self.refuse = refuse  # a prompt that makes any call holding it raise, as a too-long prompt does

    def get_default_sampling_params(self):
        return SimpleNamespace(temperature=0.7, max_tokens=16, ignore_eos=False, top_p=0.9)

    def chat(self, chats, params, use_tqdm=True):
        assert use_tqdm is False
        prompts = [chat[0]["content"][-1]["text"] for chat in chats]
        self.calls.append(prompts)
        self.params.append(params)
        if self.refuse in prompts:
            raise ValueError(f"prompt {self.refuse!r} is longer than the maximum model length")
        return [
            SimpleNamespace(
                outputs=[
                    SimpleNamespace(
                        text=f"\n  answer to {p}  \n", token_ids=list(range(len(p.split()))), finish_reason="stop"
                    )
                ]
            )
            for p in prompts
        ]


def blind_queries(count: int) -> list[Query]:
    return [Query(f"item-{n}", None, n, f"prompt number {n}", with_image=False) for n in range(count)]


def test_each_chunk_pairs_every_output_with_its_own_query_stripped():
    engine, queries, failures = StandInEngine(), blind_queries(7), []
    settings = VLLMSettings(model="m", max_new_tokens=32, chunk_size=3)
    chunks = list(answer_queries(engine, settings, queries, images=None, failures=failures))
    assert [len(chunk) for chunk in chunks] == [3, 3, 1]
    assert engine.calls == [[f"prompt number {n}" for n in range(s, min(s + 3, 7))] for s in (0, 3, 6)]
    answers = [answer for chunk in chunks for answer in chunk]
    assert [a.query for a in answers] == queries
    assert [a.output for a in answers] == [f"answer to prompt number {n}" for n in range(7)]
    assert {a.generated_tokens for a in answers} == {3}
    assert failures == []
    # vllm serve's defaults for an openai: request: the model's own, greedy, with the task's token budget
    params = engine.params[0]
    assert (params.temperature, params.max_tokens, params.ignore_eos, params.top_p) == (0.0, 32, False, 0.9)


def test_a_refused_chunk_is_asked_query_by_query_and_only_the_failing_one_is_left(tmp_path):
    engine, queries, failures = StandInEngine(refuse="prompt number 4"), blind_queries(6), []
    settings = VLLMSettings(model="m", max_new_tokens=8, chunk_size=4, ignore_eos=True)
    chunks = list(answer_queries(engine, settings, queries, images=None, failures=failures))
    answers = [answer for chunk in chunks for answer in chunk]
    assert [a.query.item_id for a in answers] == ["item-0", "item-1", "item-2", "item-3", "item-5"]
    assert [a.output for a in answers] == [f"answer to prompt number {n}" for n in (0, 1, 2, 3, 5)]
    assert engine.calls[2:] == [["prompt number 4"], ["prompt number 5"]]  # the second chunk, one at a time
    assert failures == [
        "item item-4 query None: ValueError: prompt 'prompt number 4' is longer than the maximum model length"
    ]
    assert engine.params[0].ignore_eos is True


def test_an_output_with_no_token_ids_records_no_token_count():
    class NoTokens(StandInEngine):
        def chat(self, chats, params, use_tqdm=True):
            outputs = super().chat(chats, params, use_tqdm)
            for output in outputs:
                output.outputs[0].token_ids = []
            return outputs

    (chunk,) = answer_queries(NoTokens(), VLLMSettings("m", 4), blind_queries(1), None, [])
    assert chunk[0].generated_tokens is None and chunk[0].output == "answer to prompt number 0"


def test_each_answer_keeps_its_completions_finish_reason_and_none_is_empty():
    """vLLM's ``finish_reason`` is "stop" or "length" once a completion ends, None while it runs:
    a truncated answer must say "length"; None (no reason) is recorded as ""."""

    class Reasons(StandInEngine):
        def chat(self, chats, params, use_tqdm=True):
            outputs = super().chat(chats, params, use_tqdm)
            for output, reason in zip(outputs, ("length", None, "stop")):
                output.outputs[0].finish_reason = reason
            return outputs

    (chunk,) = answer_queries(Reasons(), VLLMSettings("m", 4, chunk_size=3), blind_queries(3), None, [])
    assert [a.finish_reason for a in chunk] == ["length", "", "stop"]


@pytest.mark.parametrize(
    ("thinking", "options"),
    [
        ("on", {"chat_template_kwargs": {"enable_thinking": True}}),
        ("off", {"chat_template_kwargs": {"enable_thinking": False}}),
        ("auto", {}),
    ],
)
def test_thinking_on_or_off_reaches_the_chat_template_and_auto_leaves_it_alone(thinking, options):
    """``LLM.chat(..., chat_template_kwargs=...)``: the template's ``enable_thinking`` (Qwen3's switch)."""

    class Recording(StandInEngine):
        def chat(self, chats, params, use_tqdm=True, **kwargs):
            self.options = kwargs
            return super().chat(chats, params, use_tqdm)

    engine = Recording()
    thinking = "".join(list(thinking))  # as the command line gives it: a new string, not this module's constant
    list(answer_queries(engine, VLLMSettings("m", 4, thinking=thinking), blind_queries(1), None, []))
    assert engine.options == options


@pytest.mark.parametrize("chunk_size", [1, 2, 5])
def test_every_query_is_answered_once_whatever_the_chunk_size(chunk_size):
    engine, queries = StandInEngine(), blind_queries(5)
    answers = [a for c in answer_queries(engine, VLLMSettings("m", 4, chunk_size), queries, None, []) for a in c]
    assert [a.query for a in answers] == queries
    assert sum(len(call) for call in engine.calls) == 5 and max(len(call) for call in engine.calls) == chunk_size


def test_engine_arguments_recorded_settings_and_placement():
    """What vllm.LLM gets (max_model_len only when given), what every prediction records, and where it ran."""
    default = EngineOptions()
    assert default.llm_arguments() == {
        "tensor_parallel_size": 1,
        "data_parallel_size": 1,
        "limit_mm_per_prompt": {"image": 1},
        "dtype": "auto",
        "gpu_memory_utilization": 0.9,
        "enforce_eager": False,
        "trust_remote_code": False,
        "seed": 0,
    }
    assert EngineOptions(max_model_len=4096).llm_arguments()["max_model_len"] == 4096
    settings = VLLMSettings("m", 20, ignore_eos=True, engine=EngineOptions(max_model_len=2048, tensor_parallel_size=2))
    assert recorded_settings(settings) == {
        "backend": "vllm",
        "decoding": "greedy",
        "temperature": 0.0,
        "max_new_tokens": 20,
        "ignore_eos": True,
        "dtype": "auto",
        "max_model_len": 2048,
        "thinking": "auto",
    }
    assert "ignore_eos" not in recorded_settings(VLLMSettings("m", 20))
    assert placement(settings) == {
        "tensor_parallel_size": 2,
        "data_parallel_size": 1,
        "limit_mm_per_prompt": {"image": 1},
        "gpu_memory_utilization": 0.9,
        "enforce_eager": False,
        "trust_remote_code": False,
        "seed": 0,
    }
    assert (settings.chunk_size, VLLMSettings("m", 1).engine) == (16, default)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_without_vllm_the_backend_is_one_usage_line():
    with pytest.raises(UsageError) as error:
        load_engine(VLLMSettings("some/model", 8))
    assert str(error.value) == (
        "--model vllm: needs vllm installed in the environment that runs cogbench "
        "(pip install vllm; docs/running.md, 'vLLM in the process')"
    )


def test_a_model_vllm_cannot_start_is_one_error_line(monkeypatch):
    """Whatever ``vllm.LLM`` raises (a stand-in ``vllm`` module whose engine refuses the model)."""
    stand_in = types.ModuleType("vllm")

    class LLM:
        def __init__(self, model, **arguments):
            raise ValueError(f"{model} is not a supported architecture\n(see the log)")

    stand_in.LLM = LLM
    monkeypatch.setitem(sys.modules, "vllm", stand_in)
    with pytest.raises(CogbenchError) as error:
        load_engine(VLLMSettings("some/model", 8))
    assert str(error.value) == (
        "--model vllm:some/model: vLLM did not start (ValueError: some/model is not a supported architecture "
        "(see the log); its log above has the cause); what was answered before is kept in the run folder"
    )


def test_out_of_memory_stops_the_run_in_one_line_instead_of_retrying_query_by_query():
    class OutOfMemory(StandInEngine):
        def chat(self, chats, params, use_tqdm=True):
            super().chat(chats, params, use_tqdm)
            raise torch.OutOfMemoryError("CUDA out of memory.\n  Tried to allocate 2.00 GiB")

    engine = OutOfMemory()
    with pytest.raises(CogbenchError) as error:
        list(answer_queries(engine, VLLMSettings("m", 4, chunk_size=3), blind_queries(3), None, []))
    assert str(error.value).startswith(
        "vLLM ran out of memory (OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB); "
        "what was answered before is kept in the run folder: lower --gpu-memory-utilization"
    )
    assert len(engine.calls) == 1  # no query-by-query retry after running out of memory


def test_a_failure_line_is_cut_to_300_characters_and_names_an_error_without_text():
    class Refuses(StandInEngine):
        def chat(self, chats, params, use_tqdm=True):
            super().chat(chats, params, use_tqdm)
            raise (ValueError("x" * 400) if len(chats) == 1 and "0" in self.calls[-1][0] else RuntimeError())

    failures: list[str] = []
    assert list(answer_queries(Refuses(), VLLMSettings("m", 4), blind_queries(2), None, failures)) == [[]]
    assert failures == [f"item item-0 query None: ValueError: {'x' * 300}", "item item-1 query None: RuntimeError"]


def test_each_answer_costs_its_share_of_its_chunk_or_its_own_call():
    """A chunk's wall time is shared by its queries; a query asked alone costs its own call."""

    class Slow(StandInEngine):
        def chat(self, chats, params, use_tqdm=True):
            time.sleep(0.2)
            return super().chat(chats, params, use_tqdm)

    (chunk,) = answer_queries(Slow(), VLLMSettings("m", 4, chunk_size=4), blind_queries(4), None, [])
    assert all(0.05 <= answer.seconds < 0.2 for answer in chunk)
    engine = Slow(refuse="prompt number 1")
    (alone,) = answer_queries(engine, VLLMSettings("m", 4, chunk_size=2), blind_queries(2), None, [])
    assert [a.query.item_id for a in alone] == ["item-0"] and 0.2 <= alone[0].seconds < 0.4


def test_after_a_refused_chunk_the_next_chunks_are_still_asked():
    engine, failures = StandInEngine(refuse="prompt number 1"), []
    chunks = list(answer_queries(engine, VLLMSettings("m", 4, chunk_size=2), blind_queries(5), None, failures))
    assert [[a.query.item_id for a in chunk] for chunk in chunks] == [["item-0"], ["item-2", "item-3"], ["item-4"]]
    assert len(failures) == 1


def test_the_first_completion_of_an_output_is_the_answer():
    """vLLM gives n completions per request (n = 1 in vllm serve's defaults); the answer is the first."""

    class TwoCompletions(StandInEngine):
        def chat(self, chats, params, use_tqdm=True):
            outputs = super().chat(chats, params, use_tqdm)
            for output in outputs:
                output.outputs.append(SimpleNamespace(text="second", token_ids=[1], finish_reason="stop"))
            return outputs

    (chunk,) = answer_queries(TwoCompletions(), VLLMSettings("m", 4), blind_queries(1), None, [])
    assert (chunk[0].output, chunk[0].generated_tokens) == ("answer to prompt number 0", 3)


def test_settings_are_frozen():
    for settings in (EngineOptions(), VLLMSettings("m", 4)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            settings.seed = 1
