"""Percentages overall and per category: the shape every metric takes in scores.json."""

from __future__ import annotations

from collections.abc import Sequence


def percent(hits: float, total: int) -> float | None:
    """Percent 0-100, or None when there is nothing to count (shown as "-")."""
    return 100.0 * hits / total if total else None


def by_category(rows: Sequence[tuple[str, float]], categories: Sequence[str]) -> dict:
    """``{"overall": %, "per_category": {name: %}}`` from (category, value 0/1) pairs."""
    return {
        "overall": percent(sum(value for _, value in rows), len(rows)),
        "per_category": {
            name: percent(sum(v for c, v in rows if c == name), sum(c == name for c, _ in rows)) for name in categories
        },
    }
