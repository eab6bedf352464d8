"""The functions the exported lmms-eval tasks call (their ``utils.py`` re-exports this module).

They build this package's versioned prompts (``schemas/prompt_templates.py``) and score with its
metrics, so a model run in lmms-eval gets the same prompt and the same numbers
as ``cogbench eval``: the Recognition Score of descriptions (CogBench Section
3.2.1; spaCy and embedder named in the exported ``utils.py``), VQA accuracy with both extractors (CogBench Section
3.2.2), CODIS Acc_p / Acc_q with the offline rule judge (CODIS Section 4.1;
for the paper's GPT-4 judge, score the ``--log_samples`` file with
``cogbench score --judge openai:MODEL``). Each reply is scored by its final answer, its think
blocks set apart by the rule ``cogbench score`` uses (``answers/reasoning.py``).
"""

from __future__ import annotations

import functools
from typing import Any

from cogbench.reference_eval.answers.reasoning import split_reply
from cogbench.reference_eval.formats.harness import QUERY_FIELD, TaskDoc
from cogbench.reference_eval.judges.codis import rule_verdict
from cogbench.reference_eval.metrics import recognition
from cogbench.reference_eval.metrics.vqa import extract_official, extract_robust
from cogbench.reference_eval.tasks.prompts import (
    CODIS_DI_COT,
    DESCRIPTION_DIRECTED,
    DESCRIPTION_SPONTANEOUS,
    VQA_MULTIPLE_CHOICE,
)
from cogbench.schemas.vocabulary import ANSWER_LETTERS, CHOICE_COLUMNS


def doc_to_visual(doc: dict[str, Any]) -> list:
    return [doc["image"].convert("RGB")]


# --- description: two modes, one task each -----------------------------------


def description_spontaneous_doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None) -> str:
    return DESCRIPTION_SPONTANEOUS.render()


def description_directed_doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None) -> str:
    return DESCRIPTION_DIRECTED.render()


def description_doc_to_target(doc: dict[str, Any]) -> str:
    return doc["description"]


def description_process_results(doc: dict[str, Any], results: list[str]) -> dict[str, dict]:
    output = final_text(results)
    return {"recognition": {"image_id": doc["image_id"], "entities": list(doc["entities"]), "output": output}}


def final_text(results: list[str]) -> str:
    """The final answer of lmms-eval's reply (a reasoning model's think block set apart)."""
    return split_reply(results[0]).answer


@functools.cache
def require_models(spacy_model: str, embedder: str) -> recognition.RecognitionModels:
    """The models, loaded once per process: lmms-eval executes utils files once per YAML function and
    calls the aggregation by name, with nothing to carry them in, so this cache is where they stay."""
    return recognition.check_models(spacy_model, embedder)


def recognition_score(items: list[dict], spacy_model: str, embedder: str) -> float | None:
    """Recognition Score, micro over all images (the paper's number), of the collected descriptions."""
    models = require_models(spacy_model, embedder)
    matches = recognition.recognition_matches(
        models.nlp,
        models.embedder,
        [item["entities"] for item in items],
        [item["output"] for item in items],
    )
    return recognition.recognition_scores(matches)["recognition_micro"]


# --- vqa ---------------------------------------------------------------------


def vqa_doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None) -> str:
    return VQA_MULTIPLE_CHOICE.render(question=doc["question"], **{c: doc[c] for c in CHOICE_COLUMNS})


def vqa_doc_to_target(doc: dict[str, Any]) -> str:
    answer = doc["answer"]  # the ClassLabel's index, or its name (the letter) in rows read without labels
    return answer if isinstance(answer, str) else ANSWER_LETTERS[answer]


def vqa_process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Per question, 100 or 0 under each extractor (robust: ``accuracy``, the authors' rule: ``accuracy_official``)."""
    response, truth = final_text(results), vqa_doc_to_target(doc)
    choices = [doc[c] for c in CHOICE_COLUMNS]
    return {
        "accuracy": 100.0 * (extract_robust(response, choices) == truth),
        "accuracy_official": 100.0 * (extract_official(response) == truth),
    }


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


# --- codis: each pair asked twice, once per context ----------------------------


def codis_process_docs(dataset):
    """Two docs per pair (``cogbench_query`` 1 and 2), in dataset order, as ``cogbench eval`` asks them."""

    def expand(batch: dict[str, list]) -> dict[str, list]:
        count = len(batch["id"])
        out = {name: [values[i] for i in range(count) for _ in (1, 2)] for name, values in batch.items()}
        out[QUERY_FIELD] = [q for _ in range(count) for q in (1, 2)]
        return out

    return dataset.map(expand, batched=True)


def codis_doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None) -> str:
    return CODIS_DI_COT.render(context=doc[f"context_{doc[QUERY_FIELD]}"], question=doc["question"])


def codis_doc_to_target(doc: dict[str, Any]) -> str:
    return doc[f"answer_{doc[QUERY_FIELD]}"]


def codis_process_results(doc: dict[str, Any], results: list[str]) -> dict[str, dict]:
    """The rule judge's verdict on one query, passed to both aggregations."""
    q = doc[QUERY_FIELD]
    verdict = {
        "id": doc["id"],
        "query": q,
        "right": rule_verdict(final_text(results), doc[f"answer_{q}"], doc[f"answer_{3 - q}"]),
    }
    return {"acc_p": verdict, "acc_q": verdict}


def codis_acc_q(items: list[dict]) -> float:
    """Acc_q (CODIS Section 4.1): share of queries answered right, in percent."""
    return 100.0 * mean([float(item["right"]) for item in items])


def codis_acc_p(items: list[dict]) -> float:
    """Acc_p (CODIS Section 4.1): share of pairs whose two queries are both right, in percent."""
    pairs: dict[str, dict[int, bool]] = {}
    for item in items:
        pairs.setdefault(item["id"], {})[item["query"]] = item["right"]
    complete = [answers for answers in pairs.values() if set(answers) == {1, 2}]
    return 100.0 * mean([float(answers[1] and answers[2]) for answers in complete])


# --- what lmms-eval logged, checked against the docs ----------------------------


def task_docs(task: str, rows: list[dict[str, Any]]) -> list[TaskDoc]:
    """The exported task's docs in lmms-eval's order (``doc_id``), with the target and prompt(s) each must have.

    ``rows``: the config's rows in dataset order. Both description modes are
    accepted (the prompt a sample shows says which one it was).
    """

    def prompt(template, text: str) -> dict[str, tuple[str, str]]:
        return {text: (template.id, template.sha256)}

    if task == "description":
        modes = {
            **prompt(DESCRIPTION_SPONTANEOUS, description_spontaneous_doc_to_text({})),
            **prompt(DESCRIPTION_DIRECTED, description_directed_doc_to_text({})),
        }
        return [TaskDoc(row["image_id"], None, description_doc_to_target(row), modes) for row in rows]
    if task == "vqa":
        return [
            TaskDoc(row["question_id"], None, vqa_doc_to_target(row), prompt(VQA_MULTIPLE_CHOICE, vqa_doc_to_text(row)))
            for row in rows
        ]
    docs = [{**row, QUERY_FIELD: query} for row in rows for query in (1, 2)]  # as codis_process_docs
    return [
        TaskDoc(doc["id"], doc[QUERY_FIELD], codis_doc_to_target(doc), prompt(CODIS_DI_COT, codis_doc_to_text(doc)))
        for doc in docs
    ]
