"""Offline Cognition judges: ROUGE-L, BERTScore and NLI (CogBench final paper, Appendix F, Table 4).

For users without a GPT-4 endpoint, the paper's non-GPT methods. Each decides,
like the LLM judge, whether a description states one annotated CoR; the text
looked for is the CoR's conclusion, or the whole CoR for Event Relationship
(Section 3.2.1; the same key point the LLM judge is shown, ``CorItem.key_point``):

- ``rouge`` and ``bertscore`` (Appendix F): split the description into
  sentences, score every sentence with the CoR as the reference (recall: ROUGE-L
  recall by ``rouge-score``, BERTScore recall by ``bert-score``), keep the
  highest score, and call the CoR stated when it reaches a threshold. The paper
  gives no threshold value; the defaults below are this project's, chosen so the
  oracle description passes and an unrelated one does not, and are options.
- ``nli`` (Appendix F): sentence-level NLI with each sentence as premise and
  the CoR as hypothesis; the CoR is stated when at least one sentence is
  classified "entailment" (the model's top label; no threshold). The paper's
  model is mDeBERTa-v3-base-xnli-multilingual-nli-2mil7; any local
  transformers NLI model with an "entailment" label works.

Sentences are split by spaCy's rule-based ``sentencizer`` (no model download).
An empty description has no sentence, so every CoR is 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from cogbench.errors import UsageError
from cogbench.reference_eval.judges.cognition import WHOLE_COR_CATEGORY
from cogbench.reference_eval.loading.model_checks import load_checked, model_record
from cogbench.reference_eval.metrics.cognition import CorItem
from cogbench.schemas.vocabulary import COGBENCH_CATEGORIES

OFFLINE_JUDGES = ("rouge", "bertscore", "nli")
# The paper names its NLI model (Appendix F); this is its Hugging Face id.
DEFAULT_NLI_MODEL = "MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7"
# The paper does not say which BERTScore model it used; this is bert-score's own
# default for English (roberta-large, layer 17).
DEFAULT_BERTSCORE_MODEL = "roberta-large"
# Ours, not the paper's (Appendix F gives no value): see the module docstring.
DEFAULT_THRESHOLDS = {"rouge": 0.5, "bertscore": 0.9}


@dataclass(frozen=True)
class OfflineJudgeSettings:
    kind: str  # rouge | bertscore | nli
    threshold: float | None = None  # None = DEFAULT_THRESHOLDS[kind]; unused by nli
    model: str | None = None  # bertscore / nli model name or local path
    bertscore_layers: int | None = None  # None: bert-score's table, else the model's last layer
    batch_size: int = 32
    device: str | None = None

    def resolved_threshold(self) -> float | None:
        if self.kind == "nli":
            return None
        return DEFAULT_THRESHOLDS[self.kind] if self.threshold is None else self.threshold

    def resolved_model(self) -> str | None:
        if self.kind == "rouge":
            return None
        return self.model or (DEFAULT_NLI_MODEL if self.kind == "nli" else DEFAULT_BERTSCORE_MODEL)


def check_kind(kind: str) -> None:
    if kind not in OFFLINE_JUDGES:
        raise UsageError(f"offline judge {kind!r}: choose one of {', '.join(OFFLINE_JUDGES)}")


def cor_items(image_id: str, cors: dict[str, list[dict[str, Any]]]) -> list[CorItem]:
    """Every CoR of one image with the text an offline judge looks for (Section 3.2.1)."""
    items = []
    for category in COGBENCH_CATEGORIES:
        for index, cor in enumerate(cors.get(category) or []):
            key_point = cor["text"] if category == WHOLE_COR_CATEGORY else cor["conclusion"]
            items.append(CorItem(image_id, category, index, cor["text"], key_point))
    return items


def split_sentences(texts: Sequence[str]) -> list[list[str]]:
    """Sentences of each text, by spaCy's rule-based sentencizer."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    # spaCy refuses a text over nlp.max_length (1,000,000 characters, error E088) to spare the memory
    # of its parser and NER; a blank pipeline with the rule-based sentencizer needs neither (a 2 MB
    # description is a few hundred MB at most), so a long description is split like any other.
    nlp.max_length = max([nlp.max_length, *(len(text) + 1 for text in texts)])
    return [[s.text.strip() for s in doc.sents if s.text.strip()] for doc in nlp.pipe(texts)]


