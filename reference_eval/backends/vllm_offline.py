"""The ``vllm:`` model backend: vLLM's offline ``LLM`` in this process, no server to start.

vllm must be installed in the environment that runs ``cogbench`` (docs/running.md, "vLLM in the
process"). The conversations are the ``openai:`` backend's own (``openai_chat.conversations``:
the image as a base64 data URL, then the prompt), given to ``LLM.chat``, and the sampling
settings are those ``vllm serve`` applies to an ``openai:`` request: the model's defaults
(``get_default_sampling_params``, from its generation config) with temperature 0 and the
task's ``max_tokens``. So greedy answers here equal those of ``openai:`` against ``vllm serve``
of the same folder, item for item (tests/test_vllm_server.py).

The thinking setting on/off goes to the chat template as ``enable_thinking``
(``chat_template_kwargs``, as ``vllm serve`` gets it in the request body); each answer keeps
vLLM's finish reason (``length`` when the budget ran out, a thinking model cut in its reasoning).
No reasoning parser runs in the process: a think block stays in the text, where scoring splits it.

Queries go to ``LLM.chat`` in chunks of ``--batch-size`` (vLLM batches continuously inside a
chunk); each chunk is written and fsynced before the next, so a killed run loses one chunk
at most. A chunk that vLLM refuses (a prompt longer than ``--max-model-len``...) is asked
again query by query, and only the queries that fail are left for the next run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from cogbench.errors import CogbenchError, UsageError
from cogbench.reference_eval.backends.openai_chat import conversations
from cogbench.reference_eval.tasks.queries import Answer, Query


@dataclass(frozen=True)
class EngineOptions:
    """Passed to ``vllm.LLM`` as they are; recorded in run.json."""

    tensor_parallel_size: int = 1
    data_parallel_size: int = 1
    max_model_len: int | None = None  # None: the model's own
    limit_mm_per_prompt: dict[str, int] = field(default_factory=lambda: {"image": 1})  # every query holds <= 1 image
    dtype: str = "auto"
    gpu_memory_utilization: float = 0.9
    enforce_eager: bool = False
    trust_remote_code: bool = False
    seed: int = 0

    def llm_arguments(self) -> dict[str, Any]:
        arguments = asdict(self)
        if arguments["max_model_len"] is None:
            del arguments["max_model_len"]
        return arguments


# What can change an answer is part of the run (a resume must match); the rest is where it ran.
ANSWER_OPTIONS = ("dtype", "max_model_len")


@dataclass(frozen=True)
class VLLMSettings:
    model: str
    max_new_tokens: int
    chunk_size: int = 16
    ignore_eos: bool = False  # benchmarks: exactly max_new_tokens per query
    thinking: str = "auto"  # "on"/"off": the chat template's enable_thinking; "auto": its default
    structured_regex: str | None = None  # every reply constrained to it (SamplingParams.structured_outputs)
    engine: EngineOptions = field(default_factory=EngineOptions)


def recorded_settings(settings: VLLMSettings) -> dict[str, Any]:
    """What goes into every prediction's ``generation`` field (placement options excluded: they must not matter)."""
    return {
        "backend": "vllm",
        "decoding": "greedy",
        "temperature": 0.0,
        "max_new_tokens": settings.max_new_tokens,
        **({"ignore_eos": True} if settings.ignore_eos else {}),
        **{name: getattr(settings.engine, name) for name in ANSWER_OPTIONS},
        "thinking": settings.thinking,
        **({"structured_regex": settings.structured_regex} if settings.structured_regex is not None else {}),
    }


def placement(settings: VLLMSettings) -> dict[str, Any]:
    """The engine options that must not change an answer (run.json's ``vllm_engine``)."""
    return {name: value for name, value in asdict(settings.engine).items() if name not in ANSWER_OPTIONS}


def load_engine(settings: VLLMSettings):
    """``vllm.LLM`` on the model; a model that does not load (or does not fit) is one error line."""
    try:
        from vllm import LLM
    except ImportError:
        raise UsageError(
            "--model vllm: needs vllm installed in the environment that runs cogbench "
            "(pip install vllm; docs/running.md, 'vLLM in the process')"
        ) from None
    try:
        return LLM(model=settings.model, **settings.engine.llm_arguments())
    except Exception as error:  # vLLM raises many types; whatever it is, the run stops here, its answers kept
        raise CogbenchError(
            f"--model vllm:{settings.model}: vLLM did not start ({_one_line(error)}; its log above has the cause); "
            "what was answered before is kept in the run folder"
        ) from None


def sampling_params(llm, settings: VLLMSettings):
    """The model's defaults as ``vllm serve`` applies them, with greedy decoding and our token budget."""
    params = llm.get_default_sampling_params()
    params.temperature = 0.0
    params.max_tokens = settings.max_new_tokens
    params.ignore_eos = settings.ignore_eos
    if settings.structured_regex is not None:  # what `vllm serve` makes of the body's structured_outputs
        from vllm.sampling_params import StructuredOutputsParams

        params.structured_outputs = StructuredOutputsParams(regex=settings.structured_regex)
    return params


def answer_queries(
    llm, settings: VLLMSettings, queries: list[Query], images, failures: list[str]
) -> Iterator[list[Answer]]:
    """Yield each chunk's answers once vLLM has them; append one line per query that failed to ``failures``."""
    params = sampling_params(llm, settings)
    options = template_options(settings.thinking)
    messages = conversations(queries, images)
    for start in range(0, len(queries), settings.chunk_size):
        chunk = queries[start : start + settings.chunk_size]
        chats = [next(messages) for _ in chunk]
        started = time.perf_counter()
        try:
            outputs = _chat(llm, chats, params, options)
        except CogbenchError:
            raise
        except Exception:  # one bad query fails the whole call: ask them one by one
            yield list(_one_by_one(llm, chunk, chats, params, options, failures))
            continue
        seconds = (time.perf_counter() - started) / len(chunk)
        yield [_answer(query, output, seconds) for query, output in zip(chunk, outputs)]


def template_options(thinking: str) -> dict[str, Any]:
    """``LLM.chat``'s extra arguments: the template's ``enable_thinking`` when thinking is on or off."""
    return {"chat_template_kwargs": {"enable_thinking": thinking == "on"}} if thinking in ("on", "off") else {}


def _chat(llm, chats: list, params, options: dict[str, Any]) -> list:
    import torch

    try:
        return llm.chat(chats, params, use_tqdm=False, **options)
    except torch.OutOfMemoryError as error:
        raise CogbenchError(
            f"vLLM ran out of memory ({_one_line(error)}); what was answered before is kept in the run folder: "
            "lower --gpu-memory-utilization, --max-model-len or --batch-size and run the same command again"
        ) from None


def _one_by_one(llm, chunk: list[Query], chats: list, params, options, failures: list[str]) -> Iterator[Answer]:
    for query, chat in zip(chunk, chats):
        started = time.perf_counter()
        try:
            (output,) = _chat(llm, [chat], params, options)
        except CogbenchError:
            raise
        except Exception as error:
            failures.append(f"item {query.item_id} query {query.query}: {_one_line(error)}")
            continue
        yield _answer(query, output, time.perf_counter() - started)


def _answer(query: Query, output, seconds: float) -> Answer:
    completion = output.outputs[0]
    finish = completion.finish_reason if isinstance(completion.finish_reason, str) else ""
    return Answer(query, completion.text.strip(), seconds, len(completion.token_ids) or None, finish_reason=finish)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:300]}" if text else type(error).__name__
