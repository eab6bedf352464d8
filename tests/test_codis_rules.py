"""The offline parts of CODIS scoring: final answers, context awareness, the rule judge, the same-answer parse.

Pinned by hand. The rule judge's nearness is rapidfuzz's token-set ratio; for the one-token
answers used here it is the Indel similarity 100 * 2 * LCS / (len a + len b) of the two
strings (no token is shared, so only the two differing tokens are compared), worked out
in the comments. The threshold is CODIS's rule judge's ``RULE_MIN_SIMILARITY`` = 60.
"""

from __future__ import annotations

import pytest

from cogbench.reference_eval.judges.codis import rule_verdict
from cogbench.reference_eval.judges.codis_equality import parse_changed
from cogbench.reference_eval.metrics.codis import final_answer, outputs_differ


def test_the_final_answer_is_the_last_non_empty_line_without_its_label():
    output = "The sign says closed.\nIt is night.\n\nAnswer: the shop is closed\n  \n"
    assert final_answer(output) == "the shop is closed"
    assert final_answer("first\nsecond\nthird") == "third"
    assert final_answer("only line") == "only line"


def test_an_empty_output_has_an_empty_final_answer():
    assert final_answer("") == ""
    assert final_answer(" \n\n ") == ""


@pytest.mark.parametrize(
    "first, second",
    [
        ("Reasoning.\nAnswer: left", "Other reasoning.\nAnswer: LEFT!"),  # case and punctuation do not count
        ("Because of the rain.\nthe umbrella is open", "It is sunny.\nThe umbrella  is open."),
    ],
)
def test_the_same_final_answer_in_other_words_of_reasoning_is_not_a_change(first, second):
    assert outputs_differ(first, second) is False
    assert outputs_differ(second, first) is False


@pytest.mark.parametrize(
    "first, second",
    [
        ("Reasoning.\nAnswer: left", "Reasoning.\nAnswer: right"),
        ("x\nbefore noon", "x\nafter noon"),
    ],
)
def test_different_final_answers_are_a_change_in_either_order(first, second):
    assert outputs_differ(first, second) is True
    assert outputs_differ(second, first) is True


def test_an_answer_identical_to_its_own_truth_is_right():
    assert rule_verdict("Because.\nAnswer: not appropriate", "not appropriate", "appropriate") is True


def test_an_answer_identical_to_the_other_truth_is_wrong():
    # own: "abcxy" vs "abcde", LCS "abc" = 3 -> 100 * 6 / 10 = 60; other: identical -> 100
    assert rule_verdict("abcxy", "abcde", "abcxy") is False


def test_a_negated_answer_is_told_apart_from_the_plain_one_by_the_plain_ratio():
    # token-set ratio: "appropriate" is a subset of both truths -> 100 and 100 (a tie);
    # plain ratio: vs "appropriate" 100, vs "not appropriate" 100 * 2 * 11 / 26 = 84.6
    assert rule_verdict("appropriate", "appropriate", "not appropriate") is True
    assert rule_verdict("appropriate", "not appropriate", "appropriate") is False


def test_an_answer_that_says_its_truth_in_a_sentence_is_right():
    # token-set ratio: {left} is a subset of the answer's words -> 100 (the plain ratio is only
    # 100 * 2 * 4 / (31 + 4) = 22.9, so it is the token-set ratio that must reach 60); "right" is no word of it
    assert rule_verdict("Answer: The red cup is on the left side.", "left", "right") is True


def test_an_answer_as_near_to_both_truths_is_wrong():
    # "abcxy" vs "abcde" and vs "abcfg": LCS 3 of 5 + 5 -> 60 and 60, plain ratio 60 and 60: a tie
    assert rule_verdict("abcxy", "abcde", "abcfg") is False


def test_a_similarity_of_exactly_60_to_its_own_truth_is_near_enough():
    # own: "abcxy" vs "abcde" -> 60 (above); other: "zzzzz", no common character -> 0
    assert rule_verdict("abcxy", "abcde", "zzzzz") is True


def test_a_similarity_just_under_60_is_not_near_enough_even_when_nearer_than_the_other():
    # 13 a's + 9 x's vs 13 a's + 9 y's: LCS 13 -> 100 * 26 / 44 = 59.09 < 60; other "zzzzz" -> 0
    answer, own = "a" * 13 + "x" * 9, "a" * 13 + "y" * 9
    assert rule_verdict(answer, own, "zzzzz") is False


@pytest.mark.parametrize(
    "reply, changed",
    [
        ("different", True),
        ("Different.", True),
        ('"same"', False),
        ("SAME", False),
        ("maybe", None),
        ("", None),
        ("same different", None),
    ],
)
def test_the_same_answer_judge_reply_is_read_as_changed_or_not(reply, changed):
    assert parse_changed(reply) is changed
