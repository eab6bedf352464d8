"""``cogbench score``: predictions + dataset -> scores.json, details.jsonl, report.md.

This module wires things together: the metrics live in ``metrics/`` (one module
per paper metric), the judges in ``judges/``, the file formats in ``formats/``
and the report layout in ``report``.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench import __version__
from cogbench.dataset_builders.load import dataset_revision, load_config
from cogbench.errors import CogbenchError, IncompleteRunError, UsageError
from cogbench.reference_eval import analyses, provenance
from cogbench.reference_eval.backends.openai_api import ChatSettings
from cogbench.reference_eval.completeness import failure_line, is_complete, mark_coverage
from cogbench.reference_eval.formats.official import OfficialIds, read_any_predictions
from cogbench.reference_eval.judges import codis as codis_judge
from cogbench.reference_eval.judges import cognition as cognition_judge
from cogbench.reference_eval.judges.llm import JudgeSpec, LLMJudge
from cogbench.reference_eval.metrics import codis as codis_metrics
from cogbench.reference_eval.metrics import cognition as cognition_metrics
from cogbench.reference_eval.metrics import intervals as metric_intervals
from cogbench.reference_eval.metrics import recognition, vqa
from cogbench.reference_eval.metrics.aggregate import by_category, percent
from cogbench.reference_eval.probes import circular_vqa
from cogbench.reference_eval.reports.run import interval_summary, write_run
from cogbench.reference_eval.reports.summary import render_summary
from cogbench.reference_eval.tasks import ROTATIONS
from cogbench.schemas.features import CHOICE_COLUMNS, CODIS_CATEGORIES, COGBENCH_CATEGORIES, ID_COLUMN

SCORES_FORMAT_VERSION = 1


@dataclass
class ScoreOptions:
    """Everything a scoring run needs besides the data; built from the command line or by tests."""

    task: str
    dataset: str
    predictions: str | None = None  # None with oracle=True
    oracle: bool = False
    revision: str | None = None
    judge: str | None = None  # rule | none | openai:MODEL; None = the task's default
    judge_base_url: str | None = None
    judge_concurrency: int = 64  # ceiling of the adaptive concurrency
    judge_parsing: str = "tolerant"  # tolerant | official (judges/verdicts.py)
    judge_max_attempts: int = 6
    judge_timeout: float = 120.0
    judge_backoff: float = 1.0
    judge_cache: str | None = None
    spacy_model: str = "en_core_web_sm"
    embedder: str = "sentence-transformers/all-mpnet-base-v2"
    embed_batch_size: int = 64
    out: str = "runs/score"
    allow_partial: bool = False
    allow_failures: bool = False
    resamples: int = metric_intervals.DEFAULT_RESAMPLES  # bootstrap resamples of the confidence intervals
    seed: int = metric_intervals.DEFAULT_SEED
    circular: bool = False  # vqa predictions of `eval --circular`: four rotations per question
    no_image: bool = False  # predictions of `eval --no-image` (recorded, scored as usual)
    # The papers' further measurements (analyses.py).
    metrics: tuple[str, ...] = ()  # "captioning" (description)
    offline_judge: str | None = None  # rouge | bertscore | nli beside an LLM judge (description)
    offline_threshold: float | None = None
    offline_model: str | None = None
    offline_layers: int | None = None
    offline_device: str | None = None
    no_context_predictions: str | None = None  # codis: output variability
    word_pairs: str | None = None  # codis: answer bias, "up/down,morning/afternoon"


@dataclass
class TaskResult:
    """What a task scorer hands back: metrics in the scores.json shape, per-item details, counts."""

    metrics: dict[str, dict[str, Any]]
    details: list[dict[str, Any]]
    counts: dict[str, Any] = field(default_factory=dict)
    judge_agreement: float | None = None
    parsing_comparison: dict[str, Any] | None = None  # the other parsing mode's numbers, when they differ
    failure_errors: list[str] = field(default_factory=list)  # one per unit without a verdict
    models: dict[str, Any] = field(default_factory=dict)  # models the metrics used (spaCy, embedder), for provenance


def score_from_args(args: argparse.Namespace) -> int:
    names = ScoreOptions.__dataclass_fields__
    options = ScoreOptions(**{k: v for k, v in vars(args).items() if k in names})
    scores = run_scoring(options)
    print(render_summary(scores, Path(options.out)))
    print(interval_summary(scores))
    return 0


def _judge_spec(options: ScoreOptions) -> JudgeSpec:
    analyses.check_options(options)
    if options.judge in analyses.offline_judges.OFFLINE_JUDGES:
        return JudgeSpec(options.judge)  # an offline Cognition judge (analyses.run_offline_judge)
    spec = JudgeSpec.parse(options.judge or ("rule" if options.task == "codis" else "none"))
    if spec.kind == "rule" and options.task != "codis":
        raise UsageError("--judge rule is the offline CODIS judge; use none or openai:MODEL for this task")
    if spec.kind == "openai" and options.task == "vqa":
        raise UsageError("VQA accuracy needs no judge; leave --judge out")
    if options.oracle and options.task != "description":
        raise UsageError("--oracle scores the annotated descriptions; it applies to --task description")
    return spec


def _dataset_rows(options: ScoreOptions) -> list[dict[str, Any]]:
    """The config's rows without images, class labels as their names."""
    import datasets

    dataset = load_config(options.dataset, options.task, options.revision)
    dataset = dataset.remove_columns([c for c in dataset.column_names if c == "image"])
    label_columns = {n: f for n, f in dataset.features.items() if isinstance(f, datasets.ClassLabel)}
    rows = dataset.to_list()
    for row in rows:
        for name, feature in label_columns.items():
            row[name] = feature.int2str(row[name])
    return rows


