"""The ``openai:`` model backend: any OpenAI-compatible chat API (GPT-4o, vLLM, SGLang).

Images go inline as base64 data URLs, in their stored bytes (no re-encoding).
Requests run concurrently with the retry and backoff rules of
``openai_api.ChatClient``, the same ones the judge uses; the key comes from
``OPENAI_API_KEY`` only. A query whose request still fails after its retries
yields no answer, so a re-run asks it again. A reasoning model's answer keeps its separate
reasoning field, finish reason and reasoning tokens (``openai_replies.reply_parts``), online and from
request-file output alike; a reasoning field of the wrong type is ignored with a warning line. A reply's
``message.refusal`` is kept in its prediction's ``refusal``; a refusal beside ``content: null`` is an
empty answer, not a failed query.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from cogbench.reference_eval.backends.batch_files import Request, Response, read_responses, refuse_foreign, request
from cogbench.reference_eval.backends.batch_files import write_requests as write_request_files
from cogbench.reference_eval.backends.openai_api import ChatClient, ChatResult, ChatSettings, chat_body, image_part
from cogbench.reference_eval.tasks.image_variants import variant_bytes
from cogbench.reference_eval.tasks.queries import Answer, Query


def recorded_settings(settings: ChatSettings) -> dict[str, Any]:
    """What goes into every prediction's ``generation`` field."""
    return {
        "backend": "openai",
        "decoding": "greedy",
        "temperature": settings.temperature,
        "max_new_tokens": settings.max_tokens,
        "thinking": settings.thinking,
        **({"structured_regex": settings.structured_regex} if settings.structured_regex is not None else {}),
    }


def _answer(query: Query, reply: ChatResult | Response, seconds: float) -> Answer:
    """One reply as an Answer: its content as written (stripped), the reasoning field, why it stopped, a refusal."""
    if reply.note:
        print(f"warning: {query.name}: {reply.note}", file=sys.stderr)
    assert reply.text is not None  # a reply without an error has its text
    return Answer(
        query,
        reply.text.strip(),
        seconds,
        reply.completion_tokens or None,
        reasoning=reply.reasoning,
        finish_reason=reply.finish_reason,
        reasoning_tokens=reply.reasoning_tokens,
        refusal=reply.refusal,
    )


def _image_bytes_and_type(value: dict) -> tuple[bytes, str]:
    from PIL import Image

    data = value["bytes"] if value.get("bytes") is not None else Path(value["path"]).read_bytes()
    with Image.open(io.BytesIO(data)) as image:
        mime_type = Image.MIME.get(image.format or "", "image/jpeg")
    return data, mime_type


def conversation(query: Query, image: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One user turn: the image part (None for a blind query), then the prompt (the same order as the hf backend)."""
    return [
        {"role": "user", "content": [*([image] if image is not None else []), {"type": "text", "text": query.prompt}]}
    ]


def conversations(queries: list[Query], images) -> Iterator[list[dict[str, Any]]]:
    """The conversations of ``queries``, built one at a time; consecutive queries on one image
    (a CODIS pair, a VQA question's rotations) share one base64 image part instead of encoding it again."""
    shown, part = None, None
    for query in queries:
        if query.with_image and (query.row, query.variant) != shown:
            value = images[query.row]["image"]
            found = variant_bytes(query.variant, value) if query.variant is not None else _image_bytes_and_type(value)
            shown, part = (query.row, query.variant), image_part(*found)
        yield conversation(query, part if query.with_image else None)


def answer_queries(client: ChatClient, queries: list[Query], images, failures: list[str]) -> Iterator[list[Answer]]:
    """Yield the answers as they arrive (each time all that have: ``complete_batches``); append one line per query
    that failed to ``failures``.

    Requests are built lazily (``complete_batches`` reads the conversations a bounded
    window ahead), so at most that window of base64 images is in memory at once.
    """
    started = time.perf_counter()
    completed = 0
    for batch in client.complete_batches(conversations(queries, images)):
        answers = []
        for index, result in batch:
            query = queries[index]
            if not result.ok:
                failures.append(f"{query.name}: {result.error}")
                continue
            # Requests overlap, so a query's own latency is not its cost; record the run's mean.
            completed += 1
            answers.append(_answer(query, result, (time.perf_counter() - started) / completed))
        if answers:
            yield answers


# --- request files (backends/batch_files.py): the same bodies, sent by another engine ---


def query_name(query: Query) -> str:
    """``ITEM#QUERY`` (``ITEM`` alone for one query per item), ``@VARIANT`` after it on an image variant."""
    name = str(query.item_id) if query.query is None else f"{query.item_id}#{query.query}"
    return name if query.variant is None else f"{name}@{query.variant}"


def query_requests(queries: list[Query], images, settings: ChatSettings) -> Iterator[tuple[Query, Request]]:
    """Each query with the request the ``openai:`` backend would send for it, built one at a time."""
    for query, messages in zip(queries, conversations(queries, images), strict=True):
        yield query, request(query_name(query), chat_body(settings, messages))


def write_query_requests(folder: Path, shards: int, queries: list[Query], images, api: ChatSettings, about: dict):
    """Model queries as request files: each line the body the ``openai:`` backend would send."""
    requests = (built for _, built in query_requests(queries, images, api))
    return write_request_files(folder, requests, len(queries), shards, about)


def answers_from_responses(
    paths: Iterable[str], queries: list[Query], missing: list[Query], images, api: ChatSettings, failures: list[str]
) -> Iterator[list[Answer]]:
    """The answers to ``missing`` found in the output files; every response checked against all ``queries``.

    Reads and checks at once (a foreign response raises here); a query without a usable response
    adds a line to ``failures`` as the answers are taken (the run is then partial).
    """
    responses = read_responses(paths)
    expected = {built.custom_id: query for query, built in query_requests(queries, images, api)}
    refuse_foreign(responses, expected)  # here, before the caller writes anything
    wanted = {query.key for query in missing}
    return _answers(responses, [(cid, q) for cid, q in expected.items() if q.key in wanted], failures)


def _answers(responses: dict[str, Response], wanted: list[tuple[str, Query]], failures: list[str]):
    batch: list[Answer] = []
    for custom_id, query in wanted:
        response = responses.get(custom_id)
        if response is None or response.error:
            why = response.error if response else "no response in the files read"
            failures.append(f"item {query.item_id} query {query.query}: {why}")
            continue
        batch.append(_answer(query, response, 0.0))
        if len(batch) == 64:
            yield batch
            batch = []
    if batch:
        yield batch
