"""The LLM judge of the Cognition Score (CogBench Description task).

Definition (CogBench final paper, Section 3.2.1 and Appendix D): a judge
decides for each annotated CoR whether the description states its semantics.
For seven categories it is asked about the CoR's conclusion (prompt of
Figure 8); for Event Relationship about the whole CoR (Figure 9). The score of
a category is the recall of its CoRs; the overall score is all positive CoRs
divided by all CoRs.

Per image there is one judge call per prompt: one Figure 8 call listing the
conclusions of the seven categories as numbered key points, one Figure 9 call
listing the event relationships. The reply must give a verdict for every
key point (read by ``verdicts.parse_numbered``: ``official`` is the authors'
``output_parse``, by position; ``tolerant`` reads by number in more formats);
a reply that gives none is retried and, if it never does, every CoR in that
call is a judge failure: reported, and left out of the score rather than
counted as 0 or 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cogbench.reference_eval.judges.verdicts import judge_answer, parse_numbered
from cogbench.reference_eval.metrics.cognition import CorItem
from cogbench.schemas.vocabulary import COGBENCH_CATEGORIES

WHOLE_COR_CATEGORY = "event_relationship"

# CogBench final paper, Appendix D, Figure 8 (verbatim; placeholders filled in by
# ``figure8_prompt``).
FIGURE_8_HEAD = (
    "Given a <DESCRIPTION> and some <KEY POINT>s, please tell me if the <DESCRIPTION> explicitly presents "
    "the exact or similar semantics of each <KEY POINT>. The following points are required:\n"
    "1) Instead of reasoning about whether each <KEY POINT> is possibly correct based on the <DESCRIPTION>, "
    "you only need to determine whether the <DESCRIPTION> mentions the semantics in the <KEY POINT>.\n"
    "2) Do not overlook the semantics in the <DESCRIPTION> that are semantically equivalent to the <KEY POINT> "
    'but expressed in different ways. For instance, if the <DESCRIPTION> mentions "The woman is playing with '
    'her son...", we can tell it successfully includes semantics in the <KEY POINT> "The woman is the mother '
    'of the boy."\n'
    "3) If several possible scenarios are listed using 'or' at a <KEY POINT>, you only need to determine "
    "whether one of these scenarios is mentioned in the <DESCRIPTION>.\n"
    "Assign a score of 0 or 1 to each <KEY POINT>, where 0 represents NO and 1 represents YES.\n"
)
# CogBench final paper, Appendix D, Figure 9 (verbatim).
FIGURE_9_HEAD = (
    "Given a <DESCRIPTION> and some <EVENT RELATIONSHIP>s, please tell me whether this <DESCRIPTION> clearly "
    "depicts the cause-and-effect relationships between events.\n"
    'The format of a <EVENT RELATIONSHIP> follows the structure "A1 + A2 + ... + An -> B", where A1, A2, ..., '
    "An and B are events. Events A1, A2, ..., An are the causes of event B, and event B is the result caused by "
    "events A1, A2, ..., An. The criteria for judgment lie in whether the <DESCRIPTION> mentions these events "
    "and clearly depicts the causal relationships between them.\n"
    "Assign a score of 0 or 1 to each <EVENT RELATIONSHIP>, where 0 represents NO and 1 represents YES.\n"
)
ANSWER_FORMAT = (
    'Please write your answers in "[]" with 0 or 1 in the following format (number + square brackets):\n1. [1] 2. [0]\n'
)


def _prompt(head: str, tag: str, description: str, points: Sequence[str]) -> str:
    numbered = "\n".join(f"{number}. {point}" for number, point in enumerate(points, start=1))
    blanks = " ".join(f"{number}. []" for number in range(1, len(points) + 1))
    return (
        f"{head}\n<DESCRIPTION>:\n{description}\n\n<{tag}>:\n{numbered}\n\n{ANSWER_FORMAT}\n"
        f"Your answers to the {len(points)} <{tag}>(s) above: {blanks}"
    )


def figure8_prompt(description: str, key_points: Sequence[str]) -> str:
    return _prompt(FIGURE_8_HEAD, "KEY POINT", description, key_points)


def figure9_prompt(description: str, event_relationships: Sequence[str]) -> str:
    return _prompt(FIGURE_9_HEAD, "EVENT RELATIONSHIP", description, event_relationships)


def parse_verdicts(reply: str, count: int, mode: str = "tolerant") -> list[int] | None:
    """One verdict per key point 1..count, in the given mode; None when unusable (``verdicts.parse_numbered``
    on the reply's final answer, ``verdicts.judge_answer``)."""
    answer = judge_answer(reply)
    return parse_numbered(answer, count, mode) if answer is not None else None


@dataclass(frozen=True)
class JudgeCall:
    image_id: str
    prompt_figure: int
    items: tuple[CorItem, ...]
    prompt: str


def judge_calls(image_id: str, cors: dict[str, list[dict[str, Any]]], description: str) -> list[JudgeCall]:
    """The (at most two) judge calls of one image: Figure 8 for seven categories, Figure 9 for one."""
    conclusions: list[CorItem] = []
    relationships: list[CorItem] = []
    for category in COGBENCH_CATEGORIES:
        for index, cor in enumerate(cors.get(category) or []):
            if category == WHOLE_COR_CATEGORY:
                relationships.append(CorItem(image_id, category, index, cor["text"], cor["text"]))
            else:
                conclusions.append(CorItem(image_id, category, index, cor["text"], cor["conclusion"]))
    calls = []
    if conclusions:
        points = [item.key_point for item in conclusions]
        calls.append(JudgeCall(image_id, 8, tuple(conclusions), figure8_prompt(description, points)))
    if relationships:
        points = [item.key_point for item in relationships]
        calls.append(JudgeCall(image_id, 9, tuple(relationships), figure9_prompt(description, points)))
    return calls
