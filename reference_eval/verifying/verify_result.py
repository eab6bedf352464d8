"""What ``cogbench verify`` found: each number or field re-derived and equal, each difference, and the
fields it could only read as stated (printed apart, never counted as verified)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOLERANCE = 0.01  # points: scores.json keeps 4 decimals, a report 1, a result 2 (half its last digit)


@dataclass
class Difference:
    where: str
    stated: str
    recomputed: str
    items: list[str] = field(default_factory=list)

    def line(self) -> str:
        because = (
            f" (items: {', '.join(self.items[:10])}{' ...' if len(self.items) > 10 else ''})" if self.items else ""
        )
        if not self.recomputed:  # an item whose own fields disagree
            return f"{self.where}: {self.stated}"
        return f"{self.where}: says {self.stated}, the details give {self.recomputed}{because}"


@dataclass
class Verification:
    equal: int = 0
    differences: list[Difference] = field(default_factory=list)
    stated: dict[str, None] = field(default_factory=dict)  # fields read but not re-derivable, in order
    tasks: dict[str, TaskData] = field(default_factory=dict)  # what was read and checked, per task

    def compare(self, where: str, stated: Any, recomputed: Any, items: list[str] | None = None, tol=TOLERANCE) -> None:
        """A number against its re-derivation; null only equals null (or NaN: nothing to count)."""
        if isinstance(recomputed, float) and math.isnan(recomputed):
            recomputed = None
        number = (int, float)
        same = (
            isinstance(stated, number)
            and not isinstance(stated, bool)
            and isinstance(recomputed, number)
            and abs(stated - recomputed) <= tol
        ) or (stated is None and recomputed is None)
        if same:
            self.equal += 1
        else:
            shown = (
                _shown(stated) if isinstance(stated, (int, float)) and not isinstance(stated, bool) else repr(stated)
            )
            self.differences.append(Difference(where, shown, _shown(recomputed), items or []))

    def same(self, where: str, stated: Any, derived: Any, items: list[str] | None = None) -> None:
        """A field (count, flag, id, text, hash) against its re-derivation or another file's record of it."""
        if stated == derived and type(stated) is type(derived):
            self.equal += 1
        else:
            self.differences.append(Difference(where, _short(stated), _short(derived), items or []))

    def problem(self, where: str, text: str, items: list[str] | None = None) -> None:
        self.differences.append(Difference(where, text, "", items or []))

    def state(self, *fields: str) -> None:
        """Fields that nothing else records: shown as stated, not counted as verified."""
        self.stated.update(dict.fromkeys(fields))


def _shown(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nothing"
    return f"{value:.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else repr(value)


def _short(value: Any) -> str:
    text = "nothing" if value is None else repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


@dataclass
class TaskData:
    """One task's details with the files stating numbers about them."""

    where: str
    details: list[dict[str, Any]]
    scores: dict[str, Any]
    scores_path: Path
    report: str | None
    rows: list[dict[str, Any]] | None = None  # a details dataset's Parquet rows (readable columns beside detail)
    run_dir: Path | None = None  # an eval run folder (run.json, predictions.jsonl), when the target is one
