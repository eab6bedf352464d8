"""Captioning metrics of the Description task (CogBench Appendix E, Table 7) through pycocoevalcap.

The tiny cases are worked out by hand here; the oracle run is the real built config.
"""

from __future__ import annotations

import json
import math
import shutil

import pytest
from test_score import minilm_path

from cogbench.cli import main
from cogbench.errors import CogbenchError
from cogbench.reference_eval.formats.predictions import Prediction
from cogbench.reference_eval.metrics import captioning
from cogbench.reference_eval.metrics.captioning import captioning_scores
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from shared_files import spacy_stand_in

needs_java = pytest.mark.skipif(
    shutil.which("java") is None, reason="no Java runtime (apt-get install default-jre-headless)"
)


@needs_java
def test_bleu_and_cider_equal_hand_computations():
    # BLEU (Papineni et al. 2002), one image, so the corpus score is the image's score.
    # "the cat is on the mat" vs "the cat sat on the mat": clipped n-gram precisions
    # 5/6, 3/5, 1/4 (the PTB tokenizer lower-cases and drops the final "."); same length, BP = 1.
    bleu = captioning_scores({"x": "The cat sat on the mat."}, {"x": "the cat is on the mat"})["overall"]
    assert bleu["Bleu_1"] == pytest.approx(5 / 6, abs=1e-6)
    assert bleu["Bleu_2"] == pytest.approx(math.sqrt(5 / 6 * 3 / 5), abs=1e-6)
    assert bleu["Bleu_3"] == pytest.approx((5 / 6 * 3 / 5 * 1 / 4) ** (1 / 3), abs=1e-6)
    assert bleu["Bleu_4"] < 1e-3  # no 4-gram matches
    # CIDEr-D (Vedantam et al. 2015), two images: every n-gram of the references has
    # document frequency 1 of 2, so idf = log 2 for all. Image a: identical -> cosine 1 for
    # n=1,2 and 0 for n=3,4 (no such n-grams) -> 10 * (1+1+0+0)/4 = 5. Image b: "blue cat" vs
    # "blue dog": unigram vectors (blue, cat) and (blue, dog), cosine 1/2; bigrams 0 -> 10 * 0.5/4.
    result = captioning_scores({"a": "Red cat.", "b": "blue dog"}, {"a": "red CAT", "b": "blue cat"})
    assert result["per_item"]["a"]["CIDEr"] == pytest.approx(5.0)
    assert result["per_item"]["b"]["CIDEr"] == pytest.approx(1.25)
    assert result["overall"]["CIDEr"] == pytest.approx(3.125)
    assert result["per_item"]["a"]["METEOR"] > result["per_item"]["b"]["METEOR"] > 0


@needs_java
def test_oracle_scores_full_marks_and_empty_scores_zero(built_release, tmp_path):
    common = {
        "task": "description",
        "dataset": str(built_release),
        "metrics": ("captioning",),
        "spacy_model": str(spacy_stand_in()),
        "embedder": minilm_path(),
    }
    oracle = run_scoring(ScoreOptions(oracle=True, out=str(tmp_path / "oracle"), **common))
    scores = oracle["analyses"]["captioning"]["scores"]
    assert scores["CIDEr"] == pytest.approx(10.0) and scores["METEOR"] == pytest.approx(1.0)
    assert all(scores[f"Bleu_{n}"] == pytest.approx(1.0, abs=1e-6) for n in range(1, 5))
    assert "## Captioning metrics (CogBench Appendix E, Table 7)" in (tmp_path / "oracle" / "report.md").read_text()

    ids = [json.loads(line)["item_id"] for line in (tmp_path / "oracle" / "details.jsonl").read_text().splitlines()]
    empty = tmp_path / "empty.jsonl"
    empty.write_text(
        "".join(
            Prediction("description", i, "", prompt_id="cogbench-description-directed-v1").to_json() + "\n" for i in ids
        )
    )
    result = run_scoring(ScoreOptions(predictions=str(empty), out=str(tmp_path / "empty"), **common))
    assert result["analyses"]["captioning"]["mode"] == "directed"
    assert set(result["analyses"]["captioning"]["scores"].values()) == {0.0}
    assert result["analyses"]["captioning"]["empty_descriptions"] == len(ids)


def test_missing_java_is_a_one_line_error(built_release, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no java here
    with pytest.raises(CogbenchError, match="need a Java runtime"):
        captioning_scores({"a": "x"}, {"a": "x"})
    code = main(
        [
            "score",
            "--task",
            "description",
            "--dataset",
            str(built_release),
            "--oracle",
            "--metrics",
            "captioning",
            "--out",
            str(tmp_path / "run"),
        ]
    )
    err = capsys.readouterr().err
    assert code != 0 and err.startswith("error: ") and "apt-get install -y default-jre-headless" in err
    assert "Traceback" not in err and not (tmp_path / "run").exists()


def test_captioning_applies_to_description_only(built_release, tmp_path, capsys):
    code = main(
        [
            "score",
            "--task",
            "vqa",
            "--dataset",
            str(built_release),
            "--predictions",
            "x.jsonl",
            "--metrics",
            "captioning",
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert code != 0 and "--metrics captioning applies to --task description" in capsys.readouterr().err


@needs_java
def test_one_empty_description_changes_no_other_score():
    """Issue 22 item 7: the empty item is left to pycocoevalcap as it is (METEOR 0, nothing added but its
    reference); a placeholder token changed every other item's corpus METEOR. The expected values are
    pycocoevalcap's own, called directly on the same tokenized input."""
    from pycocoevalcap.meteor.meteor import Meteor

    references = {
        "a": "A man is walking a dog in the park.",
        "b": "Two children play with a ball on the grass.",
        "c": "A woman reads a book.",
    }
    candidates = {"a": "A man walks a dog.", "b": "Children play ball.", "c": ""}
    result = captioning.captioning_scores(references, candidates)
    gts, res = captioning.tokenize(references), captioning.tokenize(candidates)
    scorer = Meteor()
    corpus, _items = scorer.compute_score(gts, res)
    others, other_items = scorer.compute_score({k: gts[k] for k in "ab"}, {k: res[k] for k in "ab"})
    del scorer
    assert result["overall"]["METEOR"] == pytest.approx(corpus, abs=1e-12)
    assert [result["per_item"][k]["METEOR"] for k in "ab"] == pytest.approx(other_items, abs=1e-12)
    assert all(value == 0.0 for value in result["per_item"]["c"].values())
    # the others' scores are those of a run without the empty item
    without = captioning.captioning_scores({k: references[k] for k in "ab"}, {k: candidates[k] for k in "ab"})
    assert without["overall"]["METEOR"] == pytest.approx(others, abs=1e-12)
    for key in "ab":
        assert result["per_item"][key]["Bleu_1"] == pytest.approx(without["per_item"][key]["Bleu_1"])
