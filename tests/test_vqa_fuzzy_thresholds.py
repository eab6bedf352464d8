"""The robust VQA reader's last resort (metrics/vqa.py): an option's text is read only when the match is clear.

The rule: the best fuzzy score must be at least 80 and at least 10 above the runner-up. The scores are
rapidfuzz's ``token_set_ratio``; for a reply and an option that are each one word with no word in
common it is the Indel similarity of the two words, 100 * 2 * LCS / (len1 + len2). With words that
are runs of one letter ("xxxx") the LCS is the shorter run, so every score below is worked out by hand
(and one test checks the hand values against rapidfuzz, so a change there is caught as such).
Words without an "x" ("moon", "rest", "sing") share no letter with the reply and score 0.
"""

from __future__ import annotations

import pytest
from rapidfuzz import fuzz, utils

from cogbench.reference_eval.metrics.vqa import extract_robust, hedges


def x(n: int) -> str:
    return "x" * n


@pytest.mark.parametrize(
    "reply, option, score",
    [
        (x(4), x(6), 80.0),  # 200 * 4 / (4 + 6)
        (x(17), x(26), 200 * 17 / 43),  # 79.07
        (x(9), x(11), 90.0),  # 200 * 9 / 20
        (x(9), x(6), 80.0),  # 200 * 6 / 15
        (x(6), x(4), 80.0),  # 200 * 4 / 10
        (x(6), x(11), 200 * 6 / 17),  # 70.59
        (x(4), "moon", 0.0),  # no common letter
    ],
)
def test_the_hand_scores_are_rapidfuzz_token_set_ratio(reply, option, score):
    assert fuzz.token_set_ratio(reply, option, processor=utils.default_process) == pytest.approx(score)


def test_a_best_score_of_exactly_80_with_a_clear_lead_is_read():
    # scores 80, 0, 0, 0: at the minimum score, 80 ahead
    assert extract_robust(x(4), [x(6), "moon", "rest", "sing"]) == "A"
    assert extract_robust(x(4), ["moon", "rest", "sing", x(6)]) == "D"


def test_a_best_score_just_under_80_is_not_read_however_clear_its_lead():
    # scores 0, 79.07, 0, 0: 79 ahead, but under the minimum score
    assert extract_robust(x(17), ["moon", x(26), "rest", "sing"]) is None


def test_a_lead_of_exactly_10_is_read():
    # scores 80, 90, 0, 0: best 90 (B), 10 ahead of the runner-up
    assert extract_robust(x(9), [x(6), x(11), "moon", "rest"]) == "B"


def test_a_lead_under_10_is_not_read():
    # scores 80, 70.59, 0, 0: best 80 but only 9.41 ahead of the runner-up (the third and fourth are far behind)
    assert extract_robust(x(6), [x(4), x(11), "moon", "rest"]) is None
    assert extract_robust(x(6), ["moon", x(11), "rest", x(4)]) is None


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("(B) or (A)", True),  # the later letter first
        ("D/C", True),
        ("(B) or (B)", False),  # the same letter twice commits to one option
        ("(b) or (B)", False),
        ("(d) or (c)", True),
    ],
)
def test_a_hedge_is_two_different_letters_in_either_order(reply, expected):
    assert hedges(reply) is expected


def test_a_hedge_in_descending_order_is_unparseable_and_the_same_letter_twice_is_read():
    choices = ["Noon", "Dawn", "Dusk", "Night"]
    assert extract_robust("(B) or (A)", choices) is None
    assert extract_robust("(B) or (B)", choices) == "B"


def test_the_quoted_option_that_holds_a_later_options_text_wins():
    # B's text lies inside A's: a reply quoting A whole quotes B too, and is read as A, the longer one
    choices = ["The man is sad and angry at the woman", "The man is sad", "It is raining", "A child plays"]
    assert extract_robust("The man is sad and angry at the woman.", choices) == "A"
    assert extract_robust("the man is sad", choices) == "B"
