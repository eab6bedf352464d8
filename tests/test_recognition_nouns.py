"""The nouns of the Recognition Score (CogBench Section 3.2.1) and the checks on the spaCy pipeline that finds them.

Real spaCy pipelines built in the test: ``spacy.blank("en")`` with spaCy's own
``attribute_ruler`` setting ``token.pos`` for listed words, so which tokens are
NOUN/PROPN is known by construction. spaCy is imported inside the fixtures (not at
collection), so that a run that stops at an earlier test file does not pay for it.
"""

from __future__ import annotations

import pytest

from cogbench.errors import UsageError
from cogbench.reference_eval.metrics.recognition import (
    check_pos_tagging,
    embed_distinct,
    extract_nouns,
    load_noun_tagger,
    recognition_matches,
)


def tagged_pipeline(nouns=(), propns=(), others=()):
    import spacy

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    for words, pos in ((nouns, "NOUN"), (propns, "PROPN"), (others, "VERB")):
        if words:
            ruler.add(patterns=[[{"TEXT": {"IN": list(words)}}]], attrs={"POS": pos})
    return nlp


def test_nouns_and_proper_nouns_are_kept_lower_cased_once_each_in_order():
    nlp = tagged_pipeline(nouns=("dog", "Dog", "sofa", "ball"), propns=("Paris",), others=("sleeps",))
    texts = ["The dog sleeps on a sofa in Paris. Dog and ball.", "A ball, a dog.", "Nothing here sleeps."]
    assert extract_nouns(nlp, texts) == [["dog", "sofa", "paris", "ball"], ["ball", "dog"], []]


def test_a_token_tagged_noun_that_is_only_punctuation_is_no_noun():
    nlp = tagged_pipeline(nouns=("dog", "'", '"'))
    assert extract_nouns(nlp, ["The \" dog ' ."]) == [["dog"]]


def test_no_descriptions_give_no_noun_lists():
    assert extract_nouns(tagged_pipeline(nouns=("dog",)), []) == []


def test_a_pipeline_that_tags_nouns_passes_the_check():
    check_pos_tagging(tagged_pipeline(nouns=("dog",)), "tiny")  # the probe: "The dog sleeps on the red sofa."
    check_pos_tagging(tagged_pipeline(propns=("sofa",)), "tiny")


def test_a_pipeline_that_sets_no_part_of_speech_is_refused():
    with pytest.raises(UsageError, match="tiny: spaCy pipeline .* finds no noun"):
        check_pos_tagging(tagged_pipeline(others=("dog", "sofa")), "tiny")


def test_an_untrained_tagger_is_refused_with_a_usage_error():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("tagger")  # never initialised: spaCy raises when it runs
    with pytest.raises(UsageError, match=r"fails on a probe sentence \(ValueError: \[E109\]"):
        check_pos_tagging(nlp, "untrained")


def test_a_failing_pipeline_is_reported_by_the_first_line_of_its_error():
    from spacy.language import Language

    @Language.component("cogbench_test_fails_twice")
    def fails(doc):
        raise RuntimeError("first line of the failure\nsecond line")

    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("cogbench_test_fails_twice")
    with pytest.raises(UsageError) as error:
        check_pos_tagging(nlp, "broken")
    assert "(RuntimeError: first line of the failure)" in str(error.value)
    assert "second line" not in str(error.value)


def test_a_missing_spacy_model_is_a_usage_error_naming_the_first_line_of_spacys_reason(tmp_path):
    # spaCy's E050 message quotes the name; a name with a line break splits it in two lines
    with pytest.raises(UsageError, match=r"cannot load spaCy model .*\(\[E050\] Can't find model"):
        load_noun_tagger(str(tmp_path / "no-such-pipeline"))
    with pytest.raises(UsageError) as error:
        load_noun_tagger(str(tmp_path / "two\nlines"))
    assert "([E050] Can't find model" in str(error.value) and "It doesn't seem" not in str(error.value)


def test_a_saved_pipeline_folder_loads_when_it_tags_nouns_and_is_refused_when_not(tmp_path):
    tagged_pipeline(nouns=("dog",)).to_disk(tmp_path / "tags")
    nlp = load_noun_tagger(str(tmp_path / "tags"))
    assert extract_nouns(nlp, ["a dog"]) == [["dog"]]
    import spacy

    spacy.blank("en").to_disk(tmp_path / "blank")
    with pytest.raises(UsageError, match="finds no noun"):
        load_noun_tagger(str(tmp_path / "blank"))


def test_images_without_entities_or_nouns_need_no_embedder():
    # nothing to embed: the embedder is never asked (None stands for "no model loaded")
    nlp = tagged_pipeline(nouns=("dog",))
    assert recognition_matches(nlp, None, [[], []], ["Nothing here.", "Nor here."]) == [[], []]
    assert embed_distinct(None, []) == {}


@pytest.mark.parametrize(
    "given, fix",
    [
        # a package name: spaCy's download command installs it
        ("no_such_spacy_model", "`python -m spacy download no_such_spacy_model`"),
        # written like a path (a separator, or a leading "." or "~"), though nothing is there: a folder is meant
        ("models/no-such-pipeline", "give --spacy-model a folder holding a spaCy pipeline"),
        ("~no-such-pipeline", "give --spacy-model a folder holding a spaCy pipeline"),
        (".no-such-pipeline", "give --spacy-model a folder holding a spaCy pipeline"),
    ],
)
def test_a_missing_spacy_model_gets_the_fix_for_a_name_or_for_a_path(given, fix, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative names resolve in an empty folder
    with pytest.raises(UsageError) as error:
        load_noun_tagger(given)
    assert fix in str(error.value)
    assert (f"spacy download {given}" in str(error.value)) == given.startswith("no_such")  # never a path


def test_a_package_name_that_is_also_a_folder_here_loads_as_the_folder(tmp_path, monkeypatch):
    """No separator, yet a folder of that name exists: spaCy loads it, and a broken one is named as a folder."""
    tagged_pipeline(nouns=("dog",)).to_disk(tmp_path / "tags")
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_noun_tagger("tags").pipe_names == ["attribute_ruler"]
    with pytest.raises(UsageError, match="give --spacy-model a folder holding a spaCy pipeline"):
        load_noun_tagger("empty")


def test_importing_the_recognition_metric_loads_neither_spacy_nor_sentence_transformers():
    """They load when a score needs them, so `cogbench eval` runs in a venv without them (the vLLM step's)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import cogbench.reference_eval.metrics.recognition\n"
        "print(sorted(m for m in ('spacy', 'sentence_transformers') if m in sys.modules))\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert shown.strip() == "[]"
