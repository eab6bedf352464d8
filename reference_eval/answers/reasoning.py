"""A reply's final answer apart from its reasoning: the one rule every path scores by.

Models that think before they answer put their reasoning either inline, in a think block of the
reply text (``<think>...</think>``, Kimi-VL's ``◁think▷...◁/think▷``), or in a separate field of
the API reply (``reasoning_content`` from vLLM's ``--reasoning-parser`` and DeepSeek, ``reasoning``
from OpenRouter), sometimes with ``content`` null. Only the final answer is parsed, judged and
scored; the reasoning is kept beside it. The rules (docs/scoring.md, "Replies that reason"):

1. The reasoning is the separate field's text (a string; any other type is ignored and noted) plus,
   inline, everything up to and including the *last* closing tag of a known pair; the final answer
   is what follows that tag, stripped. Several or nested blocks: the last closing tag ends them all.
2. An opening tag with no closing tag after it is a block never closed: no answer (``truncated``),
   the whole text kept as reasoning.
3. Stopped at the token limit (finish reason ``length``) with an empty final answer, or with the
   thinking setting ``on`` and no block closed in the text (a chat template that opens the block
   in the prompt, as Qwen3's does): no answer (``truncated``).
4. Stopped at the token limit after the final answer began: scored as it stands, counted as ``cut``.
5. Otherwise an empty final answer is ``empty`` (scored as unanswered) and anything else
   ``answered``. A reply with no tag and no reasoning field is scored exactly as given (unstripped),
   so the authors' parsing sees the same text it always did.

``truncated`` and ``empty`` replies are scored as unanswered items are by the papers (an empty
answer). Pure functions of text: ``verify`` re-applies them to details.jsonl.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cogbench.errors import UsageError

# (open, close) pairs recognised inline; `--think-tags OPEN CLOSE` replaces them.
THINK_TAGS: tuple[tuple[str, str], ...] = (
    ("<think>", "</think>"),
    ("◁think▷", "◁/think▷"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
)
STATUSES = ("answered", "cut", "truncated", "empty")
NO_ANSWER = ("truncated", "empty")  # scored as an unanswered item
THINKING_SETTINGS = ("on", "off", "auto")


@dataclass(frozen=True)
class Reply:
    """What is scored of one reply: ``answer`` (parsed, judged, scored), ``reasoning`` (kept, never
    scored) and ``status`` (one of STATUSES); ``note`` says what was ignored, if anything."""

    answer: str
    reasoning: str
    status: str
    note: str = ""

    @property
    def truncated(self) -> bool:
        return self.status == "truncated"


def reasoning_text(value: Any) -> tuple[str, str]:
    """A reasoning field's text and a note: a string is taken; null or absent is none; anything else
    (a number, a list, an object) is ignored and named in the note, never scored or raised."""
    if value is None or isinstance(value, str):
        return value or "", ""
    return "", f"reasoning field of type {type(value).__name__} ignored"


def split_reply(
    content: str | None,
    reasoning: Any = None,
    finish_reason: str | None = None,
    thinking: str | None = None,
    tags: tuple[tuple[str, str], ...] = THINK_TAGS,
) -> Reply:
    """Apply the module's rules to one reply (``content``: the reply text, None when the API gave none)."""
    text = content or ""
    separate, note = reasoning_text(reasoning)
    closing = _last_tag(text, [close for _, close in tags])
    opening = _last_tag(text, [opening for opening, _ in tags])
    if opening is not None and (closing is None or opening[0] > closing[0]):
        return Reply("", _join(separate, text), "truncated", note)  # rule 2: a block never closed
    if closing is not None:
        end = closing[0] + len(closing[1])
        inline, answer = text[:end], text[end:].strip()
    else:
        inline, answer = "", text
    if finish_reason == "length":
        if not answer.strip() or (thinking == "on" and closing is None and not separate):
            return Reply("", _join(separate, inline or text), "truncated", note)  # rule 3
        return Reply(answer, _join(separate, inline), "cut", note)  # rule 4
    status = "answered" if answer.strip() else "empty"
    return Reply(answer if status == "answered" else "", _join(separate, inline), status, note)


def final_answer(prediction: Any, tags: tuple[tuple[str, str], ...] = THINK_TAGS) -> Reply:
    """The split of a predictions-file record (``formats.predictions.Prediction`` or alike)."""
    return split_reply(
        prediction.output,
        prediction.reasoning or None,
        prediction.finish_reason or None,
        (prediction.generation or {}).get("thinking"),
        tags,
    )


def _last_tag(text: str, candidates: list[str]) -> tuple[int, str] | None:
    """The last occurrence of any of ``candidates`` in ``text``: (position, tag), or None."""
    best: tuple[int, str] | None = None
    for tag in candidates:
        at = text.rfind(tag)
        if at >= 0 and (best is None or at > best[0]):
            best = (at, tag)
    return best


def _join(separate: str, inline: str) -> str:
    return "\n".join(part for part in (separate, inline) if part)


def parse_tags(pairs: list[list[str]] | None) -> tuple[tuple[str, str], ...]:
    """``--think-tags OPEN CLOSE`` (repeatable) as tag pairs; the defaults when none are given."""
    if not pairs:
        return THINK_TAGS
    for opening, closing in pairs:
        if not opening.strip() or not closing.strip() or opening == closing:
            raise UsageError(f"--think-tags {opening!r} {closing!r}: give two different, non-blank tags")
    return tuple((opening, closing) for opening, closing in pairs)
