"""The papers' published results, kept beside the user's runs in ``cogbench report``.

``published_results.csv`` holds, one value a line (percent), the cells of
CogBench (final NAACL 2025 paper) Table 2 (Recognition Score, Mode 1 =
spontaneous, Mode 2 = directed), Table 3 (Cognition Score per reasoning
category and mode; Oracle), Table 5 (VQA accuracy; Human) and CODIS Table 3
(Acc_p and Acc_q per category and overall, context awareness; human-assessed).
They were entered from the paper texts in ``../shared/papers``; model names
are spelled as the papers mean them where the text extraction garbled them
(GPT-40 -> GPT-4o, Owen-VL-Chat -> Qwen-VL-Chat, mPLUG-Ow1-2 -> mPLUG-Owl-2),
and a ``note`` says where a cell needed reading. ``tests/test_published.py``
re-reads cells from the papers.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from importlib import resources

# Rows that are references, not models: never "best" in a column.
REFERENCE_MODELS = ("Human", "Oracle")


@dataclass(frozen=True)
class PublishedResult:
    paper: str
    table: str
    model: str
    mode: str  # spontaneous | directed | oracle for the description task, else ""
    metric: str  # the scores.json metric name
    category: str  # a dataset category name, or "overall"
    value: float
    note: str = ""

    @property
    def source(self) -> str:
        return f"{self.paper} {self.table}"


def published_results() -> list[PublishedResult]:
    text = (
        resources.files("cogbench.reference_eval.reports").joinpath("published_results.csv").read_text(encoding="utf-8")
    )
    return [PublishedResult(**{**row, "value": float(row["value"])}) for row in csv.DictReader(io.StringIO(text))]


def published_table(results: list[PublishedResult], metric: str, mode: str = "") -> dict[str, dict[str, float]]:
    """``{model: {category: value}}`` for one metric (and description mode), in the paper's row order."""
    table: dict[str, dict[str, float]] = {}
    for result in results:
        if result.metric == metric and result.mode in (mode, "oracle" if mode else ""):
            table.setdefault(result.model, {})[result.category] = result.value
    return table
