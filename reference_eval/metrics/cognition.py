"""Cognition Score of the CogBench Description task.

Definition (CogBench final paper, Section 3.2.1): a judge decides for each
annotated CoR whether the description states its semantics (``judges.cognition``
asks the paper's LLM judge). The score of a category is the recall of its CoRs;
the overall score is all positive CoRs divided by all CoRs. A CoR the judge
failed on is left out of the score rather than counted as 0 or 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cogbench.schemas.vocabulary import COGBENCH_CATEGORIES


@dataclass(frozen=True)
class CorItem:
    """One annotated CoR to judge: where it comes from and the text shown to the judge."""

    image_id: str
    category: str
    index: int  # position within its category's list
    cor_text: str
    key_point: str  # conclusion, or the whole CoR for Event Relationship


def cognition_scores(verdicts: Sequence[tuple[CorItem, int | None]]) -> dict[str, Any]:
    """Recall per category and overall (Section 3.2.1), over the CoRs the judge answered, in percent."""
    per_category: dict[str, float | None] = {}
    for category in COGBENCH_CATEGORIES:
        judged = [v for item, v in verdicts if item.category == category and v is not None]
        per_category[category] = 100.0 * sum(judged) / len(judged) if judged else None
    judged = [v for _, v in verdicts if v is not None]
    return {"overall": 100.0 * sum(judged) / len(judged) if judged else None, "per_category": per_category}
