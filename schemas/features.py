"""The typed schema of every config: what users get from ``load_dataset``.

This module is the contract between the builders, the validators and the
evaluator. Column names and class-label orders here are part of the dataset's
public schema: changing them is a MAJOR version bump.
"""

from __future__ import annotations

import datasets

from cogbench.schemas.vocabulary import (  # noqa: F401 (re-exported: the schema's names)
    ANSWER_LETTERS,
    CATEGORY_LABEL,
    CHOICE_COLUMNS,
    CODIS_CATEGORIES,
    COGBENCH_CATEGORIES,
    CONFIGS,
    ID_COLUMN,
    RAW_DESCRIPTION_KEY,
    RAW_VQA_CATEGORY,
    REASONING_CATEGORIES,
    SPLIT,
)

# One chain of reasoning, "A1 + A2 + ... + An -> B", parsed but with its text kept.
COR_FEATURE = {
    "text": datasets.Value("string"),
    "premises": datasets.List(datasets.Value("string")),
    "conclusion": datasets.Value("string"),
}

DESCRIPTION_FEATURES = datasets.Features(
    {
        "image_id": datasets.Value("string"),
        "image_file": datasets.Value("string"),
        "image": datasets.Image(),
        "entities": datasets.List(datasets.Value("string")),
        # One list per reasoning category; a raw "None" is an empty list.
        "cors": {name: datasets.List(COR_FEATURE) for name in COGBENCH_CATEGORIES},
        "description": datasets.Value("string"),
    }
)

VQA_FEATURES = datasets.Features(
    {
        "question_id": datasets.Value("string"),
        "image_id": datasets.Value("string"),
        "image": datasets.Image(),
        "question": datasets.Value("string"),
        "choice_a": datasets.Value("string"),
        "choice_b": datasets.Value("string"),
        "choice_c": datasets.Value("string"),
        "choice_d": datasets.Value("string"),
        "answer": datasets.ClassLabel(names=list(ANSWER_LETTERS)),
        "category": datasets.ClassLabel(names=list(COGBENCH_CATEGORIES)),
    }
)

CODIS_FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        # The bare image id (as in description and vqa); the file name is image_file (since 2.0.0).
        "image_id": datasets.Value("string"),
        "image_file": datasets.Value("string"),
        "image": datasets.Image(),
        "question": datasets.Value("string"),
        "context_1": datasets.Value("string"),
        "context_2": datasets.Value("string"),
        "answer_1": datasets.Value("string"),
        "answer_2": datasets.Value("string"),
        "category": datasets.ClassLabel(names=list(CODIS_CATEGORIES)),
    }
)

FEATURES = {"description": DESCRIPTION_FEATURES, "vqa": VQA_FEATURES, "codis": CODIS_FEATURES}
