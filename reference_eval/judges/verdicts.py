"""Reading a judge's reply as a verdict, in three modes.

``official`` is what the authors' scripts do; ``tolerant`` (the default) reads
what real judges send (GPT-4-class models, open models behind vLLM): other
case, a full stop, markdown, quotes, a label such as ``Verdict:``, a short
sentence. Tolerant parsing is never a guess: a reply that could be read two
ways is unusable (None), and the caller retries it or reports it.

CODIS (Table 12 asks for ``right`` or ``wrong``):

- official: the reply contains the substring ``right`` (case-sensitive), as
  the CODIS repository's ``data/eval.py`` counts it; every reply gets a verdict;
- tolerant: exactly one of the words ``right`` / ``wrong`` occurs as a whole
  word, case-insensitively, once quotes, markdown and one leading label are
  removed, and it is not negated (``not right``, ``isn't wrong``).

CogBench Figures 8/9 (``N. [0|1]`` for each numbered key point):

- official: ``output_parse`` of the authors' ``eval/cognition_gpt_eval.py``
  and the way its ``evaluator`` uses it, reproduced exactly. The reply is
  stripped; a reply that is one digit is the verdict of key point 1; a reply
  that *starts* with ``[d]`` gives key point 1 the first ``[d]`` in it; any
  other reply is searched for ``<digits>. [<digits>]`` with exactly one
  whitespace character between the dot and the bracket, and key point j gets
  the j-th match, whatever number stands before it (positions, not numbers:
  ``2. [0]  1. [1]`` reads [0, 1]). Matches beyond the count are ignored;
  fewer matches than key points is no verdict (the authors retry). Verdicts
  are not limited to 0 and 1 (``[2]`` reads 2, and the authors' sum counts it
  as 2), and its digit class is Python's, so digits of other scripts count.
- tolerant: reads by number: also other bracket styles (``()``, ``【】``,
  ``{}``, none), ``1.[1]``, ``1) [1]``, ``1: [1]``, markdown, labels
  (``Key point 1:``), a separator such as ``-``, and a line ``N. ... [0|1]``
  that repeats the key point before its verdict. Every number 1..count must
  get exactly one verdict; a number given twice with different verdicts, or a
  number outside 1..count, makes the by-number reading fail. A reply whose
  by-number reading fails but that the authors' rule reads with verdicts 0
  and 1 only gets the authors' reading, so tolerant never rejects a reply the
  authors score (``1. [1]  3. [0]`` for two points reads [1, 0] by position).
  Verdicts other than 0 and 1 are never accepted.

``constrained`` (named, not the authors'; for a judge whose output is constrained to the official
labels, ``--judge vllm:`` or a server's structured outputs): a reply is read only when it is exactly
an official label once stripped (CODIS ``right`` or ``wrong``; Figures 8/9 ``1. [0|1] 2. [0|1] ...``
for exactly the prompt's key points, in order, whitespace between them). Any other reply is
**unscored** (``UNSCORED``): kept, counted and shown as a rate beside the number, and left out of the
score, neither wrong nor a judge failure. The official mode keeps the authors' reading exactly.

A judge that reasons (a local Qwen3 with thinking on, an o-series model) is read from its final
answer only (``judge_answer``: what follows its think block, ``answers.reasoning.split_reply``);
its whole reply is kept. A reply that is a think block never closed gives no verdict in either
mode. A reply without a think block is read exactly as before, so ``official`` stays the authors'.
"""

from __future__ import annotations

import re

from cogbench.reference_eval.answers.reasoning import split_reply

PARSING_MODES = ("tolerant", "official", "constrained")
UNSCORED = "unscored: the reply is not one of the official labels (constrained parsing)"
CODIS_LABELS = {"right": True, "wrong": False}

