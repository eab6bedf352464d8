"""A reply's final answer apart from its reasoning: the one rule every path scores by.

Models that think before they answer put their reasoning either inline, in a think block of the
reply text (``<think>...</think>``, Kimi-VL's ``◁think▷...◁/think▷``, gpt-oss's harmony channels
served raw: ``<|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>final<|message|>``),
or in a separate field of the API reply (``reasoning_content`` from vLLM's ``--reasoning-parser``
and DeepSeek, ``reasoning`` from OpenRouter), sometimes with ``content`` null. Chat templates such as
DeepSeek-R1's and Qwen3-Thinking's open the block in the prompt, so their replies carry only
``...</think>answer``, and a reply cut at the token limit carries no tag at all. Only the final
answer is parsed, judged and scored; the reasoning is kept beside it. The rules (docs/scoring.md,
"Replies that reason"):

1. The reasoning is the separate field's text (a string; any other type is ignored and noted) plus,
   inline, everything up to and including the *last* closing tag of a known pair (tags match in
   any case); the final answer is what follows that tag, stripped. Several or nested blocks: the
   last closing tag ends them all.
2. A block never closed (an opening tag with no closing tag after it; or no tag at all where the
   block was opened in the prompt, thinking ``on``, and no separate field took the reasoning) is no
   answer: ``truncated`` when the reply stopped at the token limit (finish reason ``length``),
   else ``unclosed`` (it stopped normally, or did not say why, inside its reasoning).
3. Stopped at the token limit with an empty final answer: no answer (``truncated``).
4. Stopped at the token limit with no tag and no separate field while the thinking is unknown
   (``auto``, or not recorded): the text may be the reasoning of a template that opened the block
   in the prompt, or an answer. It is never read (``unscored``: scored as no answer, its text never
   extracted nor sent to a judge); state the thinking (``score --thinking on|off``) to read it.
5. Otherwise stopped at the token limit after the final answer began: scored as it stands (``cut``).
6. Otherwise an empty final answer is ``empty`` (scored as unanswered) and anything else
   ``answered``. A reply with no tag and no reasoning field is scored exactly as given (unstripped),
   so the authors' parsing sees the same text it always did.

The thinking is ``on`` (the reply begins inside a think block), ``off`` (it begins outside one) or
unknown. Where the backend rendered the chat template (``hf:``), the prediction records whether its
generation prompt ended in an opening tag (``think_opened``), and that decides; else the setting
(``eval --thinking``, ``score --thinking``) does. Every status but ``answered`` and ``cut`` is
scored as unanswered items are by the papers (an empty answer). Pure functions of text: ``verify``
re-applies them to details.jsonl.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import Any

from cogbench.errors import UsageError

# gpt-oss's harmony format served raw: the analysis channel is the reasoning, the final channel the answer.
HARMONY = ("<|channel|>analysis<|message|>", "<|channel|>final<|message|>")
HARMONY_ENDS = ("<|return|>", "<|end|>", "<|call|>")  # what may close the final message
# (open, close) pairs recognised inline, in any case; `--think-tags OPEN CLOSE` replaces them.
THINK_TAGS: tuple[tuple[str, str], ...] = (
    ("<think>", "</think>"),
    ("◁think▷", "◁/think▷"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    HARMONY,
)
STATUSES = ("answered", "cut", "truncated", "unclosed", "unscored", "empty")
NO_ANSWER = ("truncated", "unclosed", "unscored", "empty")  # scored as an unanswered item
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

    @property
    def no_answer(self) -> bool:
        """Scored as an unanswered item (every status but ``answered`` and ``cut``)."""
        return self.status in NO_ANSWER


def reasoning_text(value: Any) -> tuple[str, str]:
    """A reasoning field's text and a note: a string is taken; null or absent is none; anything else
    (a number, a list, an object) is ignored and named in the note, never scored or raised."""
    if value is None or isinstance(value, str):
        return value or "", ""
    return "", f"reasoning field of type {type(value).__name__} ignored"


def thinking_state(thinking: str | None, opened: bool | None = None) -> str:
    """Whether a reply begins inside a think block: ``on``, ``off`` or ``auto`` (unknown).

    ``opened``: the chat template's generation prompt ended in an opening tag (``think_opened`` of a
    prediction; None where the backend did not render the template); it decides over ``thinking``,
    the setting (``eval --thinking`` or ``score --thinking``)."""
    if opened is not None:
        return "on" if opened else "off"
    return thinking if thinking in ("on", "off") else "auto"


def split_reply(
    content: str | None,
    reasoning: Any = None,
    finish_reason: str | None = None,
    thinking: str | None = None,
    tags: tuple[tuple[str, str], ...] = THINK_TAGS,
    opened: bool | None = None,
) -> Reply:
    """Apply the module's rules to one reply (``content``: the reply text, None when the API gave none)."""
    text = content or ""
    separate, note = reasoning_text(reasoning)
    state = thinking_state(thinking, opened)
    at_limit = finish_reason == "length"
    never_closed = "truncated" if at_limit else "unclosed"
    closing = _last_tag(text, tuple(close for _, close in tags))
    opening = _last_tag(text, tuple(opening for opening, _ in tags))
    if opening is not None and (closing is None or opening[0] > closing[0]):
        return Reply("", _join(separate, text), never_closed, note)  # rule 2: a block never closed
    if closing is not None:
        end = closing[1]
        inline, answer = text[:end], _final_message(text[end:].strip(), closing[2])
    elif state == "on" and not separate:
        return Reply("", _join(separate, text), never_closed, note)  # rule 2: opened in the prompt
    else:
        inline, answer = "", text
    if at_limit:
        if not answer.strip():
            return Reply("", _join(separate, inline or text), "truncated", note)  # rule 3
        if closing is None and not separate and state == "auto":
            return Reply("", separate, "unscored", note)  # rule 4: reasoning or answer, nobody can tell
        return Reply(answer, _join(separate, inline), "cut", note)  # rule 5
    if answer.strip():
        return Reply(answer, _join(separate, inline), "answered", note)
    return Reply("", _join(separate, inline), "empty", note)