@dataclass(frozen=True)
class OfflineVerdict:
    item: CorItem
    score: float | None  # best sentence score (rouge, bertscore) or best entailment probability (nli)
    sentence: str | None  # the best sentence
    verdict: int


@dataclass(frozen=True)
class JudgeModel:
    """A loaded and checked BERTScore or NLI model, with what it is (``model_checks.model_record``)."""

    kind: str  # bertscore | nli
    model: Any
    tokenizer: Any
    record: dict[str, Any]


def load_judge_model(settings: OfflineJudgeSettings) -> JudgeModel | None:
    """The model the judge needs (None for rouge): loaded once, checked, before anything is scored."""
    check_kind(settings.kind)
    if settings.kind == "rouge":
        return None
    return load_bertscore_model(settings) if settings.kind == "bertscore" else load_nli_model(settings)


def judge_descriptions(
    settings: OfflineJudgeSettings,
    items_per_text: Sequence[list[CorItem]],
    texts: Sequence[str],
    loaded: JudgeModel | None = None,
) -> list[OfflineVerdict]:
    """One verdict per CoR: the best sentence of its description, thresholded (or entailed).

    ``loaded``: the judge's model from ``load_judge_model`` (loaded here when not given).
    """
    check_kind(settings.kind)
    sentences = split_sentences(texts)
    pairs = [
        (item, sentence) for items, sents in zip(items_per_text, sentences) for item in items for sentence in sents
    ]
    scores: Sequence[float | tuple[float, bool]]
    if settings.kind == "rouge":
        scores = rouge_recall([i.key_point for i, _ in pairs], [s for _, s in pairs])
    elif settings.kind == "bertscore":
        scores = bertscore_recall(settings, [i.key_point for i, _ in pairs], [s for _, s in pairs], loaded)
    else:
        scores = nli_entailment(settings, [s for _, s in pairs], [i.key_point for i, _ in pairs], loaded)
    # The best sentence per CoR: highest score; for NLI an entailing sentence
    # first, then the highest entailment probability.
    best: dict[int, tuple[tuple[bool, float], str]] = {}
    # cast: mypy narrows `scores` to one branch's list type and joins them to object in zip.
    for (item, sentence), score in zip(pairs, cast("Sequence[float | tuple[float, bool]]", scores)):
        rank: tuple[bool, float] = (score[1], score[0]) if isinstance(score, tuple) else (False, score)
        if id(item) not in best or rank > best[id(item)][0]:
            best[id(item)] = (rank, sentence)
    threshold = settings.resolved_threshold()
    verdicts = []
    for items in items_per_text:
        for item in items:
            if id(item) not in best:
                verdicts.append(OfflineVerdict(item, None, None, 0))
                continue
            (entailed, value), sentence = best[id(item)]
            stated = entailed if settings.kind == "nli" or threshold is None else value >= threshold
            verdicts.append(OfflineVerdict(item, value, sentence, int(stated)))
    return verdicts


