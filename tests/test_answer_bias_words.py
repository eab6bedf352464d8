"""Answer bias of CODIS (metrics/answer_bias.py; CODIS paper, Section 5.2, Table 6): which word of a pair a
text states, and the counts over queries.

The paper's values are copied from Table 6 (ground truth 15:15, 16:16, 13:13) and Section 5.2 ("a set of
88 queries"; 15+15 + 16+16 + 13+13 = 88). Every other expected value is read by hand off the module's
rules 1-4 (its docstring) on texts written here; the counts are tallied query by query in comments.
"""

from __future__ import annotations

import pytest

from cogbench.errors import UsageError
from cogbench.reference_eval.metrics.answer_bias import (
    PAPER_GROUNDTRUTH,
    PAPER_PAIRS,
    PAPER_QUERIES,
    WordPair,
    parse_word_pairs,
    stated_word,
    word_pair_counts,
)

UP = WordPair("up", "down")
APPROPRIATE = WordPair("appropriate", "not appropriate")


def test_the_papers_pairs_ground_truth_and_query_count_are_table_6():
    assert [(p.first, p.second) for p in PAPER_PAIRS] == [
        ("up", "down"),
        ("morning", "afternoon"),
        ("appropriate", "not appropriate"),
    ]
    assert [p.label for p in PAPER_PAIRS] == ["up:down", "morning:afternoon", "appropriate:not appropriate"]
    assert PAPER_GROUNDTRUTH == {
        "up:down": (15, 15),
        "morning:afternoon": (16, 16),
        "appropriate:not appropriate": (13, 13),
    }
    assert PAPER_QUERIES == 88 == 15 + 15 + 16 + 16 + 13 + 13


@pytest.mark.parametrize(
    "text, question, expected",
    [
        # rule 1: whole words after normalisation (lower case, punctuation to spaces)
        ("Up.", "", "first"),
        ("DOWN!", "", "second"),
        ("Picking the pot up.", "", "first"),
        ("It points down-wards", "", "second"),  # "-" becomes a space: "down" is a whole word
        ("Upwards.", "", None),  # not a whole word
        ("Sundown", "", None),
        # rule 1, one word inside the other: the longer is looked for first, and its match removed
        ("It is not appropriate.", "", "second"),
        ("NOT   appropriate", "", "second"),  # the words of a two-word entry may be apart by any spaces
        ("appropriate", "", "first"),
        ("It is appropriate, not appropriate.", "", None),  # both stated
        ("Not appropriate, it is not appropriate.", "", "second"),  # the longer twice, the shorter never alone
        # rule 3: both words, or neither: nothing
        ("up or down", "", None),
        ("Left.", "", None),
        # rule 2: yes / no to a question naming the first word
        ("No.", "Is my gesture appropriate?", "second"),
        ("Yes, it is.", "Is my gesture appropriate?", "first"),
        ("yes", "Is my gesture APPROPRIATE?", "first"),
        ("No, I don't think so.", "Is my gesture appropriate?", "second"),
        ("Maybe.", "Is my gesture appropriate?", None),  # neither yes nor no
        ("I say yes.", "Is my gesture appropriate?", None),  # only the first word of the answer counts
        ("Yesterday.", "Is my gesture appropriate?", None),  # "yesterday" is not "yes"
        ("No.", "Is my gesture rude?", None),  # the question does not name the first word
        ("No.", "Is it inappropriate?", None),  # nor as a whole word
        ("No.", "Is it not appropriate?", "second"),  # "appropriate" is a whole word of this question
        ("Yes.", "Is it down?", None),  # names only the second word: rule 2 reads the first word only
        ("Yes, down.", "Is it up?", "second"),  # a stated word wins over the yes/no reading
        ("No, it is up.", "Is it up?", "first"),
        ("Yes, up and down.", "Is it up?", None),  # both stated: nothing, whatever the question
    ],
)
def test_which_word_a_text_states(text, question, expected):
    pair = APPROPRIATE if "appropriate" in (text + question).lower() else UP
    assert stated_word(text, pair, question) == expected


def test_the_question_is_optional():
    assert stated_word("Yes.", UP) is None and stated_word("down", UP) == "second"


def test_a_pair_given_longer_word_first_is_read_the_same():
    reversed_pair = WordPair("not appropriate", "appropriate")
    assert stated_word("It is not appropriate.", reversed_pair) == "first"
    assert stated_word("It is appropriate.", reversed_pair) == "second"


def test_word_pairs_parse_normalised_and_in_order():
    assert parse_word_pairs("Upwards/downwards, left/right") == [
        WordPair("upwards", "downwards"),
        WordPair("left", "right"),
    ]
    assert parse_word_pairs("appropriate/Not  Appropriate!") == [WordPair("appropriate", "not appropriate")]
    assert parse_word_pairs("up/down") == [WordPair("up", "down")]
    assert WordPair("left", "right").label == "left:right"


def test_a_pair_is_a_value_usable_as_a_key_and_cannot_be_changed():
    assert {WordPair("up", "down"): 1}[WordPair("up", "down")] == 1
    with pytest.raises(AttributeError):  # dataclasses.FrozenInstanceError
        UP.first = "left"


@pytest.mark.parametrize("bad", ["up", "up/up", "Up/up.", "up/down/left", "/down", "up/", "up/!!", "up/down,"])
def test_a_malformed_pair_is_a_usage_error_naming_the_option(bad):
    with pytest.raises(UsageError, match="--word-pairs .*expected FIRST/SECOND"):
        parse_word_pairs(bad)


def test_counts_over_queries_by_hand():
    queries = [
        ("Where does the arrow point?", "Up.", "It is drawn upward.\nAnswer: Down."),  # truth up, model down
        ("Pick it up or put it down?", "Put it down.", "down"),  # truth down, model down
        ("What colour is it?", "Red.", "Up"),  # truth states neither: not selected
        ("Which way?", "Up.", "Up\n\nI cannot tell."),  # truth up; model's final line states nothing
        ("Is the lid up?", "Yes.", "No."),  # truth up (rule 2), model down (rule 2)
        ("Which way?", "Down.", "**Answer:** Up."),  # truth down, model up
    ]
    # selected: 5 (all but the third); truth: up 3 (1, 4, 5), down 2 (2, 6);
    # model: up 1 (6), down 3 (1, 2, 5), query 4 counts for neither.
    assert word_pair_counts(queries, UP) == {
        "pair": "up:down",
        "queries": 5,
        "groundtruth": [3, 2],
        "model": [1, 3],
        "paper_groundtruth": [15, 15],
    }


def test_counts_for_a_pair_the_paper_does_not_have_carry_no_paper_value():
    queries = [("Which hand?", "The left one.", "Right."), ("Which hand?", "Right.", "left or right")]
    # truth: left 1, right 1; model: right 1, the hedge counts for neither.
    assert word_pair_counts(queries, WordPair("left", "right")) == {
        "pair": "left:right",
        "queries": 2,
        "groundtruth": [1, 1],
        "model": [0, 1],
        "paper_groundtruth": None,
    }
    assert word_pair_counts([], UP)["queries"] == 0 and word_pair_counts([], UP)["groundtruth"] == [0, 0]