def prompt_opens_think(prompt: str, tags: tuple[tuple[str, str], ...] = THINK_TAGS) -> bool:
    """Whether a chat template's generation prompt ends in an opening tag (DeepSeek-R1's, Qwen3-Thinking's
    ``<think>``): the reply then begins inside the block. An empty block (``<think></think>``) is not open."""
    end = prompt.rstrip().casefold()
    return any(end.endswith(opening.casefold()) for opening, _ in tags)


def final_answer(prediction: Any, tags: tuple[tuple[str, str], ...] = THINK_TAGS, thinking: str | None = None) -> Reply:
    """The split of a predictions-file record (``formats.predictions.Prediction`` or alike); ``thinking``
    (``score --thinking`` on or off) stands for the setting where the record states none or ``auto``."""
    recorded = (prediction.generation or {}).get("thinking")
    return split_reply(
        prediction.output,
        prediction.reasoning or None,
        prediction.finish_reason or None,
        stated_thinking(recorded, thinking),
        tags,
        getattr(prediction, "think_opened", None),
    )


def stated_thinking(recorded: Any, stated: str | None) -> str | None:
    """The setting a reply is split by: the recorded one (``generation.thinking``), else ``stated``
    (``score --thinking``; ``auto`` states nothing)."""
    if recorded in ("on", "off") or stated in (None, "auto"):
        return recorded if isinstance(recorded, str) else None
    return stated


def _last_tag(text: str, candidates: tuple[str, ...]) -> tuple[int, int, str] | None:
    """The last occurrence of any of ``candidates`` in ``text``, in any case: (start, end, tag), or None;
    of two starting at one place, the longer (custom tags may be prefixes of one another)."""
    best: tuple[int, int, str] | None = None
    for tag in candidates:
        for found in deque(re.finditer(re.escape(tag), text, re.IGNORECASE), maxlen=1):  # re caches the pattern
            if best is None or (found.start(), found.end()) > best[:2]:
                best = (found.start(), found.end(), tag)
    return best


def _final_message(answer: str, closing: str) -> str:
    """A harmony final message without the token that ends it (served raw, ``<|return|>`` may stay)."""
    if closing.casefold() != HARMONY[1].casefold():
        return answer
    for end in HARMONY_ENDS:
        if answer.casefold().endswith(end.casefold()):
            return answer[: -len(end)].rstrip()
    return answer


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
