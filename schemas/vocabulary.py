"""The benchmark's fixed names: configs, reasoning categories, answer letters.

Plain Python with no third-party import, so that the scoring core (``reference_eval/metrics``,
``formats/official``) reads them without importing ``datasets``. ``features`` builds the typed
schema on them and re-exports them; like the schema, they are part of the public dataset:
changing them is a MAJOR version bump.
"""

from __future__ import annotations

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

# The column that identifies a row of each config; rows are sorted by it.
ID_COLUMN = {"description": "image_id", "vqa": "question_id", "codis": "id"}

# The benchmark's tasks on the Hub (eval.yaml's `tasks`, .eval_results' `task_id`): one per config
# and metric family, each with the scores.json metric whose overall value it reports.
BENCHMARK_TASKS = {
    "cogbench_recognition": ("description", "recognition_micro"),
    "cogbench_cognition": ("description", "cognition"),
    "cogbench_vqa_acc": ("vqa", "accuracy"),
    "codis_acc_p": ("codis", "acc_p"),
    "codis_acc_q": ("codis", "acc_q"),
}
# eval.yaml's `evaluation_framework`: the spec allows any identifier ("could be your own").
# The dataset version a build writes unless told otherwise (cards/changelog.yaml says why).
DEFAULT_VERSION = "2.0.0"
EVALUATION_FRAMEWORK = "cogbench"
