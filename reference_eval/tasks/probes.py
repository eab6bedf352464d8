"""Bias probes: circular VQA scoring (``eval --circular``), the blind baseline's shared hits (``--no-image``)
and the invariance probe's per-item variants (``--image-variant``, scored by ``metrics.invariance``).

Circular: each question's four rotated answers (``tasks.rotate``) are read with
the VQA extractors against the options as shown, then pooled by
``metrics.circular``'s definitions. Blind: a run made without images that still
answers a question right shows the question can be answered from its text
alone; questions that several blind runs get right are listed for maintainers
(the CogBench authors filtered such questions out).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cogbench.reference_eval.judges.verdicts import UNSCORED
from cogbench.reference_eval.metrics import circular, invariance, vqa
from cogbench.reference_eval.metrics.aggregate import by_category
from cogbench.reference_eval.run.completeness import mark_coverage
from cogbench.reference_eval.tasks.queries import ROTATIONS, rotate
from cogbench.schemas.vocabulary import ANSWER_LETTERS, CHOICE_COLUMNS, CODIS_CATEGORIES, COGBENCH_CATEGORIES

CHOICE_METRICS = tuple(f"choice_{letter}" for letter in ANSWER_LETTERS)


def circular_vqa(rows: Sequence[dict[str, Any]], outputs: dict[tuple[str, int], str]):
    """(metrics, details, counts) of a circular VQA run; rows whose four answers are not all there are skipped."""
    details = []
    for row in rows:
        question = row["question_id"]
        if not all((question, r) in outputs for r in ROTATIONS):
            continue
        choices = [row[c] for c in CHOICE_COLUMNS]
        rotations = []
        for r in ROTATIONS:
            shown, answer = rotate(choices, ANSWER_LETTERS.index(row["answer"]), r)
            response = outputs[(question, r)]
            robust, official = vqa.extract_robust(response, shown), vqa.extract_official(response)
            right = ANSWER_LETTERS[answer]
            rotations.append(
                {
                    "rotation": r,
                    "answer": right,
                    "response": response,
                    "extracted": robust,
                    "extracted_official": official,
                    "correct": robust == right,
                    "correct_official": official == right,
                }
            )
        details.append(
            {
                "item_id": question,
                "image_id": row["image_id"],
                "category": row["category"],
                "answer": row["answer"],
                # Rotation 0 is the plain question: the paper's accuracy, comparable with a plain run.
                "correct": rotations[0]["correct"],
                "correct_official": rotations[0]["correct_official"],
                "correct_all": all(x["correct"] for x in rotations),
                "answer_changed": circular.answer_changed({x["rotation"]: x["extracted"] for x in rotations}),
                "rotations": rotations,
            }
        )
    responses = [(d["category"], x["extracted"]) for d in details for x in d["rotations"]]
    metrics = {
        "accuracy": by_category([(d["category"], float(d["correct"])) for d in details], COGBENCH_CATEGORIES),
        "accuracy_official": by_category(
            [(d["category"], float(d["correct_official"])) for d in details], COGBENCH_CATEGORIES
        ),
        "accuracy_circular": by_category(
            [(d["category"], float(d["correct_all"])) for d in details], COGBENCH_CATEGORIES
        ),
        "answer_changed": by_category(
            [(d["category"], float(d["answer_changed"])) for d in details], COGBENCH_CATEGORIES
        ),
        **{
            f"choice_{letter}": by_category([(c, float(x == letter)) for c, x in responses], COGBENCH_CATEGORIES)
            for letter in ANSWER_LETTERS
        },
    }
    counts = {
        "items": len(details),
        "queries": len(responses),
        "unparseable": sum(x is None for _, x in responses),
        "unparseable_official": sum(x["extracted_official"] is None for d in details for x in d["rotations"]),
    }
    return metrics, details, counts


def blind_hits(details_per_run: dict[str, Iterable[dict[str, Any]]], at_least: int = 2) -> list[dict[str, Any]]:
    """Items answered right by ``at_least`` of the blind runs given (run label -> details lines)."""
    right: dict[str, list[str]] = {}
    info: dict[str, dict[str, Any]] = {}
    for label, details in details_per_run.items():
        for detail in details:
            if _answered_right(detail):
                right.setdefault(detail["item_id"], []).append(label)
                info[detail["item_id"]] = detail
    rows = [
        {"item_id": item, "category": info[item].get("category", ""), "runs": labels}
        for item, labels in right.items()
        if len(labels) >= at_least
    ]
    return sorted(rows, key=lambda row: (-len(row["runs"]), str(row["item_id"])))


def _answered_right(detail: dict[str, Any]) -> bool:
    """VQA: the robust extractor's answer; CODIS: both queries of the pair (Acc_p)."""
    if "queries" in detail:
        return all(q["right"] for q in detail["queries"])
    return bool(detail.get("correct"))


