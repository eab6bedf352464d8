"""``cogbench score``: predictions + dataset -> scores.json, details.jsonl, report.md.

This module wires a run together: the dataset's rows and the predictions
(checked against its ids), the judge (``judge_setup``: the judge options' rules,
the judge and its liveness check), the task's scorer (``task_scorers``), the
papers' further measurements (``analyses``), intervals and provenance, then the
run folder (``recording/run_files``). The options are ``options.ScoreOptions``; the
metrics live in ``metrics/`` (one module per paper metric), the judges in
``judges/`` and the file formats in ``formats/``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cogbench import __version__
from cogbench.dataset_builders.load import dataset_revision
from cogbench.dataset_builders.output import check_apart, check_option_file, claim_output
from cogbench.errors import CogbenchError, IncompleteRunError, UsageError, echoed
from cogbench.reference_eval.answers.reasoning import THINK_TAGS, Reply, final_answer
from cogbench.reference_eval.answers.reply_details import answers_block, attach_replies, reply_inputs
from cogbench.reference_eval.backends import batch_files
from cogbench.reference_eval.formats.harness import harness_provenance
from cogbench.reference_eval.formats.official import OfficialIds, read_any_predictions
from cogbench.reference_eval.harnesses.lmms_eval_tasks import task_docs
from cogbench.reference_eval.judges import panel as judge_panel
from cogbench.reference_eval.judges import vllm_judge
from cogbench.reference_eval.judges.llm import JudgeSpec, LLMJudge
from cogbench.reference_eval.metrics import intervals as metric_intervals
from cogbench.reference_eval.recording.run_files import RUN_FILES, write_run
from cogbench.reference_eval.run import provenance
from cogbench.reference_eval.run.completeness import failure_line, is_complete, mark_scale
from cogbench.reference_eval.run.request_files import check_request_folder
from cogbench.reference_eval.scoring import analyses, judge_setup, variant_scoring
from cogbench.reference_eval.scoring.options import ScoreOptions, default_score_dir
from cogbench.reference_eval.tasks.queries import ROTATIONS
from cogbench.reference_eval.tasks.scorers import SCORERS, add_rendered_prompts, score_vqa_circular
from cogbench.schemas.vocabulary import CODIS_CATEGORIES, COGBENCH_CATEGORIES, ID_COLUMN
from cogbench.validation.integrity import verified_rows

SCORES_FORMAT_VERSION = 1


def _dataset_rows(options: ScoreOptions) -> list[dict[str, Any]]:
    """The config's rows without images, class labels as their names."""
    return verified_rows(options.dataset, options.task, options.revision)


def _outputs_by_id(options: ScoreOptions, rows: list[dict[str, Any]]) -> tuple[dict[Any, str], dict[str, Any]]:
    """Predictions keyed like the task needs them, checked against the dataset's ids."""
    id_column = ID_COLUMN[options.task]
    if options.oracle:
        return {row[id_column]: row["description"] for row in rows}, {"predictions": "oracle"}
    ids = OfficialIds.from_rows(options.task, rows, task_docs(options.task, rows))
    predictions, shown = variant_scoring.split_variants(
        options, read_any_predictions(options.predictions, options.task, ids)
    )
    refuse_unflagged_circular(options, predictions)
    harness = harness_provenance(Path(options.predictions))
    queries = (1, 2) if options.task == "codis" else ROTATIONS if options.circular else None
    keyed = {((p.item_id, p.query) if queries else p.item_id): p for p in predictions}
    if queries:
        expected = {(row[id_column], query) for row in rows for query in queries}
    else:
        expected = {row[id_column] for row in rows}
    given = {key: p.output for key, p in keyed.items()}
    tags = options.think_tags or THINK_TAGS
    refuse_other_thinking(options, predictions)
    replies = {key: _reply(keyed[key], tags, options.thinking) for key in given if key in expected}
    missing = sorted(expected - set(given), key=str)
    extra = sorted(set(given) - expected, key=str)
    if (missing or extra) and not options.allow_partial:
        parts = []
        if missing:
            parts.append(f"{len(missing)} dataset item(s) have no prediction: {_show(missing)}")
        if extra:
            parts.append(f"{len(extra)} prediction(s) match no dataset item: {_show(extra)}")
        raise CogbenchError(f"{options.predictions}: " + "; ".join(parts) + " (use --allow-partial to score the rest)")
    models = sorted({p.model for p in predictions if p.model})
    info = {
        "prompt_templates": provenance.model_templates((p.prompt_id, p.prompt_sha256) for p in predictions),
        "prompt_ids": sorted({p.prompt_id for p in predictions if p.prompt_id}),
        "predictions": str(options.predictions),
        "model": ", ".join(models) or harness.get("model_name") or Path(options.predictions).stem,
        "harness": harness,
        "missing_predictions": [_id_text(key) for key in missing],
        "unknown_predictions": [_id_text(key) for key in extra],
        # Per query, the sha256 of the prompt text the model got; None where the file does not say
        # (the authors' and VLMEvalKit's files keep no prompt).
        "rendered_prompts": {key: keyed[key].rendered_prompt_sha256 or None for key in given if key in expected},
        "replies": replies,
    }
    info["variant_outputs"], info["variant_images"] = variant_scoring.variant_outputs(options, rows, shown)
    # What is scored is each reply's final answer (answers/reasoning.py), never its reasoning.
    return {key: reply.answer for key, (_, reply, _) in replies.items()}, info


