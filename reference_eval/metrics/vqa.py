"""VQA accuracy of CogBench (final paper, Section 3.2.2): share of questions answered right.

Two answer extractors, both reported:

- ``official`` (metric ``accuracy_official``): the first character of the
  response, as the authors' scoring script takes it;
- ``robust`` (metric ``accuracy``): an explicit option letter in the usual
  phrasings ("B", "(B)", "B.", "Answer: B", "The answer is option B"...), else
  the option whose text the response matches best with rapidfuzz, if the match
  is clear. Never a guess: otherwise the response is unparseable.

Lowercase letters (the robust extractor's rule): ``a``-``d`` are read as option
letters only where they cannot be the article or a word -- the whole response
(``b``, ``(c)``, ``d.``), bracketed at the start (``(b) a cat``), or after
"answer"/"option" and followed by nothing but punctuation (``the answer is
b.``). A response that is a single letter-like word (``a``, ``I``, ``x``) that
is not read as a letter is unparseable: it never goes to fuzzy matching,
where the article "a" would match any option containing it.

A reply that commits to more than one option is unparseable, never read as
its first letter: two different letters joined by "or", "/" or "|" ("(A) or
(B)", "A/B", "either A or C"), or the full texts of two options (neither part
of the other). An option's exact text (lowercased, punctuation dropped) in the
reply wins over fuzzy scores; fuzzy matching is the last resort.

Unparseable responses count as wrong and are counted and shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from cogbench.schemas.vocabulary import ANSWER_LETTERS

# Phrasings that name a letter outright. Tried in order; the first that
# matches wins.
_LETTER_PATTERNS = [
    # "B", "(B)", "B.", "**B**", "B) text" -- but not the article in "A man ..."
    re.compile(r"^\s*[\(\[\*]*\s*([ABCD])\s*(?:[\)\]\*]+|[.:,]|$)"),
    # "Answer: B", "The answer is (B)", "option B"; the letter itself must be a capital.
    re.compile(r"\b(?i:answer|option|choice)\s*(?i:is|:)?\s*(?i:option\s*)?[\(\[\*]*([ABCD])\b"),
    # lowercase, only where it cannot be the article: alone, bracketed first, or ending an "answer is" phrase
    re.compile(r"^\s*[\(\[\*]*\s*([abcd])\s*[\)\]\*]*\s*[.:!]?\s*$"),
    re.compile(r"^\s*[\(\[]\s*([abcd])\s*[\)\]]"),
    re.compile(r"\b(?i:answer|option|choice)\s*(?i:is|:)?\s*(?i:option\s*)?[\(\[\*]*([abcd])[\)\]\*]*\s*[.!]?\s*$"),
]
# Two option letters offered as alternatives: "(A) or (B)", "A/B", "either A or C", "option B or option D".
_HEDGE = re.compile(
    r"(?<![A-Za-z])[\(\[*]*\s*([ABCD]|(?<=[\(\[])[abcd])\s*[\)\]*]*\s*(?:,?\s*(?i:or)|/|\|)\s*(?i:option\s*)?"
    r"[\(\[*]*\s*([ABCD]|(?<=[\(\[])[abcd])(?![A-Za-z])"
)
_LETTER_LIKE = re.compile(r"^\W*[A-Za-z]\W*$")
FUZZY_MIN_SCORE = 80.0
FUZZY_MIN_MARGIN = 10.0


def extract_official(response: str) -> str | None:
    """The authors' rule: the response's first character."""
    first = response[:1]
    return first if first in ANSWER_LETTERS else None


def extract_robust(response: str, choices: Sequence[str]) -> str | None:
    """An explicit letter, else a clearly best-matching option text, else None."""
    if hedges(response):
        return None
    for pattern in _LETTER_PATTERNS:
        match = pattern.search(response)
        if match:
            return match.group(1).upper()
    if _LETTER_LIKE.match(response):
        return None  # one letter-like word that is not an option letter: never fuzzy-matched
    from rapidfuzz import fuzz, utils

    quoted = exact_option(response, choices, utils.default_process)
    if quoted is not None:
        return quoted or None

    scores = [fuzz.token_set_ratio(response, choice, processor=utils.default_process) for choice in choices]
    ranked = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
    best, runner_up = scores[ranked[0]], scores[ranked[1]]
    if best >= FUZZY_MIN_SCORE and best - runner_up >= FUZZY_MIN_MARGIN:
        return ANSWER_LETTERS[ranked[0]]
    return None


def hedges(response: str) -> bool:
    """Two different option letters offered as alternatives."""
    return any(a.upper() != b.upper() for a, b in _HEDGE.findall(response))


def exact_option(response: str, choices: Sequence[str], normalise: Callable[[str], str]) -> str | None:
    """The letter of the one option whose whole normalised text the reply contains; "" when it quotes two
    options (neither inside the other: a hedge); None when it quotes none."""
    text = f" {normalise(response)} "
    texts = [normalise(choice) for choice in choices]
    quoted = [i for i, t in enumerate(texts) if t and f" {t} " in text]
    quoted = [i for i in quoted if not any(j != i and f" {texts[i]} " in f" {texts[j]} " for j in quoted)]
    if not quoted:
        return None
    return ANSWER_LETTERS[quoted[0]] if len(quoted) == 1 else ""
