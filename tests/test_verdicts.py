"""Judge replies as real judges send them, each with the verdict it must give (judges/verdicts.py)."""

from __future__ import annotations

import pytest

from cogbench.reference_eval.judges.verdicts import parse_numbered, parse_right_wrong

from oracle_scripts import authors_output_parse, cognition_gpt_eval

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
    ("1.[1] 2.[0] 3.[1]", [1, 0, 1], None),
    ("1. [ 1 ] 2. [ 0 ] 3. [ 1 ]", [1, 0, 1], None),
    ("1) [1] 2) [0] 3) [1]", [1, 0, 1], None),
    ("1: [1], 2: [0], 3: [1]", [1, 0, 1], None),
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
    ("Key point 1: [1]\nKey point 2: [0]\nKey point 3: [1]", [1, 0, 1], None),
    ("<KEY POINT> 1: 1\n<KEY POINT> 2: 0\n<KEY POINT> 3: 1", [1, 0, 1], None),
    ("1. The woman is the mother of the boy. [1]\n2. It is winter. [0]\n3. The boy is sad. [1]", [1, 0, 1], None),
    ("1. [1] - mentioned explicitly\n2. [0] - not mentioned\n3. [1] - implied by 'her son'", [1, 0, 1], [1, 0, 1]),
    ("3. [1] 1. [1] 2. [0]", [1, 0, 1], [1, 1, 0]),  # tolerant by number, the authors by position
    ("1. [1] 2. [0] 3. [1] 1. [1]", [1, 0, 1], [1, 0, 1]),  # a repeat that agrees
    # unusable
    ("1. [1] 2. [0]", None, None),  # 3 missing
    ("1. [1] 2. [0] 3. [1] 2. [1]", [1, 0, 1], [1, 0, 1]),  # 2 contradicts itself: the authors read the first three
    ("1. [1] 2. [0] 3. [1] 4. [0]", [1, 0, 1], [1, 0, 1]),  # a fourth verdict for three points: ignored
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


# Issue 22 item 6: what the authors' ``output_parse`` (cognition_gpt_eval.py), as its evaluator uses it,
# reads from each reply; measured by running the script. None: no verdict, the reply is retried.
@pytest.fixture(scope="module")
def output_parse():
    """The authors' cognition_gpt_eval.py (its output_parse), from ../shared/oracles."""
    return cognition_gpt_eval()


AUTHORS_READINGS = [
    ("1. [1]  2. [0]", 2, [1, 0]),
    ("1. [1]  2. [0]  3. [1]", 2, [1, 0]),
    ("1.[1] 2.[0]", 2, None),
    ("1) [1] 2) [0]", 2, None),
    ("1: [1] 2: [0]", 2, None),
    ("2. [0]  1. [1]", 2, [0, 1]),
    ("1. [1]  3. [0]", 2, [1, 0]),
    ("1. [1]\n1. [0]\n2. [1]", 2, [1, 0]),
    ("[1]", 1, [1]),
    ("1", 1, [1]),
    ("1.  [1]  2.  [0]", 2, None),
    ("1. [ 1 ]  2. [0]", 2, None),
    ("1. [1]  2. [2]", 2, [1, 2]),
    ("Key point 1: [1]\nKey point 2: [0]", 2, None),
    ("1. (1)  2. (0)", 2, None),
    # A verdict of several digits is read whole (\\d+ in the item pattern), not its first digit.
    ("1. [10]", 1, [10]),
    ("1. [10]  2. [0]", 2, [10, 0]),
    ("1. [12]  2. [1]", 2, [12, 1]),
    ("[1] 2. [10]", 1, [1]),
]


@pytest.mark.parametrize("reply, count, authors", AUTHORS_READINGS)
def test_official_reads_as_the_authors_output_parse(reply, count, authors):
    assert parse_numbered(reply, count, "official") == authors


@pytest.mark.parametrize("reply, count, authors", AUTHORS_READINGS)
def test_the_table_is_what_the_authors_script_reads(reply, count, authors, output_parse):
    assert authors_output_parse(reply, count, output_parse) == authors


@pytest.mark.parametrize("reply", ["[10]", "10", "[10] and [1]"])
def test_a_lone_verdict_of_two_digits_is_no_verdict_as_in_the_authors_script(reply, output_parse):
    """``^\\d$`` and ``\\[\\d\\]`` take one digit only: "[10]" and "10" give the authors no key point 1."""
    assert authors_output_parse(reply, 1, output_parse) is None
    assert parse_numbered(reply, 1, "official") is None


@pytest.mark.parametrize("reply, count, authors", AUTHORS_READINGS)
def test_tolerant_accepts_every_reply_the_authors_score_with_0_or_1(reply, count, authors):
    tolerant = parse_numbered(reply, count)
    if authors is not None and set(authors) <= {0, 1}:
        assert tolerant is not None
        # by number where the numbers say which point is which, else the authors' positions
        assert tolerant == ([1, 0] if reply == "2. [0]  1. [1]" else authors)
    if authors is not None and not set(authors) <= {0, 1}:
        assert tolerant is None  # a verdict of 2 is no verdict


def test_tolerant_reads_the_formats_the_authors_retry():
    assert [parse_numbered(r, c) for r, c, a in AUTHORS_READINGS if a is None] == [
        [1, 0],
        [1, 0],
        [1, 0],
        [1, 0],
        [1, 0],
        [1, 0],
        [1, 0],
    ]


def test_the_mode_is_compared_by_value_not_identity():
    """A mode read from the command line is a new string object, not the interned literal."""
    official = "".join(["offi", "cial"])
    assert parse_numbered("2. [0]  1. [1]", 2, official) == [0, 1]
    assert parse_right_wrong("Right.", official) is False


def test_only_the_word_before_a_verdict_can_negate_it():
    # a negation at the very end is not "before" the first word (no wrap-around to the last word)
    assert parse_right_wrong("right, and the other is not") is True


def test_a_key_point_numbered_0_fails_the_by_number_reading():
    # 0 is outside 1..count: tolerant falls back to the authors' positions, as they read it
    assert parse_numbered("0. [1]  1. [1]  2. [0]", 2) == [1, 1]
    assert parse_numbered("0. [1]  1. [1]  2. [0]", 2, "official") == [1, 1]


@pytest.mark.parametrize("mode", ["Official", "strict", ""])
def test_a_parsing_mode_outside_the_two_is_refused_not_read_as_tolerant(mode):
    # A typo such as "Official" from the library API would otherwise score with the tolerant reading.
    with pytest.raises(ValueError, match="is not one of tolerant, official"):
        parse_right_wrong("right", mode)
    with pytest.raises(ValueError, match="is not one of tolerant, official"):
        parse_numbered("1. [1]", 1, mode)
