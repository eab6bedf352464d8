"""The typed schema of every config: what users get from ``load_dataset``.

This module is the contract between the builders, the validators and the
evaluator. Column names and class-label orders here are part of the dataset's
public schema: changing them is a MAJOR version bump.
"""

from __future__ import annotations

import datasets

SPLIT = "test"
CONFIGS = ("description", "vqa", "codis")

# The eight reasoning categories of CogBench (final paper, Section 2.2 and
# Table 1), in the paper's order. Each entry: (short name used in the dataset,
# key of the raw description file, short name used by the raw VQA file, label
# as printed in the paper's tables).
REASONING_CATEGORIES = (
    ("time", "Special Time Reasoning", "time", "Special Time"),
    ("location", "Location Reasoning", "location", "Location"),
    ("character", "Character Reasoning", "character", "Character"),
    ("character_relationship", "Character Relationship Reasoning", "character_relationship", "Character Relationship"),
    ("event", "Event Reasoning", "event", "Event"),
    ("event_relationship", "Event Relationship Reasoning", "event_relationship", "Event Relationship"),
    ("next_event", "Next Moment Event Reasoning", "next_event", "Next Moment Event"),
    ("mental", "Mental State Reasoning", "mental", "Mental State"),
)
COGBENCH_CATEGORIES = tuple(short for short, *_ in REASONING_CATEGORIES)
RAW_DESCRIPTION_KEY = {short: raw for short, raw, _, _ in REASONING_CATEGORIES}
RAW_VQA_CATEGORY = {raw_vqa: short for short, _, raw_vqa, _ in REASONING_CATEGORIES}
CATEGORY_LABEL = {short: label for short, _, _, label in REASONING_CATEGORIES}

# The five CODIS categories (CODIS paper, Section 3.1 and Table 2), spelled as
# in the authors' data.json.
CODIS_CATEGORIES = (
    "Location and Orientation",
    "Temporal Information",
    "Cultural Background",
    "Attributes",
    "Relationships",
)

ANSWER_LETTERS = ("A", "B", "C", "D")
CHOICE_COLUMNS = ("choice_a", "choice_b", "choice_c", "choice_d")

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
# The column that identifies a row of each config; rows are sorted by it.
ID_COLUMN = {"description": "image_id", "vqa": "question_id", "codis": "id"}
