"""The ``openai:`` model backend: any OpenAI-compatible chat API (GPT-4o, vLLM, SGLang).

Images go inline as base64 data URLs, in their stored bytes (no re-encoding).
Requests run concurrently with the retry and backoff rules of
``openai_api.ChatClient``, the same ones the judge uses; the key comes from
``OPENAI_API_KEY`` only. A query whose request still fails after its retries
yields no answer, so a re-run asks it again.
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any, Iterator

from cogbench.reference_eval.backends.openai_api import ChatClient, ChatSettings, image_part
from cogbench.reference_eval.tasks import Answer, Query


def recorded_settings(settings: ChatSettings) -> dict[str, Any]:
    """What goes into every prediction's ``generation`` field."""
    return {
        "backend": "openai", "decoding": "greedy", "temperature": settings.temperature,
        "max_new_tokens": settings.max_tokens,
    }


def _image_bytes_and_type(value: dict) -> tuple[bytes, str]:
    from PIL import Image

    data = value["bytes"] if value.get("bytes") is not None else Path(value["path"]).read_bytes()
    with Image.open(io.BytesIO(data)) as image:
        mime_type = Image.MIME.get(image.format or "", "image/jpeg")
    return data, mime_type


def conversation(query: Query, images) -> list[dict[str, Any]]:
    """One user turn: the image, then the prompt (the same order as the hf backend); no image for a blind query."""
    content = []
    if query.with_image:
        data, mime_type = _image_bytes_and_type(images[query.row]["image"])
        content.append(image_part(data, mime_type))
    return [{"role": "user", "content": [*content, {"type": "text", "text": query.prompt}]}]


def answer_queries(settings: ChatSettings, queries: list[Query], images, failures: list[str]) -> Iterator[list[Answer]]:
    """Yield each answer as it arrives; append one line per query that failed to ``failures``."""
    if not queries:
        return
    with ChatClient(settings) as client:
        started = time.perf_counter()
        completed = 0
        conversations = (conversation(query, images) for query in queries)
        for index, result in client.complete_many(conversations):
            query = queries[index]
            if not result.ok:
                failures.append(f"item {query.item_id} query {query.query}: {result.error}")
                continue
            # Requests overlap, so a query's own latency is not its cost; record the run's mean.
            completed += 1
            seconds = (time.perf_counter() - started) / completed
            yield [Answer(query, result.text.strip(), seconds, result.completion_tokens or None)]
