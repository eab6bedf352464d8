"""Table 7's six captioning scores of a two-image run, overall and per image (CogBench Appendix E).

Slow (about 10 s: METEOR's Java process loads its paraphrase tables). BLEU and CIDEr
are worked out by hand below; METEOR is the COCO code's own number and is only
checked for its place and its order between the two images.
"""

from __future__ import annotations

import math
import shutil

import pytest

from cogbench.reference_eval.metrics.captioning import CAPTIONING_METRICS, captioning_scores

pytestmark = pytest.mark.skipif(
    shutil.which("java") is None, reason="no Java runtime (apt-get install default-jre-headless)"
)


def test_two_images_scored_overall_and_per_image_in_table_7_order(capfd):
    result = captioning_scores(
        {"a": "The cat sat on the mat.", "b": "A red ball"}, {"a": "the cat sat on the mat", "b": "a blue ball"}
    )
    assert "ratio:" not in capfd.readouterr().out  # the BLEU code's statistics are not printed into the run's output
    assert (
        list(result["overall"])
        == list(CAPTIONING_METRICS)
        == ["METEOR", "CIDEr", "Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4"]
    )
    assert list(result["per_item"]) == ["a", "b"]
    assert all(list(scores) == list(CAPTIONING_METRICS) for scores in result["per_item"].values())

    # BLEU, corpus level (Papineni et al. 2002): clipped n-gram matches / candidate n-grams, summed over images.
    # a is identical (6 words): 6/6, 5/5, 4/4, 3/3; b "a blue ball" vs "a red ball": 2/3, 0/2, 0/1, 0/0.
    # Corpus: 8/9, 5/7, 4/5, 3/3; lengths equal, brevity penalty 1.
    p = [8 / 9, 5 / 7, 4 / 5, 3 / 3]
    overall = result["overall"]
    for n in range(1, 5):
        assert overall[f"Bleu_{n}"] == pytest.approx(math.prod(p[:n]) ** (1 / n), abs=1e-6)
    assert [result["per_item"]["a"][f"Bleu_{n}"] for n in range(1, 5)] == pytest.approx([1.0] * 4, abs=1e-6)
    assert result["per_item"]["b"]["Bleu_1"] == pytest.approx(2 / 3, abs=1e-6)
    assert all(result["per_item"]["b"][f"Bleu_{n}"] < 1e-3 for n in (2, 3, 4))  # no bigram matches

    # CIDEr-D (Vedantam et al. 2015): the two references share no n-gram, so every n-gram has
    # idf log 2 and the vectors are plain counts times log 2. a: identical, cosine 1 for n = 1..4
    # -> 10 * 4/4 = 10. b: unigrams {a, blue, ball} . {a, red, ball} = 2 / (sqrt 3 sqrt 3) = 2/3,
    # no shared bigram or trigram, no 4-gram -> 10 * (2/3) / 4 = 5/3. Mean over images: 35/6.
    assert result["per_item"]["a"]["CIDEr"] == pytest.approx(10.0)
    assert result["per_item"]["b"]["CIDEr"] == pytest.approx(5 / 3)
    assert overall["CIDEr"] == pytest.approx(35 / 6)

    meteor_a, meteor_b = result["per_item"]["a"]["METEOR"], result["per_item"]["b"]["METEOR"]
    assert 1.0 >= meteor_a > meteor_b > 0 and meteor_a > overall["METEOR"] > meteor_b
