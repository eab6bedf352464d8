"""What one chat completion (parsed JSON) holds, read the same way online (``openai_api.ChatClient``) and from
request-file output (``batch_files``): its content, a separate reasoning field, why it stopped, a refusal, and
the tokens it reports. Nothing here raises on an odd reply: what cannot be read is None or zero.

A refusal is ``message.refusal``: a string, non-null when the model declined (OpenAI's chat completions and
structured outputs, and servers that copy them), most often beside ``content: null``. Such a reply is a reply
(an empty answer, scored as the task scores one), not a failed request: asking again would only be refused
again. A ``content: null`` with neither a reasoning nor a refusal is still no reply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cogbench.reference_eval.answers.reasoning import reasoning_text
from cogbench.schemas.text import replace_lone_surrogates

# The separate reasoning fields, in the order they are looked for: DeepSeek's API and vLLM's
# --reasoning-parser write ``reasoning_content``, OpenRouter (and newer vLLM) ``reasoning``.
REASONING_FIELDS = ("reasoning_content", "reasoning")


@dataclass(frozen=True)
class ReplyParts:
    """What one chat completion holds: ``text`` is its content ("" when null beside a reasoning)."""

    text: str
    reasoning: str = ""
    finish_reason: str = ""
    reasoning_tokens: int | None = None
    note: str = ""
    refusal: str = ""  # message.refusal: the model's refusal text, "" when it gave none


def reply_parts(reply: Any) -> ReplyParts | None:
    """The first choice of a chat completion (parsed JSON) as content, reasoning, finish reason,
    reasoning tokens and refusal; None when it has no content string, reasoning string nor refusal.

    The first reasoning field that is a string is taken; one of another type (a number, an object)
    is ignored and named in ``note``, never raised, and so is a refusal that is not a string. Lone
    surrogates become U+FFFD in all three texts (a
    lone surrogate cannot be written as UTF-8 to the predictions, the judge cache or details).
    """
    try:
        choice = reply["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    reasoning, notes = "", []
    for name in REASONING_FIELDS:
        text, note = reasoning_text(message.get(name))
        if note:
            notes.append(f"{name}: {note}")
        elif text:
            reasoning = text
            break
    refusal = message.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        notes.append(f"refusal: field of type {type(refusal).__name__} ignored")
    refusal = refusal if isinstance(refusal, str) else ""
    if not isinstance(content, str) and not reasoning and not refusal:
        return None
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    return ReplyParts(
        replace_lone_surrogates(content) if isinstance(content, str) else "",
        replace_lone_surrogates(reasoning),
        finish if isinstance(finish, str) else "",
        reasoning_token_count(reply),
        "; ".join(notes),
        replace_lone_surrogates(refusal),
    )


def reasoning_token_count(reply: Any) -> int | None:
    """``usage.completion_tokens_details.reasoning_tokens`` (OpenAI's reasoning models), None when absent."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    count = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None


def token_counts(reply: Any) -> tuple[int, int]:
    """(prompt, completion) tokens a reply reports; zeros where a server reports none."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return 0, 0
    counts = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    return tuple(count if isinstance(count, int) and not isinstance(count, bool) else 0 for count in counts)