def _outputs_by_id(options: ScoreOptions, rows: list[dict[str, Any]]) -> tuple[dict[Any, str], dict[str, Any]]:
    """Predictions keyed like the task needs them, checked against the dataset's ids."""
    id_column = ID_COLUMN[options.task]
    if options.oracle:
        return {row[id_column]: row["description"] for row in rows}, {"predictions": "oracle"}
    predictions = read_any_predictions(options.predictions, options.task, OfficialIds.from_rows(options.task, rows))
    queries = (1, 2) if options.task == "codis" else ROTATIONS if options.circular else None
    if queries:
        expected = {(row[id_column], query) for row in rows for query in queries}
        given = {(p.item_id, p.query): p.output for p in predictions}
    else:
        expected = {row[id_column] for row in rows}
        given = {p.item_id: p.output for p in predictions}
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
        "model": ", ".join(models) or Path(options.predictions).stem,
        "missing_predictions": [_id_text(key) for key in missing],
        "unknown_predictions": [_id_text(key) for key in extra],
    }
    return {key: given[key] for key in given if key in expected}, info


def _id_text(key: Any) -> str:
    return f"{key[0]}#{key[1]}" if isinstance(key, tuple) else str(key)


def _show(keys: list[Any], limit: int = 10) -> str:
    shown = ", ".join(_id_text(key) for key in keys[:limit])
    return shown + (f", ... ({len(keys) - limit} more)" if len(keys) > limit else "")


def _llm_judge(options: ScoreOptions, spec: JudgeSpec) -> LLMJudge | None:
    if spec.kind != "openai":
        return None
    settings = ChatSettings(
        model=spec.model,
        base_url=options.judge_base_url,
        temperature=0.0,
        concurrency=options.judge_concurrency,
        max_attempts=options.judge_max_attempts,
        timeout_seconds=options.judge_timeout,
        backoff_seconds=options.judge_backoff,
    )
    cache = options.judge_cache or os.path.join(options.out, "judge_cache.sqlite")
    return LLMJudge(settings, cache)


