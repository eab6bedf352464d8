"""A tiny NLI classifier built in the test, whose verdict depends on its input.

A one-layer BERT with seeded random weights and a classifier scaled up so
that its top label changes from one premise/hypothesis pair to the next, and
the labels spelled in upper case as real MNLI checkpoints spell them
(``CONTRADICTION``, ``NEUTRAL``, ``ENTAILMENT``, e.g. roberta-large-mnli). What
the model says about a pair is read independently through transformers'
``text-classification`` pipeline with ``text_pair`` (premise first), so a
judge that swaps premise and hypothesis, or reads the wrong label, differs.
"""

from __future__ import annotations

from pathlib import Path

UPPER_LABELS = ("CONTRADICTION", "NEUTRAL", "ENTAILMENT")


def build_input_dependent_nli(
    out: Path, tokenizer_dir: str, premises, hypotheses, labels=UPPER_LABELS, seed: int = 7
) -> str:
    """Save the model; the ENTAILMENT bias is set so that about half of the given pairs are entailed."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        for name, parameter in model.named_parameters():  # large weights: every token moves the [CLS] state
            if name.endswith("weight") and "LayerNorm" not in name:
                parameter.mul_(25.0)
        batch = tokenizer(list(premises), list(hypotheses), padding=True, return_tensors="pt")
        logits = model.eval()(**batch).logits
        entail = labels.index("ENTAILMENT")
        margin = logits[:, entail] - logits[:, [i for i in range(len(labels)) if i != entail]].max(-1).values
        model.classifier.bias[entail] -= margin.median() + 1e-3
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return str(out)


def pipeline_entailment(model_dir: str, premises, hypotheses) -> list[tuple[float, bool]]:
    """(entailment probability, entailment is the top label) per pair, through transformers' pipeline."""
    from transformers import pipeline

    classify = pipeline("text-classification", model=model_dir, device="cpu", top_k=None)
    results = []
    for premise, hypothesis in zip(premises, hypotheses):
        scores = {s["label"]: s["score"] for s in classify({"text": premise, "text_pair": hypothesis})}
        results.append((scores["ENTAILMENT"], max(scores, key=scores.get) == "ENTAILMENT"))
    return results
