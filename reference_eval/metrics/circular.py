"""Circular evaluation of the four-option VQA task: is an answer about the option or about its position?

Each question is asked four times with its options rotated (rotation r puts
original option (i + r) mod 4 at position i, so the right answer's letter moves
with its option). Not a paper metric: the CogBench paper (Section 3.2.2) asks
each question once; this is the CircularEval of MMBench (Liu et al. 2023),
reported beside the paper's accuracy, never instead of it:

- ``accuracy_circular``: share of questions right under all four rotations;
- ``answer_changed``: share of questions whose chosen option (mapped back to
  the original order; "no answer" counts as a choice) is not the same under all
  rotations;
- ``choice_A`` ... ``choice_D``: each letter's share of the 4 x N responses,
  position bias: 25% each for a model that follows the options.
"""

from __future__ import annotations

from cogbench.schemas.vocabulary import ANSWER_LETTERS


def original_option(letter: str | None, rotation: int) -> int | None:
    """Which original option a letter chosen under ``rotation`` stands for (the inverse of ``tasks.rotate``)."""
    if letter is None:
        return None
    return (ANSWER_LETTERS.index(letter) + rotation) % len(ANSWER_LETTERS)


def answer_changed(letters_by_rotation: dict[int, str | None]) -> bool:
    """True when the four rotations do not all pick the same original option."""
    return len({original_option(letter, rotation) for rotation, letter in letters_by_rotation.items()}) > 1