def score_description(all_rows, outputs, options: ScoreOptions, judge: LLMJudge | None) -> TaskResult:
    rows = [row for row in all_rows if row["image_id"] in outputs]
    descriptions = [outputs[row["image_id"]] for row in rows]
    nlp = recognition.load_noun_tagger(options.spacy_model)
    embedder = recognition.load_embedder(options.embedder)
    models = {"spacy": provenance.spacy_provenance(nlp, options.spacy_model),
              "embedder": provenance.embedder_provenance(options.embedder)}
    matches = recognition.recognition_matches(
        nlp, embedder, [row["entities"] for row in rows], descriptions, options.embed_batch_size
    )
    scores = recognition.recognition_scores(matches)
    metrics = {name: {"overall": value, "per_category": {}} for name, value in scores.items()}
    details = [
        {
            "item_id": row["image_id"],
            "recognition": {
                "annotated": len(image_matches),
                "recognized": sum(m.recognized for m in image_matches),
                "matches": [m.__dict__ for m in image_matches],
            },
        }
        for row, image_matches in zip(rows, matches)
    ]
    counts: dict[str, Any] = {
        "items": len(rows),
        "entities": sum(len(m) for m in matches),
        "entities_recognized": sum(x.recognized for m in matches for x in m),
    }
    entity_total = sum(len(row["entities"]) for row in all_rows)
    for name in scores:
        mark_coverage(metrics[name], counts["entities"], counts["entities"], entity_total, "entities")
    result = TaskResult(metrics, details, counts, models=models)
    if judge is not None:
        _judge_cognition(judge, rows, descriptions, all_rows, options, result)
    return result


def _judge_replies(judge: LLMJudge, prompts: list[str], parse, mode: str):
    """Per prompt: the verdict in ``mode``, the verdict in the other mode, and the error (None if judged)."""
    other = "official" if mode == "tolerant" else "tolerant"
    replies = judge.ask(prompts, accept=lambda prompt, reply: parse(prompt, reply, mode) is not None)
    results = []
    for prompt, reply in zip(prompts, replies):
        text = reply.text if reply.text is not None else reply.unusable_text
        chosen = parse(prompt, reply.text, mode) if reply.text is not None else None
        results.append((chosen, parse(prompt, text, other) if text is not None else None, reply.error))
    return other, results


def _judge_cognition(judge, rows, descriptions, all_rows, options: ScoreOptions, result: TaskResult) -> None:
    """Cognition Score (CogBench Section 3.2.1) with the LLM judge, added to ``result``."""
    calls = [c for row, text in zip(rows, descriptions) for c in cognition_judge.judge_calls(row["image_id"], row["cors"], text)]
    sizes = {c.prompt: len(c.items) for c in calls}
    other, replies = _judge_replies(
        judge, [c.prompt for c in calls],
        lambda prompt, reply, mode: cognition_judge.parse_verdicts(reply, sizes[prompt], mode), options.judge_parsing,
    )
    verdicts: list[tuple[cognition_metrics.CorItem, int | None]] = []
    alternative: list[tuple[cognition_metrics.CorItem, int | None]] = []
    per_image: dict[str, list[dict[str, Any]]] = {}
    for call, (parsed, parsed_other, error) in zip(calls, replies):
        error = error or (None if parsed is not None else "reply does not give N. [0|1] for every key point")
        for position, item in enumerate(call.items):
            verdict = parsed[position] if parsed is not None else None
            verdicts.append((item, verdict))
            alternative.append((item, parsed_other[position] if parsed_other is not None else None))
            if error:
                result.failure_errors.append(error)
            per_image.setdefault(call.image_id, []).append(
                {"category": item.category, "index": item.index, "figure": call.prompt_figure,
                 "key_point": item.key_point, "verdict": verdict, "judge_error": error}
            )
    counts = result.counts
    counts["cors"] = len(verdicts)
    counts["cors_judged"] = sum(v is not None for _, v in verdicts)
    counts["judge_failures"] = sum(v is None for _, v in verdicts)
    counts["cors_per_category"] = {c: sum(i.category == c for i, _ in verdicts) for c in COGBENCH_CATEGORIES}
    all_cors = sum(len(cors or []) for row in all_rows for cors in row["cors"].values())
    result.metrics["cognition"] = mark_coverage(
        cognition_metrics.cognition_scores(verdicts), counts["cors_judged"], len(verdicts), all_cors, "CoRs"
    )
    for detail in result.details:
        detail["cognition"] = per_image.get(detail["item_id"], [])
    differing = sum(a != b for (_, a), (_, b) in zip(verdicts, alternative))
    if differing:
        result.parsing_comparison = {
            "mode": other, "differing_verdicts": differing,
            "metrics": {"cognition": cognition_metrics.cognition_scores(alternative)["overall"]},
        }