def choice_shares(metrics: dict[str, Any]) -> dict[str, Any] | None:
    """Each letter's overall share and interval, when the run is circular."""
    if not all(name in metrics for name in CHOICE_METRICS):
        return None
    return {name[-1]: metrics[name] for name in CHOICE_METRICS}


# --- the invariance probe (eval --image-variant) ------------------------------------------------


def variant_entry(task: str, name: str, detail: dict[str, Any], image: dict[str, Any]) -> dict[str, Any]:
    """What an item's line keeps of its answer under one variant: the image it saw, the answer and its verdict."""
    entry: dict[str, Any] = {"variant": name, "image_sha256": image.get("sha256"), "pillow": image.get("pillow")}
    if task == "vqa":
        entry.update(response=detail["response"], extracted=detail["extracted"], correct=detail["correct"])
    else:
        queries = detail["queries"]
        entry.update(
            outputs=[q.get("output") for q in queries],
            rights=[q["right"] for q in queries],
            judge_errors=[q.get("judge_error") for q in queries],  # why a verdict is missing (a judge failure)
        )
    return entry


def add_image_variants(
    task: str,
    details: list[dict[str, Any]],
    metrics: dict[str, Any],
    scored: dict[str, list[dict[str, Any]]],
    images: dict[tuple[str, str], dict[str, Any]],
    total: int,
) -> None:
    """Each item's ``variants`` (from ``scored``: variant -> that variant's details lines, scored as the task's
    own), then flip rate, invariant score and each variant's score (``metrics.invariance``) into ``metrics``."""
    categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
    by_item = {name: {d["item_id"]: d for d in lines} for name, lines in scored.items()}
    for detail in details:
        item = detail["item_id"]
        detail["variants"] = [
            variant_entry(task, name, found[item], images.get((item, name), {}))
            for name, found in by_item.items()
            if item in found
        ]
    for name, units in invariance.units(task, details).items():
        metric = by_category([(category, value) for _, category, value in units], categories)
        metrics[name] = mark_coverage(
            metric, len(units), len(units), total, "pairs" if task == "codis" else "questions"
        )


def _verdicts(details: list[dict[str, Any]]) -> list[tuple[bool | None, str | None]]:
    """(verdict, judge error) of each CODIS query asked on an image variant."""
    entries = [e for d in details for e in d.get("variants") or []]
    return [(r, error) for e in entries for r, error in zip(e["rights"], e.get("judge_errors") or [None] * 2)]


def variant_counts(details: list[dict[str, Any]], constrained: bool) -> dict[str, int]:
    """CODIS's judge queries on image variants and their failures (a verdict missing, not unscored), from the
    items' entries: counted apart from the image's own (``counts.judge_failures``); none without variants."""
    given = _verdicts(details)
    if not given:
        return {}
    counts = {
        "variant_queries": len(given),
        "variant_judge_failures": sum(right is None and error != UNSCORED for right, error in given),
    }
    if constrained:
        counts["variant_unscored"] = sum(right is None and error == UNSCORED for right, error in given)
    return counts


def variant_failures(details: list[dict[str, Any]]) -> list[str]:
    """The judge errors of the variants' failed queries, to count among the run's failures."""
    return [
        error or "reply gives no verdict" for right, error in _verdicts(details) if right is None and error != UNSCORED
    ]
