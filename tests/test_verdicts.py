"""Judge replies as real judges send them, each with the verdict it must give (judges/verdicts.py)."""

from __future__ import annotations

import pytest

from cogbench.reference_eval.judges.verdicts import parse_numbered, parse_right_wrong

R, W, U = True, False, None  # right, wrong, unusable

RIGHT_WRONG = [
    ("right", R, R),
    ("wrong", W, W),
    ("Right", R, W),  # the authors' substring rule is case-sensitive
    ("Wrong", W, W),
    ("RIGHT", R, W),
    ("right.", R, R),
    ("Wrong.", W, W),
    ("  right \n", R, R),
    ('"right"', R, R),
    ("'wrong'", W, W),
    ("“Right”", R, W),
    ("**right**", R, R),
    ("**Wrong**", W, W),
    ("`right`", R, R),
    ("Verdict: right", R, R),
    ("Verdict: Wrong", W, W),
    ("Answer: Right.", R, W),
    ("**Verdict:** wrong", W, W),
    ("Final answer: right", R, R),
    ("Judgement: WRONG", W, W),
    ("Output: right", R, R),
    ("The answer is right.", R, R),
    ("The output is wrong.", W, W),
    ("I would say the answer is Right.", R, W),
    ("right\n\nThe output matches the groundtruth in meaning.", R, R),
    ("Wrong - the output names the left side.", W, W),
    ("wrong!", W, W),
    ("Right!", R, W),
    ("# Right", R, W),
    ("> wrong", W, W),
    # unusable: both words, neither, negated
    ("The right answer is the cup, so the output is wrong.", U, R),
    ("right or wrong? I cannot tell.", U, R),
    ("correct", U, W),
    ("incorrect", U, W),
    ("", U, W),
    ("I don't know", U, W),
    ("not right", U, R),
    ("It isn't wrong", U, W),
    ("That is not wrong.", U, W),
    ("rightly so", U, R),  # "rightly" is not the word "right" (but contains the substring)
    ("wrongly", U, W),
    ("alright", U, R),
    ("Right, right.", R, R),  # one word, twice
]


@pytest.mark.parametrize("reply, tolerant, official", RIGHT_WRONG)
def test_right_wrong_replies(reply, tolerant, official):
    assert parse_right_wrong(reply) is tolerant
    assert parse_right_wrong(reply, "official") is official


NUMBERED = [
    ("1. [1] 2. [0] 3. [1]", [1, 0, 1], [1, 0, 1]),
    ("1. [1]\n2. [0]\n3. [1]", [1, 0, 1], [1, 0, 1]),
    ("1.[1] 2.[0] 3.[1]", [1, 0, 1], [1, 0, 1]),
    ("1. [ 1 ] 2. [ 0 ] 3. [ 1 ]", [1, 0, 1], [1, 0, 1]),
    ("1) [1] 2) [0] 3) [1]", [1, 0, 1], [1, 0, 1]),
    ("1: [1], 2: [0], 3: [1]", [1, 0, 1], [1, 0, 1]),
    ("Here are my answers:\n1. [1] 2. [0] 3. [1]\nHope this helps.", [1, 0, 1], [1, 0, 1]),
    ("1. (1) 2. (0) 3. (1)", [1, 0, 1], None),
    ("1. 【1】 2. 【0】 3. 【1】", [1, 0, 1], None),
    ("1. {1} 2. {0} 3. {1}", [1, 0, 1], None),
    ("1. 1\n2. 0\n3. 1", [1, 0, 1], None),
    ("1: 1, 2: 0, 3: 1", [1, 0, 1], None),
    ("1 - [1]\n2 - [0]\n3 - [1]", [1, 0, 1], None),
    ("1 -> 1\n2 -> 0\n3 -> 1", [1, 0, 1], None),
    ("**1.** [1]\n**2.** [0]\n**3.** [1]", [1, 0, 1], None),
    ("1. **[1]** 2. **[0]** 3. **[1]**", [1, 0, 1], None),
    ("Key point 1: [1]\nKey point 2: [0]\nKey point 3: [1]", [1, 0, 1], [1, 0, 1]),
    ("<KEY POINT> 1: 1\n<KEY POINT> 2: 0\n<KEY POINT> 3: 1", [1, 0, 1], None),
    ("1. The woman is the mother of the boy. [1]\n2. It is winter. [0]\n3. The boy is sad. [1]", [1, 0, 1], None),
    ("1. [1] - mentioned explicitly\n2. [0] - not mentioned\n3. [1] - implied by 'her son'", [1, 0, 1], [1, 0, 1]),
    ("3. [1] 1. [1] 2. [0]", [1, 0, 1], [1, 0, 1]),  # by number, not by position
    ("1. [1] 2. [0] 3. [1] 1. [1]", [1, 0, 1], [1, 0, 1]),  # a repeat that agrees
    # unusable
    ("1. [1] 2. [0]", None, None),  # 3 missing
    ("1. [1] 2. [0] 3. [1] 2. [1]", None, None),  # 2 contradicts itself
    ("1. [1] 2. [0] 3. [1] 4. [0]", None, [1, 0, 1]),  # a fourth verdict for three points
    ("Yes, yes and no.", None, None),
    ("1. [yes] 2. [no] 3. [yes]", None, None),
    ("", None, None),
    ("1. [1] 2. [] 3. [1]", None, None),
    ("11 10 1", None, None),  # bare digits without separators are not verdicts
]


@pytest.mark.parametrize("reply, tolerant, official", NUMBERED)
def test_numbered_replies(reply, tolerant, official):
    assert parse_numbered(reply, 3) == tolerant
    assert parse_numbered(reply, 3, "official") == official


def test_table_sizes():
    assert len(RIGHT_WRONG) >= 30 and len(NUMBERED) >= 25