def score_vqa(rows, outputs, options: ScoreOptions, judge: LLMJudge | None) -> TaskResult:
    robust_rows, official_rows, details = [], [], []
    for row in rows:
        if row["question_id"] not in outputs:
            continue
        response = outputs[row["question_id"]]
        official = vqa.extract_official(response)
        robust = vqa.extract_robust(response, [row[c] for c in CHOICE_COLUMNS])
        official_rows.append((row["category"], official == row["answer"]))
        robust_rows.append((row["category"], robust == row["answer"]))
        details.append({"item_id": row["question_id"], "image_id": row["image_id"], "category": row["category"], "answer": row["answer"],
                        "response": response, "extracted": robust, "extracted_official": official,
                        "correct": robust == row["answer"], "correct_official": official == row["answer"]})
    metrics = {
        "accuracy": by_category(robust_rows, COGBENCH_CATEGORIES),
        "accuracy_official": by_category(official_rows, COGBENCH_CATEGORIES),
    }
    counts = {
        "items": len(details),
        "unparseable": sum(d["extracted"] is None for d in details),
        "unparseable_official": sum(d["extracted_official"] is None for d in details),
    }
    for metric in metrics.values():
        mark_coverage(metric, len(details), len(details), len(rows), "questions")
    return TaskResult(metrics, details, counts)


def score_codis(all_rows, outputs, options: ScoreOptions, judge: LLMJudge | None) -> TaskResult:
    rows = [row for row in all_rows if (row["id"], 1) in outputs and (row["id"], 2) in outputs]
    queries = [(row, q) for row in rows for q in (1, 2)]
    rule = {(row["id"], q): codis_judge.rule_verdict(outputs[(row["id"], q)], row[f"answer_{q}"], row[f"answer_{3 - q}"])
            for row, q in queries}
    verdicts: dict[tuple[str, int], bool | None] = dict(rule)
    errors: dict[tuple[str, int], str | None] = {}
    agreement = comparison = None
    if judge is not None:
        prompts = [codis_judge.judge_prompt(row["question"], row[f"answer_{q}"], outputs[(row["id"], q)]) for row, q in queries]
        other, replies = _judge_replies(
            judge, prompts, lambda prompt, reply, mode: codis_judge.parse_verdict(reply, mode), options.judge_parsing
        )
        alternative = {}
        for (row, q), (verdict, verdict_other, error) in zip(queries, replies):
            key = (row["id"], q)
            verdicts[key], alternative[key] = verdict, verdict_other
            errors[key] = error or (None if verdict is not None else "reply gives no verdict")
        both = [key for key in verdicts if verdicts[key] is not None]
        agreement = percent(sum(verdicts[key] == rule[key] for key in both), len(both))
        differing = sum(verdicts[key] != alternative[key] for key in verdicts)
        if differing:
            other_metrics = _codis_metrics(rows, alternative, outputs)
            comparison = {"mode": other, "differing_verdicts": differing,
                          "metrics": {name: other_metrics[name]["overall"] for name in ("acc_p", "acc_q")}}
    metrics = _codis_metrics(rows, verdicts, outputs)
    details = [{
        "item_id": row["id"], "image_id": row["image_id"], "category": row["category"],
        "outputs_differ": codis_metrics.outputs_differ(outputs[(row["id"], 1)], outputs[(row["id"], 2)]),
        "queries": [
            {"query": q, "answer": row[f"answer_{q}"], "output": outputs[(row["id"], q)],
             "final_answer": codis_metrics.final_answer(outputs[(row["id"], q)]), "right": verdicts[(row["id"], q)],
             "rule_right": rule[(row["id"], q)], "judge_error": errors.get((row["id"], q))}
            for q in (1, 2)
        ],
    } for row in rows]
    pairs_judged = sum(verdicts[(r["id"], 1)] is not None and verdicts[(r["id"], 2)] is not None for r in rows)
    queries_judged = sum(v is not None for v in verdicts.values())
    mark_coverage(metrics["acc_p"], pairs_judged, len(rows), len(all_rows), "pairs")
    mark_coverage(metrics["acc_q"], queries_judged, len(queries), 2 * len(all_rows), "queries")
    mark_coverage(metrics["context_awareness"], len(rows), len(rows), len(all_rows), "pairs")
    counts = {"items": len(rows), "queries": len(queries), "judge_failures": len(queries) - queries_judged,
              "pairs_judged": pairs_judged, "queries_judged": queries_judged}
    result = TaskResult(metrics, details, counts, agreement, comparison)
    result.failure_errors = [error for error in errors.values() if error]
    return result