def _reply(prediction, tags, stated: str = "auto") -> tuple[str, Reply, dict[str, Any]]:
    """(output as written, its split, the split's inputs as recorded) of one prediction; ``stated``:
    ``score --thinking``, for a prediction that records no setting."""
    return prediction.output, final_answer(prediction, tags, stated), reply_inputs(prediction, stated)


def refuse_other_thinking(options: ScoreOptions, predictions) -> None:
    """``score --thinking on|off`` against a file whose predictions record the other setting: one of them is wrong."""
    if options.thinking not in ("on", "off"):
        return
    for prediction in predictions:
        recorded = (prediction.generation or {}).get("thinking")
        if recorded in ("on", "off") and recorded != options.thinking:
            query = "" if prediction.query is None else f" query {prediction.query}"
            raise UsageError(
                f"{options.predictions}: item {echoed(prediction.item_id)}{query}: generation.thinking is "
                f"{recorded!r} but --thinking {options.thinking} was given; drop --thinking to score by the file's setting"
            )


def refuse_unflagged_circular(options: ScoreOptions, predictions) -> None:
    """Rotated predictions (``eval --circular``: query 0-3) read as plain ones would keep one rotation at random."""
    if options.task != "vqa" or options.circular:
        return
    rotated = [p for p in predictions if p.query is not None]
    if rotated:
        raise UsageError(
            f"{options.predictions}: {len(rotated)} prediction(s) carry a rotation (query {rotated[0].query} of "
            f"item {rotated[0].item_id!r}): these are circular predictions (four rotations per question); "
            "score them with --circular"
        )


def _id_text(key: Any) -> str:
    return f"{key[0]}#{key[1]}" if isinstance(key, tuple) else str(key)


def _show(keys: list[Any], limit: int = 10) -> str:
    shown = ", ".join(_id_text(key) for key in keys[:limit])
    return shown + (f", ... ({len(keys) - limit} more)" if len(keys) > limit else "")


def score_inputs(options: ScoreOptions) -> list[tuple[str, str | None]]:
    """What a scoring reads, by option: its output is apart from each (dataset_builders.output.check_apart). A
    predictions path that is no file is not read at all: the reader says so."""
    files = [("--predictions", options.predictions), ("--no-context-predictions", options.no_context_predictions)]
    reads = [(option, path) for option, path in files if path is not None and Path(path).is_file()]
    return [*reads, ("--dataset", options.dataset), *(("--read-responses", path) for path in options.read_responses)]


