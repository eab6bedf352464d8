"""The robust VQA extractor on the phrasings models use; single letter-like words are never fuzzy-matched."""

from __future__ import annotations

import pytest

from cogbench.reference_eval.metrics.vqa import extract_official, extract_robust

CHOICES = ["A man is holding a dog", "The woman is angry", "It is raining", "A child plays with a ball"]

PHRASINGS = [
    ("B", "B"),
    ("(B)", "B"),
    ("B.", "B"),
    ("**C**", "C"),
    ("D) A child plays with a ball", "D"),
    ("Answer: B", "B"),
    ("The answer is (C).", "C"),
    ("The correct option is D", "D"),
    ("I choose option B because she frowns.", "B"),
    ("b", "B"),
    ("(c)", "C"),
    ("d.", "D"),
    ("a", "A"),  # the whole response: a letter, not the article
    ("(b) the woman is angry", "B"),
    ("the answer is b.", "B"),
    ("answer: c", "C"),
    ("The woman is angry.", "B"),  # option text, clearly best
    ("It is raining outside", "C"),
    # never a guess
    ("I", None),
    ("x", None),
    ("A.", "A"),
    ("a man", "A"),  # two words: fuzzy matching may read it, and only option A has "man"
    ("the answer is a dog", None),  # "a" is the article here
    ("no idea", None),
    ("", None),
    ("?", None),
    ("e", None),
    ("a)", "A"),
]


@pytest.mark.parametrize("response, expected", PHRASINGS)
def test_robust_extractor(response, expected):
    assert extract_robust(response, CHOICES) == expected


def test_lone_article_is_not_fuzzy_matched_to_an_option_containing_it():
    # Before: token-set matching mapped "a" to whichever option contains the article "a".
    assert extract_robust("I", ["I am here", "You", "They", "We"]) is None
    assert extract_robust("a", CHOICES) == "A" and extract_robust("a", ["cat", "a dog", "bird", "fish"]) == "A"


def test_official_extractor_is_the_first_character():
    assert [extract_official(r) for r in ("B", "b", " B", "Answer: B")] == ["B", None, None, "A"]


def test_table_size():
    assert len(PHRASINGS) >= 25