def _codis_metrics(rows, verdicts, outputs) -> dict[str, dict[str, Any]]:
    """Acc_p, Acc_q (CODIS Section 3.3) over the judged pairs/queries, context awareness (Section 4.2)."""
    pair_rows, query_rows, aware_rows = [], [], []
    for row in rows:
        v1, v2 = verdicts[(row["id"], 1)], verdicts[(row["id"], 2)]
        query_rows += [(row["category"], float(v)) for v in (v1, v2) if v is not None]
        if v1 is not None and v2 is not None:
            pair_rows.append((row["category"], float(v1 and v2)))
        differ = codis_metrics.outputs_differ(outputs[(row["id"], 1)], outputs[(row["id"], 2)])
        aware_rows.append((row["category"], float(differ)))
    return {
        "acc_p": by_category(pair_rows, CODIS_CATEGORIES),
        "acc_q": by_category(query_rows, CODIS_CATEGORIES),
        "context_awareness": by_category(aware_rows, CODIS_CATEGORIES),
    }


def score_vqa_circular(rows, outputs, options: ScoreOptions, judge: LLMJudge | None) -> TaskResult:
    return TaskResult(*circular_vqa(rows, outputs))


SCORERS = {"description": score_description, "vqa": score_vqa, "codis": score_codis}


def run_scoring(options: ScoreOptions) -> dict[str, Any]:
    """Score one predictions file (or the oracle) and write the run folder; returns scores.json's content."""
    if not options.oracle and not options.predictions:
        raise UsageError("give --predictions FILE or --oracle")
    spec = _judge_spec(options)
    if options.circular and options.task != "vqa":
        raise UsageError("--circular applies to --task vqa")
    rows = _dataset_rows(options)
    outputs, source = _outputs_by_id(options, rows)
    judge = _llm_judge(options, spec)
    try:
        result = (score_vqa_circular if options.circular else SCORERS[options.task])(rows, outputs, options, judge)
        extra = analyses.run_analyses(options, rows, outputs, source.get("prompt_ids", []), judge,
                                      result.details, result.metrics, result.counts)
        judge_info: dict[str, Any] = {"kind": spec.kind}
        if judge is not None:
            judge_info.update(judge.summary())
            judge_info["parsing"] = options.judge_parsing
            if result.parsing_comparison is not None:
                judge_info["parsing_comparison"] = result.parsing_comparison
    finally:
        if judge is not None:
            judge.close()
    categories = CODIS_CATEGORIES if options.task == "codis" else COGBENCH_CATEGORIES
    intervals, interval_settings = metric_intervals.score_intervals(
        options.task, result.details, categories, options.resamples, options.seed
    )
    for name, interval in intervals.items():
        result.metrics[name]["interval"] = interval
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
        "counts": {
            **result.counts,
            "dataset_items": len(rows),
            "missing_predictions": source.get("missing_predictions", []),
            "unknown_predictions": source.get("unknown_predictions", []),
        },
    }
    scores["complete"] = is_complete(scores)
    scores["provenance"] = {
        "cogbench_version": __version__,
        "dataset": provenance.dataset_provenance(options.dataset, options.task, options.revision),
        "prompt_templates": source.get("prompt_templates", []) + provenance.judge_templates(options.task, spec.kind),
        "judge": provenance.judge_provenance(spec.kind, spec.model, options.judge_base_url, options.judge_parsing),
        "models": result.models,
        "thresholds": provenance.thresholds(options.task),
    }
    if extra:
        scores["analyses"] = extra
    write_run(Path(options.out), scores, result.details)
    if result.failure_errors:
        what = "judge verdicts (CoRs)" if options.task == "description" else "judge queries"
        total = result.counts.get("cors", result.counts.get("queries", 0))
        message = (
            f"{failure_line(what, len(result.failure_errors), total, result.failure_errors)}; "
            f"{Path(options.out) / 'scores.json'} is marked partial. Run the same command again to retry only those"
        )
        if not options.allow_failures:
            raise IncompleteRunError(message + ", or pass --allow-failures to accept a partial score")
        print(f"warning: {message}", file=sys.stderr)
    return scores
