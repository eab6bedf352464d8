"""Recognition Score (CogBench Section 3.2.1) without models: matching on hand-made unit vectors, pooling by hand.

An entity is recognised when its cosine similarity with some noun of the description is
GREATER than 0.6; with unit vectors the cosine is the dot product, so 2-d vectors
(1, 0) and (c, sqrt(1 - c^2)) have cosine exactly c. The micro score is recognised /
annotated entities over all images, the macro score the mean of the per-image ratios.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from cogbench.reference_eval.metrics.recognition import EntityMatch, match_entities, recognition_scores


def at_cosine(c: float) -> np.ndarray:
    """A unit vector whose cosine with (1, 0) is c."""
    return np.array([c, math.sqrt(1.0 - c * c)])


ENTITY = np.array([1.0, 0.0])


@pytest.mark.parametrize("cosine, recognized", [(0.6, False), (0.61, True), (0.3, False), (0.95, True)])
def test_an_entity_is_recognised_only_above_a_cosine_of_0_6(cosine, recognized):
    [match] = match_entities(["dog"], ["puppy"], {"dog": ENTITY, "puppy": at_cosine(cosine)})
    assert match.recognized is recognized
    assert match.noun == "puppy" and match.similarity == pytest.approx(cosine, abs=1e-12)


def test_the_most_similar_noun_is_reported_with_its_similarity_rounded_to_6_decimals():
    vectors = {"dog": ENTITY, "sofa": at_cosine(0.1), "puppy": at_cosine(0.1234567891), "car": at_cosine(-0.5)}
    [match] = match_entities(["dog"], ["sofa", "puppy", "car"], vectors)
    assert match == EntityMatch("dog", "puppy", 0.123457, False)


def test_each_entity_gets_its_own_best_noun():
    sky = np.array([0.0, 1.0])
    vectors = {"dog": ENTITY, "sky": sky, "puppy": at_cosine(0.8), "cloud": sky}
    found = match_entities(["dog", "sky"], ["puppy", "cloud"], vectors)
    # dog: puppy 0.8, cloud 0 -> puppy; sky: puppy sqrt(1 - 0.64) = 0.6 (not above), cloud 1 -> cloud
    assert found == [EntityMatch("dog", "puppy", 0.8, True), EntityMatch("sky", "cloud", 1.0, True)]


def test_a_description_without_nouns_recognises_nothing():
    assert match_entities(["dog", "sky"], [], {"dog": ENTITY}) == [
        EntityMatch("dog", None, 0.0, False),
        EntityMatch("sky", None, 0.0, False),
    ]
    assert match_entities([], [], {}) == []


def test_an_entity_match_is_a_value_that_cannot_be_changed():
    match = EntityMatch("dog", "puppy", 0.8, True)
    assert {match, EntityMatch("dog", "puppy", 0.8, True)} == {match}
    with pytest.raises(dataclasses.FrozenInstanceError):
        match.recognized = False  # type: ignore[misc]


def matches(*recognized: bool) -> list[EntityMatch]:
    return [EntityMatch(f"e{i}", "n", 0.9 if r else 0.1, r) for i, r in enumerate(recognized)]


def test_micro_pools_all_entities_and_macro_averages_the_images():
    # image 1: 1 of 3; image 2: 1 of 1; image 3: 0 of 2; image 4: no entities (left out of macro)
    scores = recognition_scores([matches(True, False, False), matches(True), matches(False, False), []])
    assert scores["recognition_micro"] == pytest.approx(100 * 2 / 6, abs=1e-12)  # 33.333...
    assert scores["recognition_macro"] == pytest.approx(100 * (1 / 3 + 1 + 0) / 3, abs=1e-12)  # 44.444...


def test_micro_and_macro_of_two_images_by_hand():
    # 3 of 4 and 1 of 2: micro 4/6 = 66.67, macro (0.75 + 0.5) / 2 = 62.5
    scores = recognition_scores([matches(True, True, True, False), matches(False, True)])
    assert scores == {"recognition_micro": pytest.approx(200 / 3, abs=1e-12), "recognition_macro": 62.5}


def test_nothing_annotated_has_no_score():
    assert recognition_scores([]) == {"recognition_micro": None, "recognition_macro": None}
    assert recognition_scores([[], []]) == {"recognition_micro": None, "recognition_macro": None}
