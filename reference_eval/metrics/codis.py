"""CODIS metrics: Acc_p, Acc_q and context awareness (CODIS paper).

Acc_p and Acc_q, Section 3.3: Acc_p is the share of pairs whose two queries
are both right, Acc_q the share of single queries right (``task_scorers.score_codis``
pools the verdicts of a judge in ``judges.codis`` with ``metrics.aggregate``).
Context awareness, Section 4.2: the share of pairs whose two outputs differ;
the paper judges "differ" by hand on the semantic level, this package compares
the two extracted final answers after normalisation (case, spaces,
punctuation), which is stricter about wording. Judge agreement, Section 5.3:
the share of queries on which two judges give the same verdict.
"""

from __future__ import annotations

import re


def final_answer(output: str) -> str:
    """The summarised answer: the last non-empty line (the inference prompt, Table 11, asks for
    reasoning, a newline, then the answer), without an "Answer:" label."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return re.sub(r"^(?:\**\s*(?:final\s+)?answer\s*\**\s*[:：]\s*\**)", "", last, flags=re.IGNORECASE).strip()


def normalize_answer(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def outputs_differ(output_1: str, output_2: str) -> bool:
    """Context awareness per pair: the two final answers differ after normalisation."""
    return normalize_answer(final_answer(output_1)) != normalize_answer(final_answer(output_2))
