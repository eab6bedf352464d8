"""Every prompt the evaluator sends to a model, versioned.

A template's ``id`` names it and its ``sha256`` pins its exact text; both are
written into every prediction, so a score always says which prompt produced it.
Changing a template's text means giving it a new id (bump the ``-vN`` suffix).

Templates use ``str.format`` fields. The paper prompts below are quoted
verbatim from the papers (the shared ``papers/`` folder) as cited beside each one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class PromptTemplate:
    id: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, **fields: str) -> str:
        return self.text.format(**fields)


# CogBench final paper (NAACL 2025), Section 3.2.1 "Evaluation Modes", verbatim:
# the instruction of the Spontaneous Description mode (Mode 1 of Tables 2-3).
DESCRIPTION_SPONTANEOUS = PromptTemplate(
    id="cogbench-description-spontaneous-v1",
    text="Describe this image in detail.",
)

# CogBench final paper (NAACL 2025), Section 3.2.1 "Evaluation Modes", verbatim:
# the instruction of the Directed Reasoning mode (Mode 2 of Tables 2-3). The
# ending "what might happen and the mental states of the next. characters." is
# exactly as the paper prints it (it reads like a typesetting slip for "what
# might happen next and the mental states of the characters."); it is kept so
# that scores stay comparable with the paper's.
DESCRIPTION_DIRECTED = PromptTemplate(
    id="cogbench-description-directed-v1",
    text=(
        "Please provide a detailed description of the story depicted in the image, including "
        "high-level reasoning about the time and location, the roles and relationships of the "
        "characters, the events and their causal relationships, what might happen and the mental "
        "states of the next. characters."
    ),
)

# The CogBench papers give no inference prompt for the VQA task (Section 3.2.2
# only says it is four-option multiple choice scored by accuracy). This one is
# the project's own: the question, the four options with their letters, and a
# request for the letter alone so that scoring can read it back.
VQA_MULTIPLE_CHOICE = PromptTemplate(
    id="cogbench-vqa-letter-v1",
    text=(
        "{question}\n"
        "A. {choice_a}\n"
        "B. {choice_b}\n"
        "C. {choice_c}\n"
        "D. {choice_d}\n"
        "Reply with the letter (A, B, C or D) of the correct option only."
    ),
)

# CODIS paper, Appendix F, Table 11, row "w/ DI w/ CoT" (detailed instructions
# + chain of thought), verbatim; the paper uses this prompt for every model of
# its evaluation. [CONTEXT HERE] and [QUESTION HERE] become format fields. One
# query per context: each pair is asked twice, once with context_1, once with
# context_2.
CODIS_DI_COT = PromptTemplate(
    id="codis-di-cot-v1",
    text=(
        "I'll give you an image and some additional context, which provides information closely "
        "related to the scene of the picture. Please answer my question based on the image and the "
        "context. Be sure to refer to the context and extract necessary information from it to help "
        "you answer the question because it contains helpful information that is not included in the "
        "image. Your answer should contain two parts. Two parts should be separated by a newline. In "
        "the first part, please think of the question step by step based on the image and context and "
        "output your reasoning process. In the second part, please summarize your reasoning process and "
        "directly answer the question in a single word or phrase. Context: {context} Question: {question}"
    ),
)

# CODIS paper, Section 4.2 (output variability, Table 4): the queries are asked
# "by excluding context and providing only images and questions as inputs"; the
# paper does not print that prompt. This one is the project's own: CODIS_DI_COT
# with every mention of the context taken out, so that the answer format (reasoning,
# newline, short answer) and therefore the answer extraction stay the same.
CODIS_NO_CONTEXT = PromptTemplate(
    id="codis-no-context-cot-v1",
    text=(
        "I'll give you an image. Please answer my question based on the image. Your answer should contain "
        "two parts. Two parts should be separated by a newline. In the first part, please think of the "
        "question step by step based on the image and output your reasoning process. In the second part, "
        "please summarize your reasoning process and directly answer the question in a single word or "
        "phrase. Question: {question}"
    ),
)

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
