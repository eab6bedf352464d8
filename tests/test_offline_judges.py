"""Offline Cognition judges (CogBench Appendix F): ROUGE-L, BERTScore, NLI on the real built config.

Oracle descriptions must score high, truncated and empty ones low; beside an LLM
judge (the local OpenAI-compatible server) the agreement per category is reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_score import minilm_path

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.errors import UsageError
from cogbench.reference_eval.judges import offline
from cogbench.reference_eval.metrics.cognition import cognition_scores
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring
from cogbench.schemas.features import COGBENCH_CATEGORIES

from openai_server import numbered_verdicts
from shared_files import spacy_stand_in


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-offline-judge-test")


@pytest.fixture(scope="module")
def described(built_release):
    """CoR items and three versions of each reference description: whole, first sentence, empty."""
    rows = load_config(str(built_release), "description").remove_columns("image").to_list()
    items = [offline.cor_items(row["image_id"], row["cors"]) for row in rows]
    texts = {
        "oracle": [row["description"] for row in rows],
        "truncated": [offline.split_sentences([row["description"]])[0][0] for row in rows],
        "empty": ["" for _ in rows],
    }
    return items, texts


def overall(settings, items, texts) -> float:
    verdicts = offline.judge_descriptions(settings, items, texts)
    return cognition_scores([(v.item, v.verdict) for v in verdicts])["overall"]


def test_key_points_are_conclusions_except_event_relationship(described):
    items, _ = described
    for item in (i for image in items for i in image):
        if item.category == "event_relationship":
            assert item.key_point == item.cor_text and "->" in item.key_point
        else:
            assert "->" not in item.key_point and item.cor_text.rstrip().endswith(item.key_point)


def test_rouge_scores_oracle_high_and_truncated_or_empty_low(described):
    items, texts = described
    settings = offline.OfflineJudgeSettings("rouge")
    scores = {name: overall(settings, items, text) for name, text in texts.items()}
    assert scores["oracle"] >= 75 and scores["truncated"] <= 20 and scores["empty"] == 0.0
    # The threshold is an option: at 0 every CoR with a sentence to compare passes.
    assert overall(offline.OfflineJudgeSettings("rouge", threshold=0.0), items, texts["truncated"]) == 100.0


def test_bertscore_with_a_local_model_scores_oracle_above_truncated(described):
    items, texts = described
    settings = offline.OfflineJudgeSettings("bertscore", threshold=0.6, model=minilm_path())
    scores = {name: overall(settings, items, text) for name, text in texts.items()}
    assert scores["oracle"] >= 50 and scores["truncated"] <= 20 and scores["empty"] == 0.0


def build_tiny_nli(out: Path, winner: str, labels=("neutral", "contradiction", "entailment")) -> str:
    """A random one-layer BERT classifier whose bias makes `winner` the top label for any input."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([5.0 if label == winner else 0.0 for label in labels]))
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return str(out)


def test_nli_needs_one_entailing_sentence(described, tmp_path):
    items, texts = described
    entails = build_tiny_nli(tmp_path / "entails", "entailment")
    neutral = build_tiny_nli(tmp_path / "neutral", "neutral")
    assert overall(offline.OfflineJudgeSettings("nli", model=entails), items, texts["oracle"]) == 100.0
    assert overall(offline.OfflineJudgeSettings("nli", model=entails), items, texts["empty"]) == 0.0
    assert overall(offline.OfflineJudgeSettings("nli", model=neutral), items, texts["oracle"]) == 0.0
    unlabelled = build_tiny_nli(tmp_path / "unlabelled", "yes", labels=("yes", "no"))
    with pytest.raises(UsageError, match="no 'entailment' label"):
        overall(offline.OfflineJudgeSettings("nli", model=unlabelled), items, texts["oracle"])


@pytest.mark.parametrize("kind", ["bertscore", "nli"])
def test_a_model_that_cannot_be_loaded_is_a_usage_error(described, tmp_path, kind):
    items, texts = described
    with pytest.raises(UsageError, match=r"--offline-model .*no-such-model: cannot load it"):
        overall(offline.OfflineJudgeSettings(kind, model=str(tmp_path / "no-such-model")), items, texts["oracle"])


def test_offline_judge_beside_llm_judge_reports_agreement_per_category(built_release, tmp_path, openai_server):
    """The local judge says 1 to every key point: agreement per category = the offline judge's recall."""

    server = openai_server(numbered_verdicts(lambda n: 1))
    scores = run_scoring(
        ScoreOptions(
            task="description",
            dataset=str(built_release),
            oracle=True,
            judge="openai:gpt-judge",
            judge_base_url=server.base_url,
            offline_judge="rouge",
            spacy_model=str(spacy_stand_in()),
            embedder=minilm_path(),
            out=str(tmp_path / "both"),
        )
    )
    assert scores["metrics"]["cognition"]["overall"] == 100.0  # the LLM judge's
    offline_scores = scores["metrics"]["cognition_offline"]
    agreement = scores["analyses"]["offline_judge"]["agreement_with_llm_judge"]
    assert {k: offline_scores[k] for k in ("overall", "per_category")} == agreement and 75 <= agreement["overall"] < 100
    assert offline_scores["judged"] == offline_scores["n_expected"] == scores["counts"]["cors"]
    assert (
        offline_scores["interval"]["overall"][0] < offline_scores["overall"] < offline_scores["interval"]["overall"][1]
    )
    assert set(agreement["per_category"]) == set(COGBENCH_CATEGORIES)
    report = (tmp_path / "both" / "report.md").read_text()
    assert "Agreement with the LLM judge" in report and "Offline Cognition judge: rouge" in report


