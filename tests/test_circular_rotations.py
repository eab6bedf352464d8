"""Circular evaluation (metrics/circular.py): which original option a letter stands for under a rotation.

The rule (MMBench's CircularEval as the tasks lay it out): rotation r shows original option
(i + r) mod 4 at position i. So the letter at position i under rotation r names original option
(i + r) mod 4. Every expected value below is that sum worked out by hand, written as a literal.
"""

from __future__ import annotations

import pytest

from cogbench.reference_eval.metrics.circular import answer_changed, original_option

# (letter, rotation) -> original option, by hand: A=0, B=1, C=2, D=3; (i + r) mod 4.
BY_HAND = [
    ("A", 0, 0),
    ("B", 0, 1),
    ("C", 0, 2),
    ("D", 0, 3),  # rotation 0 is the dataset's order
    ("A", 1, 1),
    ("B", 1, 2),
    ("C", 1, 3),
    ("D", 1, 0),  # 3 + 1 = 4 -> 0
    ("A", 2, 2),
    ("B", 2, 3),
    ("C", 2, 0),
    ("D", 2, 1),  # 2 + 2 = 4 -> 0; 3 + 2 = 5 -> 1
    ("A", 3, 3),
    ("B", 3, 0),
    ("C", 3, 1),
    ("D", 3, 2),  # 1 + 3 = 4 -> 0; 2 + 3 = 5 -> 1; 3 + 3 = 6 -> 2
]


@pytest.mark.parametrize("letter, rotation, expected", BY_HAND)
def test_a_letter_under_a_rotation_names_the_original_option_i_plus_r_mod_4(letter, rotation, expected):
    assert original_option(letter, rotation) == expected


def test_no_answer_stays_no_answer_under_every_rotation():
    assert [original_option(None, r) for r in range(4)] == [None, None, None, None]


def test_a_model_that_follows_its_option_through_the_rotations_never_changes_its_answer():
    # Original option 2 ("C") sits at position (2 - r) mod 4 under rotation r: C, B, A, D.
    assert answer_changed({0: "C", 1: "B", 2: "A", 3: "D"}) is False


def test_a_model_that_always_says_the_same_letter_changes_its_answer():
    # "A" under rotations 0..3 names options 0, 1, 2, 3: four different choices.
    assert answer_changed({0: "A", 1: "A", 2: "A", 3: "A"}) is True


def test_two_different_options_over_the_rotations_is_a_change():
    # C/0 -> 2, B/1 -> 2, A/2 -> 2, C/3 -> (2 + 3) mod 4 = 1: exactly two options, {1, 2}.
    assert answer_changed({0: "C", 1: "B", 2: "A", 3: "C"}) is True


def test_no_answer_counts_as_a_choice():
    assert answer_changed(dict.fromkeys(range(4))) is False  # always no answer: the same choice
    assert answer_changed({0: "C", 1: "B", 2: None, 3: "D"}) is True  # option 2 three times, no answer once


def test_a_single_rotation_cannot_change():
    assert answer_changed({3: "D"}) is False


def test_no_rotation_answered_is_no_change():
    assert answer_changed({}) is False  # no choice at all: nothing to differ
