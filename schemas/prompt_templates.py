"""Every prompt the evaluator sends to a model, versioned, with where each comes from.

A template's ``id`` names it and its ``sha256`` pins its exact text; both are
written into every prediction, so a score always says which prompt produced it.
Changing a template's text means giving it a new id (bump the ``-vN`` suffix).

Templates use ``str.format`` fields. The paper prompts below are quoted
verbatim from the papers (the shared ``papers/`` folder) as cited beside each one.
They live in the data model, not in ``reference_eval``, because the build publishes them
too (``metadata.json``, ``dataset_builders/mm_eval``): one text for the evaluator and the dataset.
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


@dataclass(frozen=True)
class TemplateSource:
    """Where a template's text comes from, in the terms of the Hub's mm-eval ``metadata.json``
    (``prompt_template_source``: origin, reference, notes opening with "Tier N:"). ``tier`` 1 is the
    benchmark authors' own words; None is a template of cogbench's own (the papers print none)."""

    origin: str  # "official" (the authors') or "cogbench"
    reference: str
    notes: str
    tier: int | None


COGBENCH_PAPER = "CogBench paper (Song et al., NAACL 2025, final version)"
CODIS_PAPER = "CODIS paper (Luo et al., ACL 2024)"
SOURCES = {
    DESCRIPTION_SPONTANEOUS.id: TemplateSource(
        "official",
        f"{COGBENCH_PAPER}, Section 3.2.1 'Evaluation Modes', Spontaneous Description mode",
        "quoted verbatim; Mode 1 of Tables 2-3",
        1,
    ),
    DESCRIPTION_DIRECTED.id: TemplateSource(
        "official",
        f"{COGBENCH_PAPER}, Section 3.2.1 'Evaluation Modes', Directed Reasoning mode",
        "quoted verbatim, including the paper's 'what might happen and the mental states of the next. "
        "characters.'; Mode 2 of Tables 2-3",
        1,
    ),
    VQA_MULTIPLE_CHOICE.id: TemplateSource(
        "cogbench",
        f"{COGBENCH_PAPER}, Section 3.2.2 (four-option multiple choice scored by accuracy; no inference prompt "
        "printed); the authors' scorer eval/vqa_accuracy.py reads a letter back",
        "cogbench's own: the question, options A-D and a request for the letter alone",
        None,
    ),
    CODIS_DI_COT.id: TemplateSource(
        "official",
        f"{CODIS_PAPER}, Appendix F, Table 11, row 'w/ DI w/ CoT' (the prompt of every model the paper evaluates)",
        "quoted verbatim; [CONTEXT HERE] and [QUESTION HERE] are the fields context and question",
        1,
    ),
    CODIS_NO_CONTEXT.id: TemplateSource(
        "cogbench",
        f"{CODIS_PAPER}, Section 4.2 (output variability, Table 4: queries asked without their context; "
        "the prompt is not printed)",
        "cogbench's own: Table 11's 'w/ DI w/ CoT' prompt with every mention of the context taken out",
        None,
    ),
}

# Every template the evaluator renders for a config, the default (what `cogbench eval` sends
# unless told otherwise) first, each with the `eval` option that selects it.
CONFIG_TEMPLATES: dict[str, tuple[tuple[PromptTemplate, str], ...]] = {
    "description": ((DESCRIPTION_SPONTANEOUS, "--mode spontaneous"), (DESCRIPTION_DIRECTED, "--mode directed")),
    "vqa": ((VQA_MULTIPLE_CHOICE, ""),),
    "codis": ((CODIS_DI_COT, ""), (CODIS_NO_CONTEXT, "--no-context")),
}
