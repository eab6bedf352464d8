"""Denominators and failures: a score is either complete or says it is partial.

Every metric in scores.json carries how many units it counted (``n_scored``,
also ``judged``) and the paper's denominator for the whole dataset config
(``n_expected``, also ``denominator``: all pairs, all queries, all CoRs, all
questions, all entities). A metric counted on fewer units than the config has,
for whatever reason (``eval --limit``, ``score --allow-partial``, judge or model
failures, a harness file covering a subset), is ``partial: true``: its
``overall`` is null and the number computed on the subset is kept as
``overall_partial``, so no reader takes a subset score for the real one.
``coverage_label`` is how every output (terminal, report, compare) says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from cogbench.numbers import fixed


def mark_coverage(
    metric: dict[str, Any], judged: int, scored: int, denominator: int, unit: str, unscored: int | None = None
) -> dict[str, Any]:
    """Annotate one metric: ``scored`` units had an output, ``judged`` of them got a verdict, of ``denominator``.

    ``unscored`` (constrained judge parsing only, judges/verdicts.py): units whose judge replied with no
    official label. They are neither failures nor missing: the number is over the judged units, with
    ``unscored`` and ``unscored_rate`` (their share of the units the judge answered, in percent) beside it."""
    metric["judged"] = judged
    metric["denominator"] = denominator
    metric["unit"] = unit
    metric["n_scored"] = judged
    metric["n_expected"] = denominator
    metric["failed"] = scored - judged - (unscored or 0)
    if unscored is not None:
        metric["unscored"] = unscored
        metric["unscored_rate"] = unscored_rate(judged, unscored)
    metric["partial"] = judged + (unscored or 0) < denominator
    if metric["partial"]:
        metric["overall_partial"] = metric["overall"]
        metric["overall"] = None
    return metric


def unscored_rate(judged: int, unscored: int) -> float:
    """Unscored units as a percent of the units the judge answered (judged + unscored); 0 when none."""
    return round(100 * unscored / (judged + unscored), 4) if judged + unscored else 0.0


def unscored_text(metric: dict[str, Any] | None) -> str:
    """``unscored 3/706 queries (0.4%)`` beside a number judged in constrained parsing; "" otherwise."""
    if not metric or "unscored" not in metric:
        return ""
    answered = metric["judged"] + metric["unscored"]
    return f"unscored {metric['unscored']}/{answered} {metric.get('unit', 'units')} ({fixed(metric['unscored_rate'])}%)"


def unscored_label(metric: dict[str, Any]) -> str:
    """``UNSCORED (3/706 queries, 0.4%: judge replies not an official label)``: a run label."""
    answered = metric["judged"] + metric["unscored"]
    return (
        f"UNSCORED ({metric['unscored']}/{answered} {metric.get('unit', 'units')}, {fixed(metric['unscored_rate'])}%: "
        "judge replies not an official label)"
    )


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


SCALE_LABEL = "exceeds the 0-100 scale"


def mark_scale(metric: dict[str, Any]) -> dict[str, Any]:
    """Mark a metric with a value or interval bound above 100 (official parsing counts a verdict of 2 as 2,
    as the authors' cognition_score.py sums it), so no reader takes it for a percentage."""
    interval = metric.get("interval") or {}
    bounds = [interval.get("overall"), *(interval.get("per_category") or {}).values()]
    values = [metric.get("overall"), metric.get("overall_partial"), *metric["per_category"].values()]
    values += [x for bound in bounds if bound for x in bound]
    if any(value is not None and value > 100 for value in values):
        metric["exceeds_scale"] = True
    return metric


def scale_text(value: float | None) -> str:
    """`` (exceeds the 0-100 scale)`` after a number above 100 that is shown without its metric's record."""
    return f" ({SCALE_LABEL})" if value is not None and value > 100 else ""


def coverage_label(metric: dict[str, Any] | None) -> str:
    """``PARTIAL (5/64 questions)`` for a metric counted on a subset of the config; "" when complete."""
    if not metric or not metric.get("partial"):
        return ""
    scored = metric.get("n_scored", metric.get("judged"))
    expected = metric.get("n_expected", metric.get("denominator"))
    return f"PARTIAL ({scored}/{expected} {metric.get('unit', 'units')})"


def shown_value(metric: dict[str, Any] | None, category: str | None = None) -> float | None:
    """The number to print: overall (or the subset's value when partial), or a category's value."""
    if not metric:
        return None
    if category is not None:
        return metric["per_category"].get(category)
    return metric["overall"] if metric["overall"] is not None else metric.get("overall_partial")


# The full release as the papers count it: CogBench Table 1 and Section 2 (251 images, 2577 questions),
# CODIS Section 3 (216 images, 706 queries = 353 pairs).
FULL_RELEASE = {"description": (251, 251), "vqa": (251, 2577), "codis": (216, 353)}  # (images, items)


def sample_label(scores: dict[str, Any]) -> str:
    """``SAMPLE (5 of 251 images)`` for a run on a build that is not the full release; "" for the full release."""
    images, items = FULL_RELEASE[scores["task"]]
    counts = scores["counts"]
    have_images, have_items = counts.get("dataset_images"), counts.get("dataset_items")
    if have_images is not None and have_images != images:
        return f"SAMPLE ({have_images} of {images} images)"
    if have_items is not None and have_items != items:
        return f"SAMPLE ({have_items} of {items} {'questions' if scores['task'] == 'vqa' else 'items'})"
    return ""


def truncation_labels(scores: dict[str, Any]) -> list[str]:
    """Above zero, each: ``TRUNCATED (3/706 replies, 0.4%: no answer before the token limit)``, ``UNCLOSED``
    (a think block never closed by a reply that did not stop at the limit), ``UNSCORED`` (replies cut at the
    limit that nobody can tell reasoning from answer in: not read) and ``CUT``. Shares are of all replies."""
    answers = scores.get("answers") or {}
    replies = answers.get("replies")
    labels = []
    for status, name, why in (
        ("truncated", "TRUNCATED", "no answer before the token limit"),
        ("unclosed", "UNCLOSED", "a think block never closed, not at the token limit: no answer"),
        ("unscored", "UNSCORED", "cut at the token limit, thinking unknown: not read, scored as no answer"),
    ):
        if answers.get(status):
            share = 100 * answers[status] / replies
            labels.append(f"{name} ({answers[status]}/{replies} replies, {fixed(share)}%: {why})")
    if answers.get("cut"):
        labels.append(f"CUT ({answers['cut']}/{replies} answers stopped at the token limit, scored as they stand)")
    return labels


def run_labels(scores: dict[str, Any]) -> list[str]:
    """Every coverage label of a run: PARTIAL of its partial metrics (once per distinct n/N), scores above 100,
    replies truncated or cut at the token limit, then SAMPLE."""
    labels = list(dict.fromkeys(coverage_label(m) for m in scores["metrics"].values()))
    over = [name for name, m in scores["metrics"].items() if m.get("exceeds_scale")]
    labels += [f"{', '.join(over)} {SCALE_LABEL} (a judge verdict of 2 counts 2)"] if over else []
    labels += truncation_labels(scores)
    labels += list(dict.fromkeys(unscored_label(m) for m in scores["metrics"].values() if m.get("unscored")))
    return [label for label in labels if label] + ([sample_label(scores)] if sample_label(scores) else [])
