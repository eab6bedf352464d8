"""Export an lmms-eval task folder: one YAML per task (and mode) plus a ``utils.py``.

lmms-eval reads every ``*.yaml`` under ``--include_path DIR``; each task here
loads the dataset with ``load_dataset`` (a built folder, or a Hub repo id
pinned to a revision) and calls the functions of ``lmms_eval_tasks`` through
``utils.py``, so prompts and scorers are this package's (install it beside
lmms-eval). Tasks: ``cogbench_description_spontaneous``,
``cogbench_description_directed`` (CogBench Section 3.2.1's two modes), ``cogbench_vqa``, ``cogbench_codis``.
"""

from __future__ import annotations

import json
from pathlib import Path

from cogbench.reference_eval.metrics.recognition import check_models
from cogbench.reference_eval.prompts import (
    CODIS_DI_COT,
    DESCRIPTION_DIRECTED,
    DESCRIPTION_SPONTANEOUS,
    VQA_MULTIPLE_CHOICE,
)

UTILS = '''"""lmms-eval calls these through the YAMLs beside this file; the code is the cogbench package's."""

from cogbench.reference_eval.harnesses.lmms_eval_tasks import *  # noqa: F401,F403
'''
# The description tasks' functions: a module of their own, so that their models are checked when
# lmms-eval loads these tasks (in the first second of a run) and never for a VQA or CODIS run.
UTILS_DESCRIPTION = '''"""The description tasks' functions; importing this checks the Recognition Score's models."""

from cogbench.reference_eval.harnesses.lmms_eval_tasks import *  # noqa: F401,F403
from cogbench.reference_eval.harnesses.lmms_eval_tasks import recognition_score, require_models

# The Recognition Score's models (`cogbench export --spacy-model/--embedder`): names or local paths.
SPACY_MODEL = {spacy_model!r}
EMBEDDER = {embedder!r}
require_models(SPACY_MODEL, EMBEDDER)  # a missing or moved model fails here, before any generation


def description_recognition(items):
    return recognition_score(items, SPACY_MODEL, EMBEDDER)
'''
# The paper's models (CogBench Section 3.2.1), as `cogbench score`'s defaults.
DEFAULT_SPACY_MODEL = "en_core_web_sm"
DEFAULT_EMBEDDER = "sentence-transformers/all-mpnet-base-v2"

# task name -> (config, prompt template, functions prefix, metrics -> aggregation function)
TASKS = {
    "cogbench_description_spontaneous": ("description", DESCRIPTION_SPONTANEOUS, "description_spontaneous",
                                         {"recognition": "description_recognition"}),
    "cogbench_description_directed": ("description", DESCRIPTION_DIRECTED, "description_directed",
                                      {"recognition": "description_recognition"}),
    "cogbench_vqa": ("vqa", VQA_MULTIPLE_CHOICE, "vqa", {"accuracy": "mean", "accuracy_official": "mean"}),
    "cogbench_codis": ("codis", CODIS_DI_COT, "codis", {"acc_p": "codis_acc_p", "acc_q": "codis_acc_q"}),
}
MAX_NEW_TOKENS = 512  # as `cogbench eval`'s default


def task_yaml(name: str, dataset: str, revision: str | None) -> str:
    config, template, prefix, metrics = TASKS[name]
    utils = "utils_description" if config == "description" else "utils"
    lines = [
        f"# Written by `cogbench export --format lmms-eval`; prompt {template.id} (sha256 {template.sha256[:12]}).",
        f"task: {name}",
        f"dataset_path: {json.dumps(dataset)}",
        f"dataset_name: {config}",
    ]
    if revision:
        lines.append(f"dataset_kwargs:\n  revision: {json.dumps(revision)}")
    lines += [
        "test_split: test",
        "output_type: generate_until",
        f"doc_to_visual: !function {utils}.doc_to_visual",
        f"doc_to_text: !function {utils}.{prefix}_doc_to_text",
        f"doc_to_target: !function {utils}.{config}_doc_to_target",
    ]
    if config == "codis":
        lines.append("process_docs: !function utils.codis_process_docs")
    lines += [
        "generation_kwargs:",
        f"  max_new_tokens: {MAX_NEW_TOKENS}",
        "  temperature: 0",
        "  do_sample: false",
        f"process_results: !function {utils}.{config}_process_results",
        "metric_list:",
    ]
    for metric, aggregation in metrics.items():
        lines += [f"  - metric: {metric}", f"    aggregation: !function {utils}.{aggregation}", "    higher_is_better: true"]
    lines += ["metadata:", f"  version: {json.dumps(template.id)}"]
    return "\n".join(lines) + "\n"


def export_lmms_eval(
    dataset: str, out: Path, revision: str | None = None,
    spacy_model: str = DEFAULT_SPACY_MODEL, embedder: str = DEFAULT_EMBEDDER,
) -> list[Path]:
    """Write the task folder ``out`` (created; files of the same names replaced) and return its files.

    The Recognition Score's models are loaded first: a missing one is refused before anything is written.
    """
    check_models(spacy_model, embedder)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "utils.py", out / "utils_description.py"]
    written[0].write_text(UTILS, encoding="utf-8")
    written[1].write_text(UTILS_DESCRIPTION.format(spacy_model=spacy_model, embedder=embedder), encoding="utf-8")
    for name in TASKS:
        path = out / f"{name}.yaml"
        path.write_text(task_yaml(name, dataset, revision), encoding="utf-8")
        written.append(path)
    return written