def rouge_recall(references: Sequence[str], candidates: Sequence[str]) -> list[float]:
    """ROUGE-L recall of each candidate sentence against its reference CoR (rouge-score, Lin 2004)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"])
    return [scorer.score(reference, candidate)["rougeL"].recall for reference, candidate in zip(references, candidates)]


def bertscore_recall(
    settings: OfflineJudgeSettings,
    references: Sequence[str],
    candidates: Sequence[str],
    loaded: JudgeModel | None = None,
) -> list[float]:
    """BERTScore recall (bert-score, Zhang et al. 2020) of each candidate sentence against its CoR."""
    if not references:
        return []
    from bert_score.utils import bert_cos_score_idf

    judge = loaded or load_bertscore_model(settings)
    model, tokenizer = judge.model, judge.tokenizer
    # As ``BERTScorer.score`` does without idf: weight 1 for every token, 0 for [SEP] and [CLS].
    idf: defaultdict[int, float] = defaultdict(lambda: 1.0)
    idf[tokenizer.sep_token_id] = 0
    idf[tokenizer.cls_token_id] = 0
    scores = bert_cos_score_idf(
        model,
        list(references),
        list(candidates),
        tokenizer,
        idf,
        device=str(model.device),
        batch_size=settings.batch_size,
    )
    return [float(value) for value in scores[:, 1].cpu()]  # (precision, recall, F1): recall


def load_bertscore_model(settings: OfflineJudgeSettings) -> JudgeModel:
    """The BERTScore model the user named, whatever its path.

    bert-score 0.3's ``get_model`` picks the class by substring of the name (any
    "t5" in a folder path gives ``T5EncoderModel``, so a BERT folder under
    ``gpt5-models/`` became a random T5). Here the class comes from the folder's
    config (transformers' Auto classes) and the load is checked; the layers are
    cut as bert-score cuts them (the first ``num_layers``, via the config), the
    encoder of an encoder-decoder model is used, and the tokenizer is bert-score's
    (``get_tokenizer``). The scoring itself stays bert-score's ``bert_cos_score_idf``.
    """
    from bert_score.utils import get_tokenizer, model2layers
    from transformers import AutoConfig, AutoModel

    name = settings.resolved_model()
    assert name is not None  # only rouge has no model, and it loads none
    folder = Path(name).expanduser()
    # bert-score reads a name starting with "scibert" as its own download; an absolute path never does.
    source = str(folder.absolute()) if folder.is_dir() else name
    try:
        config = AutoConfig.from_pretrained(source)
        layers = settings.bertscore_layers or model2layers.get(name) or config.num_hidden_layers
        model = load_checked(AutoModel, source, num_hidden_layers=layers)
        tokenizer = get_tokenizer(source, use_fast=False)
    except NOT_THIS_MODEL as error:
        raise UsageError(_unloadable(name, error, "a BERTScore (text encoder) model")) from None
    record = {**model_record(name, type(model).__name__), "num_layers": layers}
    if getattr(model.config, "is_encoder_decoder", False):
        model = model.get_encoder()
    model.eval()
    if settings.device:
        model.to(settings.device)
    return JudgeModel("bertscore", model, tokenizer, record)


# What transformers raises for a folder that is not the model asked for: no or unreadable files
# (OSError), a config of another kind, no tokenizer (ValueError), a config lacking a field
# (AttributeError: a vision-language config has no num_hidden_layers), an unknown model type (KeyError).
NOT_THIS_MODEL = (OSError, ValueError, AttributeError, KeyError, TypeError)


def _unloadable(model: str, error: Exception, wanted: str) -> str:
    text = str(error).strip()
    first_line = text.splitlines()[0] if text else type(error).__name__
    first_line = first_line if len(first_line) <= 200 else f"{first_line[:197]}..."
    return (
        f"--offline-model {model}: cannot load it as {wanted} ({first_line}); "
        "give a local model folder or a Hub id you can download"
    )


def entailment_label(id2label: dict[int, str]) -> int:
    for index, label in id2label.items():
        if label.lower().startswith("entail"):
            return int(index)
    raise UsageError(f"NLI model labels {sorted(id2label.values())} have no 'entailment' label")


def load_nli_model(settings: OfflineJudgeSettings) -> JudgeModel:
    """The NLI model and its tokenizer, loaded with the class its config names and checked."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model_name = settings.resolved_model()
    assert model_name is not None  # only rouge has no model, and it loads none
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_name)
        model = load_checked(AutoModelForSequenceClassification, model_name).eval()
    except NOT_THIS_MODEL as error:
        raise UsageError(_unloadable(model_name, error, "an NLI (sequence classification) model")) from None
    entailment_label(model.config.id2label)  # an NLI model without that label is refused before scoring
    if settings.device:
        model.to(settings.device)
    return JudgeModel("nli", model, tokenizer, model_record(model_name, type(model).__name__))


def nli_entailment(
    settings: OfflineJudgeSettings, premises: Sequence[str], hypotheses: Sequence[str], loaded: JudgeModel | None = None
) -> list[tuple[float, bool]]:
    """(entailment probability, entailment is the top label) of each premise/hypothesis pair."""
    if not premises:
        return []
    import torch

    judge = loaded or load_nli_model(settings)
    model, tokenizer = judge.model, judge.tokenizer
    entail = entailment_label(model.config.id2label)
    results: list[tuple[float, bool]] = []
    with torch.inference_mode():
        for start in range(0, len(premises), settings.batch_size):
            batch = tokenizer(
                list(premises[start : start + settings.batch_size]),
                list(hypotheses[start : start + settings.batch_size]),
                padding=True,
                truncation=True,
                return_tensors="pt",
            ).to(model.device)
            probabilities = model(**batch).logits.softmax(-1)
            for row in probabilities:
                results.append((float(row[entail]), int(row.argmax()) == entail))
    return results
