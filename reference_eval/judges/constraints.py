"""The structured-output constraint of each official judge prompt, one definition for every path.

The ``vllm:`` judge gives it to vLLM's ``SamplingParams`` in the process; an ``openai:`` judge with
``--judge-structured-outputs`` sends it as the request body's ``structured_outputs`` (vLLM's field:
``vllm serve``, ``run-batch``), so the three paths constrain a reply alike and, greedy, agree.
A CODIS reply is a choice of the official labels ``right``/``wrong`` (Table 12); a Cognition reply
``1. [0|1] 2. [0|1] ...`` for exactly the prompt's key points (Figures 8/9).
"""

from __future__ import annotations

import re
from typing import Any

from cogbench.reference_eval.judges.codis import JUDGE_PROMPT as CODIS_PROMPT
from cogbench.reference_eval.judges.verdicts import CODIS_LABELS, numbered_labels

CODIS_HEAD = CODIS_PROMPT.split("[QUESTION HERE]")[0]
COGNITION_COUNT = re.compile(r"Your answers to the (\d+) <[A-Z ]+>\(s\) above:")


def constraint(prompt: str) -> dict[str, Any] | None:
    """The structured-output constraint of one judge prompt: the official labels, or the numbered verdicts."""
    if prompt.startswith(CODIS_HEAD):
        return {"choice": list(CODIS_LABELS)}
    found = COGNITION_COUNT.search(prompt)
    if found:
        return {"regex": numbered_labels(int(found.group(1)))}
    return None  # another prompt (an analysis' own): unconstrained