def test_judge_rouge_alone_gives_the_cognition_score(built_release, tmp_path, capsys):
    out = tmp_path / "rouge"
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
                "rouge",
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
    import json

    scores = json.loads((out / "scores.json").read_text())
    assert scores["judge"] == {"kind": "rouge"} and scores["metrics"]["cognition"]["overall"] >= 75
    assert scores["analyses"]["offline_judge"]["threshold"] == offline.DEFAULT_THRESHOLDS["rouge"]
    assert "Cognition Score (CogBench Table 3)" in (out / "report.md").read_text()
    # like the LLM judge: judged count, denominator (every CoR of the config, counted from the rows) and interval
    from cogbench.dataset_builders.load import load_config

    rows = load_config(str(built_release), "description").remove_columns("image").to_list()
    all_cors = sum(len(cors or []) for row in rows for cors in row["cors"].values())
    cognition = scores["metrics"]["cognition"]
    assert (cognition["judged"], cognition["denominator"], cognition["unit"], cognition["partial"]) == (
        all_cors,
        all_cors,
        "CoRs",
        False,
    )
    low, high = cognition["interval"]["overall"]
    assert low < cognition["overall"] < high and high - low > 0
    assert f"cognition {all_cors}/{all_cors} CoRs" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--task", "codis", "--judge", "rouge"], "score the Cognition of --task description"),
        (["--task", "vqa", "--offline-judge", "nli"], "score the Cognition of --task description"),
        (["--task", "description", "--judge", "rouge", "--offline-judge", "nli"], "give one offline judge"),
    ],
)
def test_offline_judge_usage_errors(built_release, tmp_path, capsys, argv, message):
    code = main(
        ["score", *argv, "--dataset", str(built_release), "--predictions", "none.jsonl", "--out", str(tmp_path / "run")]
    )
    err = capsys.readouterr().err
    assert code != 0 and message in err and "Traceback" not in err


def test_nli_reads_premise_then_hypothesis_and_upper_case_labels(described, tmp_path):
    """An NLI model whose verdict depends on the pair (and on its order), labels in upper case."""
    from tiny_nli import build_input_dependent_nli, pipeline_entailment

    items, texts = described
    sentences = [s for text in texts["oracle"] for s in offline.split_sentences([text])[0]][:12]
    points = [i.key_point for image in items for i in image][:12]
    model = build_input_dependent_nli(tmp_path / "nli", minilm_path(), sentences, points)
    settings = offline.OfflineJudgeSettings("nli", model=model)
    ours = offline.nli_entailment(settings, sentences, points)
    expected = pipeline_entailment(model, sentences, points)
    assert [top for _, top in ours] == [top for _, top in expected]
    assert [p for p, _ in ours] == pytest.approx([p for p, _ in expected], abs=1e-5)
    assert 0 < sum(top for _, top in ours) < len(ours)  # the verdict depends on the input
    swapped = pipeline_entailment(model, points, sentences)
    assert [p for p, _ in swapped] != pytest.approx([p for p, _ in ours], abs=1e-3)  # order matters


def test_the_nli_judge_asks_sentence_then_cor_through_its_own_call_path(described, tmp_path):
    """judge_descriptions (what `score --judge nli` runs): a CoR is stated when the model, read through
    transformers' pipeline with the description's sentence as premise and the CoR as hypothesis, puts
    ENTAILMENT on top. One sentence per description (its first), so each CoR has one pair and a judge that
    swapped premise and hypothesis would give other verdicts (checked: the swapped reading differs)."""
    from tiny_nli import build_input_dependent_nli, pipeline_entailment

    items, texts = described
    first = texts["truncated"]
    pairs = [(item, sentence) for image, sentence in zip(items, first) for item in image]
    premises, hypotheses = [s for _, s in pairs], [i.key_point for i, _ in pairs]
    model = build_input_dependent_nli(tmp_path / "nli", minilm_path(), premises, hypotheses)
    verdicts = offline.judge_descriptions(offline.OfflineJudgeSettings("nli", model=model), items, first)
    ours = [v.verdict for v in verdicts]
    assert [(v.item, v.sentence) for v in verdicts] == pairs
    expected = [int(top) for _, top in pipeline_entailment(model, premises, hypotheses)]
    swapped = [int(top) for _, top in pipeline_entailment(model, hypotheses, premises)]
    assert ours == expected and 0 < sum(ours) < len(ours)
    assert sum(a != b for a, b in zip(expected, swapped)) >= 3, "the model must tell the two orders apart"
