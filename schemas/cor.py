"""Chains of reasoning: the CogBench annotation ``A1 + A2 + ... + An -> B``.

The grammar is the one of the CogBench annotation guide (final paper,
Appendix A and Figure 6): premises joined by ``+``, one ``->``, one conclusion.
A category with no chain is written as the single entry ``None``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from cogbench.schemas.text import visible

NONE_ENTRY = "None"
ARROW = "->"
# A premise separator is a "+" with whitespace on both sides, so that text such
# as "C++" or "2+2" inside a clue is not split.
_PLUS = re.compile(r"\s+\+\s+")
# A premise that starts or ends with a lone "+" (not "C++" or "2+2").
_DANGLING = re.compile(r"^\+(\s|$)|(^|\s)\+$")


@dataclass(frozen=True)
class ChainOfReasoning:
    text: str
    premises: tuple[str, ...]
    conclusion: str

    def to_row(self) -> dict:
        row = asdict(self)
        row["premises"] = list(self.premises)
        return row


class CorSyntaxError(ValueError):
    """A chain that does not read ``A1 + ... + An -> B``."""


def parse_cor(text: str) -> ChainOfReasoning:
    """Parse one chain; raise ``CorSyntaxError`` saying what is wrong."""
    arrows = text.count(ARROW)
    if arrows == 0:
        raise CorSyntaxError("no '->' between premises and conclusion")
    if arrows > 1:
        raise CorSyntaxError(f"{arrows} '->' found; a chain has exactly one (no 'A -> B -> C')")
    left, right = text.split(ARROW)
    conclusion = right.strip()
    premises = tuple(part.strip() for part in _PLUS.split(left.strip()))
    if not _shown(conclusion):
        raise CorSyntaxError("empty conclusion after '->'")
    if not any(_shown(p) for p in premises):
        raise CorSyntaxError("no premise before '->'")
    if not all(_shown(p) for p in premises):
        raise CorSyntaxError("empty premise between '+' signs")
    for premise in premises:
        # "A + -> B", "+ A -> B", "A + + B -> B": a '+' with nothing on one side.
        if _shown(premise) in ("+",) or _DANGLING.search(premise):
            raise CorSyntaxError(f"'+' with no premise on one side in {premise!r}")
    return ChainOfReasoning(text=text, premises=premises, conclusion=conclusion)


def _shown(text: str) -> str:
    """The text without whitespace and invisible format characters (zero-width spaces...)."""
    return visible(text).strip()


def parse_category(entries: list[str]) -> list[ChainOfReasoning]:
    """Parse the raw list of one category; ``["None"]`` means no chain."""
    if [entry.strip() for entry in entries] == [NONE_ENTRY]:
        return []
    return [parse_cor(entry) for entry in entries]
