"""Semantic equality of two CODIS outputs, asked of an LLM judge (for output variability, CODIS Section 4.2).

The paper decides by hand whether a query's outputs with and without context
are "unequal on the semantic level" (Section 4.2, Table 4); it publishes no
prompt for it. This prompt is the project's own, versioned like the others:
changing its text means a new ``id``. The judge sees the question and the two
outputs and answers ``same`` or ``different``; anything else is unusable and
retried, then counted as a judge failure (left out of the share).
"""

from __future__ import annotations

import hashlib

from cogbench.reference_eval.judges.verdicts import judge_answer

SAME_ANSWER_PROMPT_ID = "codis-same-answer-v1"
SAME_ANSWER_PROMPT = (
    "Two outputs of a model answer the same question about the same image. Each output may contain a "
    "reasoning part and a final answer. Compare only the final answers: do they give the same answer to "
    "the question, in meaning? Wording, format and minor grammar differences do not matter; an answer "
    "that picks a different option, value or direction does.\n"
    'If the two answers mean the same, output "same", otherwise output "different". You can only print '
    '"same" or "different" and nothing else.\n'
    "Here is the question: [QUESTION HERE]\n"
    "Here is output 1: [OUTPUT 1 HERE]\n"
    "Here is output 2: [OUTPUT 2 HERE]"
)
SAME_ANSWER_PROMPT_SHA256 = hashlib.sha256(SAME_ANSWER_PROMPT.encode("utf-8")).hexdigest()


def same_answer_prompt(question: str, output_1: str, output_2: str) -> str:
    return (
        SAME_ANSWER_PROMPT.replace("[QUESTION HERE]", question)
        .replace("[OUTPUT 1 HERE]", output_1)
        .replace("[OUTPUT 2 HERE]", output_2)
    )


def parse_changed(reply: str) -> bool | None:
    """``different`` -> True (the output changed), ``same`` -> False, anything else -> None; a judge's
    think block is skipped (``verdicts.judge_answer``)."""
    answer = judge_answer(reply)
    if answer is None:
        return None
    word = answer.strip().strip("\"'.!` *").lower()
    return {"different": True, "same": False}.get(word)
