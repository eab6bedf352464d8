"""Scoring the invariance probe (``score --image-variant``, ``eval --image-variant``).

The predictions on the images are scored as any run's; those on each variant are read and scored by the same
task scorer and judge, then kept on each item's line (``tasks.probes.add_image_variants``) with the sha256 of
the variant image each prediction records, so ``verify`` can re-derive both the scores and the images.
"""

from __future__ import annotations

from typing import Any

from cogbench.errors import CogbenchError, UsageError, echoed
from cogbench.reference_eval.answers.reasoning import THINK_TAGS, final_answer
from cogbench.reference_eval.scoring.options import ScoreOptions
from cogbench.reference_eval.tasks import image_variants
from cogbench.reference_eval.tasks.probes import add_image_variants, variant_counts, variant_failures
from cogbench.reference_eval.tasks.scorers import SCORERS, TaskResult
from cogbench.schemas.vocabulary import ID_COLUMN


def split_variants(options: ScoreOptions, predictions: list) -> tuple[list, dict[str, list]]:
    """(the predictions on the images, those on each variant); a variant not given to --image-variant is refused."""
    if options.image_variants and options.task not in image_variants.TASKS:
        raise UsageError("--image-variant applies to --task vqa or codis")
    own = [p for p in predictions if p.variant is None]
    shown: dict[str, list] = {name: [] for name in options.image_variants}
    for prediction in predictions:
        if prediction.variant is None:
            continue
        if prediction.variant not in shown:
            given = ",".join(options.image_variants) or "none"
            raise UsageError(
                f"{options.predictions}: item {echoed(prediction.item_id)}: field variant: "
                f"{echoed(prediction.variant)} is not among --image-variant ({given}); score these predictions "
                "with --image-variant NAME[,NAME...] naming every variant they hold"
            )
        shown[prediction.variant].append(prediction)
    return own, shown


def variant_outputs(
    options: ScoreOptions, rows: list[dict[str, Any]], shown: dict[str, list]
) -> tuple[dict[str, dict[Any, str]], dict[tuple[str, str], dict[str, Any]]]:
    """Each variant's final answers, keyed as the task's scorer reads them, and each (item, variant)'s image."""
    id_column = ID_COLUMN[options.task]
    if options.task == "codis":
        expected = {(row[id_column], query) for row in rows for query in (1, 2)}
    else:
        expected = {row[id_column] for row in rows}
    tags = options.think_tags or THINK_TAGS
    outputs: dict[str, dict[Any, str]] = {}
    images: dict[tuple[str, str], dict[str, Any]] = {}
    for name, predictions in shown.items():
        keyed = {((p.item_id, p.query) if options.task == "codis" else p.item_id): p for p in predictions}
        missing, extra = expected - set(keyed), set(keyed) - expected
        if (missing or extra) and not options.allow_partial:
            first = sorted(missing or extra, key=str)[0]
            raise CogbenchError(
                f"{options.predictions}: variant {name}: {len(missing)} dataset item(s) have no prediction and "
                f"{len(extra)} prediction(s) match no dataset item (first: {first}); use --allow-partial to score the rest"
            )
        outputs[name] = {
            key: final_answer(p, tags, options.thinking).answer for key, p in keyed.items() if key in expected
        }
        for p in predictions:
            images.setdefault((p.item_id, name), p.variant_image)
    return outputs, images


def versions(images: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    return sorted({str(image.get("pillow")) for image in images.values() if image.get("pillow")})


def score_variants(
    options: ScoreOptions, rows: list[dict[str, Any]], result: TaskResult, source: dict[str, Any], judge
) -> dict[str, Any] | None:
    """Score each variant's answers and attach them to ``result``; scores.json's ``image_variants`` record."""
    if not options.image_variants:
        return None
    outputs, images = source["variant_outputs"], source["variant_images"]
    scored = {name: SCORERS[options.task](rows, outputs[name], options, judge) for name in outputs}
    add_image_variants(
        options.task, result.details, result.metrics, {n: r.details for n, r in scored.items()}, images, len(rows)
    )
    if options.task == "codis":  # the variants' judge failures are the run's, counted apart from the image's
        constrained = judge is not None and options.judge_parsing == "constrained"  # as the scorer counts unscored
        result.counts.update(variant_counts(result.details, constrained))
        result.failure_errors += variant_failures(result.details)
    return {"names": list(options.image_variants), "pillow": versions(images)}
