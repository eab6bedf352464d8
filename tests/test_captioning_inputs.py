"""What the captioning metrics (CogBench Appendix E, Table 7) check before any scoring, and the PTB tokenizer call.

Fast: no METEOR process is started (it loads its paraphrase tables for about 10 s);
the tokenizer runs the COCO code's Java PTB tokenizer (a fraction of a second).
The full scores are pinned by hand in test_captioning_scores.py.
"""

from __future__ import annotations

import shutil

import pytest

from cogbench.errors import CogbenchError
from cogbench.reference_eval.metrics.captioning import captioning_scores, require_java, tokenize

needs_java = pytest.mark.skipif(
    shutil.which("java") is None, reason="no Java runtime (apt-get install default-jre-headless)"
)


@needs_java
def test_the_java_on_path_is_found():
    assert require_java() == shutil.which("java")


def test_no_java_on_path_is_an_error_that_says_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(CogbenchError, match="no `java` is on PATH; install one"):
        require_java()
    with pytest.raises(CogbenchError, match="no `java` is on PATH"):
        captioning_scores({"a": "a cat"}, {"a": "a cat"})


@needs_java
def test_the_ptb_tokenizer_lower_cases_drops_punctuation_and_joins_lines():
    assert tokenize({"a": "The Cat, on the MAT.\nIt sleeps!", "b": ""}) == {
        "a": ["the cat on the mat it sleeps"],
        "b": [""],
    }


@needs_java
def test_candidates_without_a_reference_are_named_five_at_most():
    candidates = {f"m{i}": "a cat" for i in range(1, 8)}
    with pytest.raises(CogbenchError) as error:
        captioning_scores({"other": "a dog"}, candidates)
    assert str(error.value).endswith("no reference description for item(s) m1, m2, m3, m4, m5")


@needs_java
def test_nothing_to_score_is_an_error():
    with pytest.raises(CogbenchError, match="captioning metrics: nothing to score"):
        captioning_scores({"a": "a cat"}, {})