def run_scoring(options: ScoreOptions) -> dict[str, Any]:
    """Score one predictions file (or the oracle) and write the run folder; returns scores.json's content."""
    if not options.oracle and not options.predictions:
        raise UsageError("give --predictions FILE or --oracle")
    spec = judge_setup.judge_spec(options)
    if options.circular and options.task != "vqa":
        raise UsageError("--circular applies to --task vqa")
    options.out = options.out or default_score_dir(options.task, options.predictions)
    reads = score_inputs(options)
    if options.write_requests:
        check_request_folder(Path(options.write_requests), Path(options.out))
        check_apart(options.write_requests, "--write-requests", reads)
    claim_output(Path(options.out), "score", RUN_FILES, create=False, task=options.task, reads=reads)  # before any work
    if options.judge_cache:  # a cache that may not be written is refused before any request (and again on use)
        check_option_file(Path(options.judge_cache), "--judge-cache", shared=("score", "judge_cache.sqlite"))
    if spec.kind == "openai" and not options.read_responses:  # replies read from files send nothing
        judge_setup.check_judge_alive(options, spec)
    for m in judge_panel.llm_members(options):
        if m.kind == "openai":  # a vllm: member is weights on disk: it never retires
            judge_setup.check_judge_alive(options, JudgeSpec(m.kind, m.model, m.base_url, m.key_variable))
    rows = _dataset_rows(options)
    outputs, source = _outputs_by_id(options, rows)
    # Before any item is scored: a judge model whose weights did not load stops the run here (model_checks).
    offline_model = analyses.load_offline_model(options)
    judge = judge_setup.build_panel(options) if spec.kind == "panel" else judge_setup.llm_judge(options, spec)
    try:
        claim_output(Path(options.out), "score", RUN_FILES, task=options.task, reads=reads)
        result = (score_vqa_circular if options.circular else SCORERS[options.task])(rows, outputs, options, judge)
        add_rendered_prompts(options.task, result.details, source.get("rendered_prompts", {}))
        variants = variant_scoring.score_variants(options, rows, result, source, judge)
        attach_replies(options.task, result.details, source.get("replies", {}), options.reasoning_in_details)
        extra = analyses.run_analyses(
            options,
            rows,
            outputs,
            source.get("prompt_ids", []),
            None if spec.kind == "panel" else judge,  # the papers' further measurements take one judge
            result.details,
            result.metrics,
            result.counts,
            offline_model,
        )
        if isinstance(judge, LLMJudge) and judge.requests is not None:
            return judge_setup.write_judge_requests(options, judge, spec)
        if isinstance(judge, LLMJudge) and judge.responses is not None:
            batch_files.refuse_foreign(judge.responses, judge.asked)
        judge_info: dict[str, Any] = {"kind": spec.kind}
        if isinstance(judge, judge_panel.Panel):
            judge_info = judge.summary(options.judge_parsing)
        elif judge is not None:
            judge_info.update(judge.summary())
            judge_info["parsing"] = options.judge_parsing
            if options.judge_structured_outputs:
                judge_info["structured_outputs"] = "official labels"
            if result.parsing_comparison is not None:
                judge_info["parsing_comparison"] = result.parsing_comparison
    finally:
        if judge is not None:
            judge.close()
    engines = {n: j.identity for n, j in getattr(judge, "judges", {}).items() if isinstance(j, vllm_judge.VLLMJudge)}
    categories = CODIS_CATEGORIES if options.task == "codis" else COGBENCH_CATEGORIES
    intervals, interval_settings = metric_intervals.score_intervals(
        options.task, result.details, categories, options.resamples, options.seed
    )
    for name, interval in intervals.items():
        result.metrics[name]["interval"] = interval
    for metric in result.metrics.values():
        mark_scale(metric)
    scores = {
        "format_version": SCORES_FORMAT_VERSION,
        "task": options.task,
        "dataset": options.dataset,
        "dataset_revision": dataset_revision(options.dataset, options.revision),
        "model": "Oracle" if options.oracle else source["model"],
        "predictions": source["predictions"],
        "judge": judge_info,
        "metrics": result.metrics,
        "judge_agreement": result.judge_agreement,
        "intervals": interval_settings,
        **({"circular": True} if options.circular else {}),
        **({"no_image": True} if options.no_image else {}),
        **({"image_variants": variants} if variants else {}),
        "counts": {
            **result.counts,
            "dataset_items": len(rows),
            "dataset_images": len({row["image_id"] for row in rows}),
            "missing_predictions": source.get("missing_predictions", []),
            "unknown_predictions": source.get("unknown_predictions", []),
        },
    }
    answers = answers_block(options.task, result.details, options.think_tags or THINK_TAGS, options.thinking)
    if answers is not None:
        scores["answers"] = answers
    scores["complete"] = is_complete(scores)
    scores["provenance"] = {
        "cogbench_version": __version__,
        "dataset": provenance.dataset_provenance(options.dataset, options.task, options.revision),
        "prompt_templates": source.get("prompt_templates", []) + provenance.judge_templates(options.task, spec.kind),
        "judge": provenance.panel_provenance(judge.members, options.judge_parsing, judge_panel.PANEL_RULE, engines)
        if isinstance(judge, judge_panel.Panel)
        else provenance.judge_provenance(spec.kind, spec.model, spec.base_url, options.judge_parsing)
        | (judge.identity if isinstance(judge, vllm_judge.VLLMJudge) else {})
        | ({"structured_outputs": "official labels"} if options.judge_structured_outputs else {}),
        "models": provenance.with_libraries(
            {**result.models, **({offline_model.kind: offline_model.record} if offline_model else {})}
        ),
        **({"harness": source["harness"]} if source.get("harness") else {}),
        "thresholds": provenance.thresholds(options.task),
        "answers_sha256": provenance.answers_sha256(outputs),
    }
    if extra:
        scores["analyses"] = extra
    if result.panel is not None:
        scores["panel"] = result.panel
    write_run(Path(options.out), scores, result.details)
    if result.failure_errors:
        what = "judge verdicts (CoRs)" if options.task == "description" else "judge queries"
        total = result.counts.get("cors", result.counts.get("queries", 0)) + result.counts.get("variant_queries", 0)
        message = (
            f"{failure_line(what, len(result.failure_errors), total, result.failure_errors)}; "
            f"{Path(options.out) / 'scores.json'} is marked partial. "
            + (
                f"Write requests for exactly the missing ones with: {judge_setup.missing_judge_requests_command(options)}"
                if options.read_responses
                else "Run the same command again to retry only those"
            )
        )
        if not options.allow_failures:
            raise IncompleteRunError(message + ", or pass --allow-failures to accept a partial score")
        print(f"warning: {message}", file=sys.stderr)
    return scores
