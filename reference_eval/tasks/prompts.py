"""The prompt templates the evaluator runs each task with.

The templates themselves (text, id, sha256 and where each comes from) are part of the data
model, ``schemas/prompt_templates``, because the build publishes them as well (``metadata.json``);
this module picks the one a run uses.
"""

from __future__ import annotations

from cogbench.schemas.prompt_templates import (
    CODIS_DI_COT,
    CODIS_NO_CONTEXT,
    DESCRIPTION_DIRECTED,
    DESCRIPTION_SPONTANEOUS,
    VQA_MULTIPLE_CHOICE,
    PromptTemplate,
)

__all__ = [
    "CODIS_DI_COT",
    "CODIS_NO_CONTEXT",
    "DESCRIPTION_DIRECTED",
    "DESCRIPTION_MODES",
    "DESCRIPTION_SPONTANEOUS",
    "VQA_MULTIPLE_CHOICE",
    "PromptTemplate",
    "template_for",
]

DESCRIPTION_MODES = {"spontaneous": DESCRIPTION_SPONTANEOUS, "directed": DESCRIPTION_DIRECTED}


def template_for(task: str, mode: str = "spontaneous", no_context: bool = False) -> PromptTemplate:
    """The template a task is run with; ``mode`` only matters for description, ``no_context`` for codis."""
    if task == "description":
        return DESCRIPTION_MODES[mode]
    if task == "vqa":
        return VQA_MULTIPLE_CHOICE
    if task == "codis":
        return CODIS_NO_CONTEXT if no_context else CODIS_DI_COT
    raise ValueError(f"unknown task {task!r}")
