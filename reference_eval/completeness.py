"""Denominators and failures: a score is either complete or says it is partial.

Every metric in scores.json carries how many units it counted (``judged``)
and the paper's denominator for the whole dataset (``denominator``: all pairs,
all queries, all CoRs, all questions, all entities). When judge or model
queries failed, the metric's ``overall`` is null and the number computed on
the judged subset is kept as ``overall_partial`` beside ``partial: true``, so
no reader takes a subset score for the real one.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable


def mark_coverage(metric: dict[str, Any], judged: int, scored: int, denominator: int, unit: str) -> dict[str, Any]:
    """Annotate one metric: ``scored`` units had an output, ``judged`` of them got a verdict."""
    metric["judged"] = judged
    metric["denominator"] = denominator
    metric["unit"] = unit
    metric["partial"] = judged < scored
    if metric["partial"]:
        metric["overall_partial"] = metric["overall"]
        metric["overall"] = None
    return metric


def is_complete(scores: dict[str, Any]) -> bool:
    """Every dataset item scored and every metric over all of them."""
    counts = scores["counts"]
    if counts.get("missing_predictions"):
        return False
    return not any(metric.get("partial") for metric in scores["metrics"].values())


def failure_line(what: str, failed: int, total: int, errors: Iterable[str]) -> str:
    """``706 of 706 judge queries failed (most common: HTTP 401, 706 times)``: one line for stderr."""
    common = Counter(_error_kind(error) for error in errors if error).most_common(1)
    most = f" (most common: {common[0][0]}, {common[0][1]} times)" if common else ""
    return f"{failed} of {total} {what} failed{most}"


def _error_kind(error: str) -> str:
    """An error without its per-item part, so equal causes count together."""
    kind = error.split(": ", 1)[1] if error.startswith("item ") and ": " in error else error
    return kind.split(": ", 1)[0] if kind.startswith("unusable reply") else kind