_MARKDOWN = re.compile(r"[*_`#>~|]")
_QUOTES = re.compile(r"[\"'“”‘’«»]")
_LABEL = re.compile(
    r"^\s*(?:final\s+)?(?:verdict|answer|judge?ment|evaluation|result|output|response|decision|rating)"
    r"\s*[:：=-]\s*",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z]+(?:['’][a-z]+)?")
_NEGATIONS = {"not", "never", "no", "isn't", "isnt", "is't", "aren't", "wasn't", "nor", "hardly", "neither"}


def judge_answer(reply: str) -> str | None:
    """The part of a judge's reply that holds its verdict: the final answer after any think block;
    None for a think block never closed (the judge ran out of tokens while reasoning)."""
    split = split_reply(reply)
    return None if split.status in ("truncated", "unclosed") else split.answer


def _is_official(mode: str) -> bool:
    """A mode outside PARSING_MODES is a caller's error, not silently the tolerant reading."""
    if mode not in PARSING_MODES:
        raise ValueError(f"judge parsing mode {mode!r} is not one of {', '.join(PARSING_MODES)}")
    return mode == "official"


def numbered_labels(count: int) -> str:
    """The regular expression of the official Figures 8/9 answer for ``count`` key points (one space apart)."""
    return " ".join(rf"{n}\. \[[01]\]" for n in range(1, count + 1))


def parse_right_wrong(reply: str, mode: str = "tolerant") -> bool | None:
    """CODIS verdict: True (right), False (wrong) or None (unusable, or unscored in constrained mode;
    never in official mode)."""
    if _is_official(mode):
        return "right" in reply  # CODIS data/eval.py: 1 if 'right' in response else 0
    if mode == "constrained":
        return CODIS_LABELS.get(reply.strip())
    text = _LABEL.sub("", _QUOTES.sub("", _MARKDOWN.sub(" ", reply)).strip()).lower()
    words: list[str] = _WORD.findall(text.replace("’", "'"))
    positions = [index for index, word in enumerate(words) if word in ("right", "wrong")]
    if not positions or len({words[index] for index in positions}) != 1:
        return None  # neither word, or both
    if any(index > 0 and words[index - 1] in _NEGATIONS for index in positions):
        return None
    return words[positions[0]] == "right"


_BRACKETS = str.maketrans({"【": "[", "】": "]", "（": "(", "）": ")", "{": "[", "}": "]", "［": "[", "］": "]"})
# cognition_gpt_eval.py ``output_parse``: its three patterns, verbatim.
_AUTHORS_ONE_DIGIT = re.compile(r"^\d$")
_AUTHORS_LEADING_BRACKET = re.compile(r"\[\d\]")
_AUTHORS_BRACKET = re.compile(r"\[(\d)\]")
_AUTHORS_ITEM = re.compile(r"\d+\.\s\[(\d+)\]")
# "1. [1]", "1: (0)", "1 - [1]", "Key point 2: [0]", "#3 -> 1", "1.[1]"
_SEPARATOR = r"(?:[.):：]|-+>?|=)"
_TOLERANT_ITEM = re.compile(
    rf"(?<![\d.\[(])(\d{{1,3}})\s*(?:{_SEPARATOR}?\s*[\[(]\s*([01])\s*[\])]|{_SEPARATOR}\s*([01])(?![.,]?\d))"
)
# A numbered line that repeats its key point, with one bracketed verdict at its end.
_LINE_ITEM = re.compile(r"^\s*(\d{1,3})\s*[.):：-]\s*\S.*?[\[(]\s*([01])\s*[\])]\s*[.]?\s*$")


def authors_numbered(reply: str, count: int) -> list[int] | None:
    """Verdicts of key points 1..count as the authors' ``output_parse`` + ``evaluator`` read them, or None.

    None is the authors' KeyError on ``output_dict[str(j)]``: the reply is
    retried. ``chat_gpt_evaluation`` strips every reply before parsing.
    """
    text = reply.strip()
    if _AUTHORS_ONE_DIGIT.match(text):
        verdicts = [int(text)]
    elif _AUTHORS_LEADING_BRACKET.match(text):
        found = _AUTHORS_BRACKET.search(text)
        assert found is not None  # the leading bracket just matched
        verdicts = [int(found.group(1))]
    else:
        verdicts = [int(verdict) for verdict in _AUTHORS_ITEM.findall(text)]
    return verdicts[:count] if len(verdicts) >= count else None


def _by_number(reply: str, count: int) -> list[int] | None:
    """Tolerant reading: ``N [0|1]`` in many formats, by number; None unless 1..count each get one verdict."""
    found: dict[int, set[int]] = {}
    text = _MARKDOWN.sub(" ", reply.translate(_BRACKETS))
    text = re.sub(r"(?i)\b(?:key\s*points?|event\s*relationships?|items?|points?|no\.?)\s*#?\s*(?=\d)", "", text)
    text = text.replace("#", "")
    for line in text.splitlines():
        line_match = _LINE_ITEM.match(line)
        if line_match and len(re.findall(r"[\[(]\s*[01]\s*[\])]", line)) == 1:
            found.setdefault(int(line_match.group(1)), set()).add(int(line_match.group(2)))
            continue
        for number, bracketed, bare in _TOLERANT_ITEM.findall(line):
            found.setdefault(int(number), set()).add(int(bracketed or bare))
    if any(len(verdicts) > 1 for verdicts in found.values()):
        return None
    if any(number < 1 or number > count for number in found):
        return None
    if any(number not in found for number in range(1, count + 1)):
        return None
    return [next(iter(found[number])) for number in range(1, count + 1)]


def parse_numbered(reply: str, count: int, mode: str = "tolerant") -> list[int] | None:
    """CogBench verdicts of key points 1..count, in order; None when unusable (see the module docstring)."""
    if mode == "constrained":
        exact = re.fullmatch(numbered_labels(count).replace(" ", r"\s+"), reply.strip())
        return [int(verdict) for verdict in re.findall(r"\[([01])\]", reply)] if exact else None
    authors = authors_numbered(reply, count)
    if _is_official(mode):
        return authors
    by_number = _by_number(reply, count)
    if by_number is None and authors is not None and set(authors) <= {0, 1}:
        return authors
    return by_number
