"""The robust VQA reader credits one option only when the reply commits to exactly one (issue 22, item 5).

Each expected reading is by hand: a reply naming two options is a hedge (unparseable, counted wrong);
a reply that quotes one option's whole text is that option, even when fuzzy scores are close.
"""

from __future__ import annotations

import pytest

from cogbench.reference_eval.metrics.vqa import extract_robust

CHOICES = ["The man is sad", "The man is sad and angry at the woman", "It is raining", "A child plays with a ball"]

SHAPES = [
    # hedges: two different options offered
    ("(A) or (B)", None),
    ("A/B", None),
    ("either A or C", None),
    ("The answer is A or B.", None),
    ("Option B or option D", None),
    ("(a) or (b)", None),
    ("Answer: C/D", None),
    ("A | C", None),
    ("It is raining, or a child plays with a ball", None),  # two options' full texts
    # one option, however phrased
    ("B", "B"),
    ("(C)", "C"),
    ("The answer is (D).", "D"),
    ("B) The man is sad and angry at the woman", "B"),
    # exact option text wins over close fuzzy scores
    ("The man is sad", "A"),  # token-set ratio 100 for A and for B (B holds every word): fuzzy alone gives up
    ("the man is sad.", "A"),
    ("The man is sad and angry at the woman.", "B"),  # A's text lies inside B's: the longer, quoted one
    ("I think it is raining.", "C"),
    # nothing committed to
    ("I am not sure.", None),
    ("", None),
]


@pytest.mark.parametrize("reply, expected", SHAPES)
def test_reply_shapes(reply, expected):
    assert extract_robust(reply, CHOICES) == expected


def test_same_letter_twice_is_no_hedge():
    assert extract_robust("B, that is (B)", CHOICES) == "B"
