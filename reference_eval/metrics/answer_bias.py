"""Answer bias of a CODIS model: word-pair frequencies (CODIS paper, Section 5.2, Table 6).

The paper counts, over "88 queries whose groundtruth answers include these
words", how often each word of three pairs (up / down, morning / afternoon,
appropriate / not appropriate) appears in the ground truth (15:15, 16:16,
13:13) and in a model's outputs. The released data phrase answers differently
(no answer contains "appropriate": the culture questions ask "Is my gesture
appropriate?" and are answered "Yes." / "No."), so the selection rule is
explicit here, and any pairs can be given:

1. A text *states* a word of a pair when, after normalisation (lower case,
   punctuation to spaces), the word appears as whole words; when one word of
   the pair contains the other ("not appropriate" contains "appropriate"), the
   longer is looked for first and its matches are removed before the shorter
   is looked for.
2. If the text states neither word, a yes/no answer to a question that names
   the first word as whole words states the first word for "yes" and the second
   for "no" (so "Is my gesture appropriate?" answered "No." states
   "not appropriate").
3. A text that states both words, or neither, states nothing.
4. A query is *selected* for a pair when its ground-truth answer states one of
   its words. Over the selected queries the ground truth's and the model's
   final answers (``metrics.codis.final_answer``) are counted with rules 1-3.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cogbench.errors import UsageError
from cogbench.reference_eval.metrics.codis import final_answer, normalize_answer


@dataclass(frozen=True)
class WordPair:
    first: str
    second: str

    @property
    def label(self) -> str:
        return f"{self.first}:{self.second}"


# CODIS paper, Section 5.2 and Table 6.
PAPER_PAIRS = (WordPair("up", "down"), WordPair("morning", "afternoon"), WordPair("appropriate", "not appropriate"))
PAPER_GROUNDTRUTH = {"up:down": (15, 15), "morning:afternoon": (16, 16), "appropriate:not appropriate": (13, 13)}
PAPER_QUERIES = 88


def parse_word_pairs(text: str) -> list[WordPair]:
    """``"up/down,morning/afternoon"`` -> pairs; a malformed pair is a usage error."""
    pairs = []
    for part in text.split(","):
        words = [normalize_answer(w) for w in part.split("/")]
        if len(words) != 2 or not all(words) or words[0] == words[1]:
            raise UsageError(f"--word-pairs {text!r}: expected FIRST/SECOND[,FIRST/SECOND...], e.g. up/down")
        pairs.append(WordPair(*words))
    return pairs


def _has(text: str, word: str) -> tuple[bool, str]:
    pattern = r"\b" + r"\s+".join(map(re.escape, word.split())) + r"\b"
    return re.search(pattern, text) is not None, re.sub(pattern, " ", text)


def stated_word(text: str, pair: WordPair, question: str = "") -> str | None:
    """Which word of the pair a text states (rules 1-3 above): ``"first"``, ``"second"`` or None."""
    norm = normalize_answer(text)
    longer, shorter = sorted((pair.first, pair.second), key=len, reverse=True)
    has_longer, rest = _has(norm, longer)
    has_shorter, _ = _has(rest, shorter)
    found = {longer: has_longer, shorter: has_shorter}
    if found[pair.first] != found[pair.second]:
        return "first" if found[pair.first] else "second"
    if found[pair.first]:
        return None
    if _has(normalize_answer(question), pair.first)[0]:
        head = norm.split()[:1]
        if head == ["yes"]:
            return "first"
        if head == ["no"]:
            return "second"
    return None


def word_pair_counts(queries: Sequence[tuple[str, str, str]], pair: WordPair) -> dict[str, object]:
    """Counts for one pair over (question, ground truth, model output) triples (rule 4)."""
    truth = [0, 0]
    model = [0, 0]
    selected = 0
    for question, groundtruth, output in queries:
        word = stated_word(groundtruth, pair, question)
        if word is None:
            continue
        selected += 1
        truth[word == "second"] += 1
        said = stated_word(final_answer(output), pair, question)
        if said is not None:
            model[said == "second"] += 1
    return {
        "pair": pair.label,
        "queries": selected,
        "groundtruth": truth,
        "model": model,
        "paper_groundtruth": list(PAPER_GROUNDTRUTH[pair.label]) if pair.label in PAPER_GROUNDTRUTH else None,
    }


def bias_block(counts: Sequence[dict[str, object]]) -> dict[str, object]:
    """scores.json's ``analyses.answer_bias``: each pair's ``word_pair_counts``, the queries selected, the rule."""
    return {
        "pairs": list(counts),
        "queries": sum(int(c["queries"]) for c in counts),  # type: ignore[call-overload]
        "paper_queries": PAPER_QUERIES,
        "rule": "metrics/answer_bias.py (selection rules 1-4)",
        "reference": "CODIS paper, Section 5.2, Table 6",
    }
