"""How each scored answer's reply is kept in details.jsonl, and the run's answer counts from them.

Every answer of a details line (the line itself for description and VQA, each rotation of a
circular VQA question, each query of a CODIS pair) gets ``answer_status`` (``answers.reasoning``)
and, when the reply said more than its scored text, ``reply``: the inputs of the split, so that
``verify`` applies the same rule again and anyone can read the reasoning:

    "reply": {"content": "<think>...</think> B", "reasoning": "...", "finish_reason": "length",
              "thinking": "on", "think_opened": true, "reasoning_tokens": 180, "refusal": "..."}

``content`` is the reply text as written, kept only when it differs from the scored text;
``reasoning`` is a separate reasoning field's text; ``thinking`` the setting the split used (the
prediction's, else ``score --thinking``); ``think_opened`` whether the chat template opened a think
block in the prompt, where the backend saw it; ``refusal`` the model API's refusal text (the
prediction's, absent when none; it changes no split: an empty content beside it scores as an empty
answer). With ``keep="hash"`` (``score --reasoning-in-details hash``) both texts (not the refusal)
are replaced by their sha256 and length, and the split can no longer be re-derived (``verify`` says
so). ``answers_block`` counts the statuses from the details alone: scores.json's ``answers`` is
exactly what details.jsonl says.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from cogbench.reference_eval.answers.reasoning import STATUSES, THINK_TAGS, Reply, split_reply, stated_thinking

# The field of each task's answer dict that holds the scored text.
SCORED_FIELD = {"description": "description", "vqa": "response", "codis": "output"}
KEEP = ("full", "hash")


def answer_dicts(task: str, details: list[dict[str, Any]]) -> Iterator[tuple[Any, dict[str, Any], dict[str, Any]]]:
    """Each scored answer as (key, its dict, its details line); keys as the scoring pipeline keys outputs."""
    for detail in details:
        item = detail["item_id"]
        if task == "codis":
            for query in detail["queries"]:
                yield (item, query["query"]), query, detail
        elif "rotations" in detail:
            for rotation in detail["rotations"]:
                yield (item, rotation["rotation"]), rotation, detail
        else:
            yield item, detail, detail


def reply_record(output: str, reply: Reply, inputs: dict[str, Any], keep: str = "full") -> dict[str, Any]:
    """The ``reply`` record of one answer (empty when the reply is its scored text and nothing more).

    ``inputs``: ``reasoning`` (separate field), ``finish_reason``, ``thinking``, ``think_opened``,
    ``reasoning_tokens`` as the split read them, and ``refusal`` (absent, empty or None where unknown).
    """
    record: dict[str, Any] = {}
    texts = {"content": output if output != reply.answer else "", "reasoning": inputs.get("reasoning") or ""}
    for name, text in texts.items():
        if not text:
            continue
        if keep == "hash":
            record[f"{name}_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
            record[f"{name}_chars"] = len(text)
        else:
            record[name] = text
    for name in ("finish_reason", "thinking", "think_opened", "reasoning_tokens", "refusal"):
        if inputs.get(name) not in (None, ""):
            record[name] = inputs[name]
    if reply.note:
        record["note"] = reply.note
    return record


def reply_inputs(prediction: Any, stated: str | None = "auto") -> dict[str, Any]:
    """The inputs of a prediction's split as it records them (``reply_record``'s ``inputs``); ``stated``:
    ``score --thinking``, for a prediction that records no setting."""
    return {
        "reasoning": prediction.reasoning,
        "finish_reason": prediction.finish_reason,
        "thinking": stated_thinking((prediction.generation or {}).get("thinking"), stated),
        "think_opened": prediction.think_opened,
        "reasoning_tokens": (prediction.tokens or {}).get("reasoning"),
        "refusal": getattr(prediction, "refusal", ""),
    }


def attach_replies(
    task: str, details: list[dict[str, Any]], replies: dict[Any, tuple[str, Reply, dict[str, Any]]], keep: str = "full"
) -> None:
    """Add ``answer_status`` and ``reply`` to every answer; ``replies``: key -> (output as written, Reply, inputs).

    Answers without a recorded reply (``--oracle``: the annotated descriptions) get neither.
    """
    for key, answer, _ in answer_dicts(task, details):
        if key not in replies:
            continue
        output, reply, inputs = replies[key]
        answer["answer_status"] = reply.status
        record = reply_record(output, reply, inputs, keep)
        if record:
            answer["reply"] = record


def rederived(task: str, answer: dict[str, Any], tags: tuple[tuple[str, str], ...] = THINK_TAGS) -> Reply | None:
    """The split applied again to a details answer's kept reply; None when its texts were kept as hashes."""
    record = answer.get("reply") or {}
    if "content_sha256" in record or "reasoning_sha256" in record:
        return None
    content = record.get("content", answer.get(SCORED_FIELD[task]))
    opened = record.get("think_opened")
    return split_reply(
        content,
        record.get("reasoning"),
        record.get("finish_reason"),
        record.get("thinking"),
        tags,
        opened if isinstance(opened, bool) else None,
    )


def _reasons(task: str, answer: dict[str, Any], tags: tuple[tuple[str, str], ...]) -> bool:
    """Whether the reply kept in details reasons; split only when no reasoning hash says so already."""
    again = rederived(task, answer, tags)
    return again is not None and bool(again.reasoning)


def answers_block(
    task: str, details: list[dict[str, Any]], tags: tuple[tuple[str, str], ...], thinking: str = "auto"
) -> dict[str, Any] | None:
    """scores.json's ``answers``: replies by status, truncation rate, per category; None for the oracle.

    ``unclosed`` and ``unscored`` (and their per-category counts) appear only when some reply has
    them, and ``thinking`` (``score --thinking``) only when stated, so a run without them keeps the
    block it always had. ``truncated_rate`` is truncated replies over all replies, whatever their status."""
    statuses: dict[str, int] = dict.fromkeys(STATUSES, 0)
    per_category: dict[str, dict[str, int]] = {}
    with_reasoning = reasoning_tokens = 0
    any_tokens = False
    for _, answer, line in answer_dicts(task, details):
        status = answer.get("answer_status")
        if status is None:
            continue
        statuses[status] += 1
        record = answer.get("reply") or {}
        if record.get("reasoning_sha256") or record.get("content_sha256") or _reasons(task, answer, tags):
            with_reasoning += 1
        if isinstance(record.get("reasoning_tokens"), int):
            any_tokens, reasoning_tokens = True, reasoning_tokens + record["reasoning_tokens"]
        if "category" in line:
            counts = per_category.setdefault(line["category"], dict.fromkeys(("replies", *STATUSES), 0))
            counts["replies"] += 1
            counts[status] += 1
    replies = sum(statuses.values())
    if not replies:
        return None
    shown = [name for name in STATUSES if name not in OPTIONAL_STATUSES or statuses[name]]
    kept = ("replies", *(name for name in (*_COUNTED, *OPTIONAL_STATUSES) if name in shown))
    return {
        "replies": replies,
        **{name: statuses[name] for name in shown},
        "truncated_rate": round(100 * statuses["truncated"] / replies, 4),
        "with_reasoning": with_reasoning,
        "reasoning_tokens": reasoning_tokens if any_tokens else None,
        "per_category": {c: {k: n[k] for k in kept} for c, n in sorted(per_category.items())},
        "think_tags": [list(pair) for pair in tags],
        **({"thinking": thinking} if thinking != "auto" else {}),
    }


_COUNTED = ("truncated", "cut")  # per category, always
OPTIONAL_STATUSES = ("unclosed", "unscored")  # in the block only when some reply has them
