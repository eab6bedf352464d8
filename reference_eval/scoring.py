"""``cogbench score``: predictions + dataset -> scores.json, details.jsonl, report.md.

This module wires things together: the metrics live in ``metrics/`` (one module
per paper metric), the judges in ``judges/``, the file formats in ``formats/``
and the report layout in ``report``.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.load import dataset_revision, load_config
from cogbench.errors import CogbenchError, UsageError
from cogbench.reference_eval import analyses
from cogbench.reference_eval.backends.openai_api import ChatSettings
from cogbench.reference_eval.formats.official import OfficialIds, read_any_predictions
from cogbench.reference_eval.judges import codis as codis_judge
from cogbench.reference_eval.judges import cognition as cognition_judge
from cogbench.reference_eval.judges.llm import JudgeSpec, LLMJudge
from cogbench.reference_eval.metrics import codis as codis_metrics
from cogbench.reference_eval.metrics import cognition as cognition_metrics
from cogbench.reference_eval.metrics import recognition, vqa
from cogbench.reference_eval.metrics.aggregate import by_category, percent
from cogbench.reference_eval.report import write_run
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
    judge_concurrency: int = 8
    judge_max_attempts: int = 6
    judge_timeout: float = 120.0
    judge_backoff: float = 1.0
    judge_cache: str | None = None
    spacy_model: str = "en_core_web_sm"
    embedder: str = "sentence-transformers/all-mpnet-base-v2"
    embed_batch_size: int = 64
    out: str = "runs/score"
    allow_partial: bool = False
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


def score_from_args(args: argparse.Namespace) -> int:
    names = ScoreOptions.__dataclass_fields__
    options = ScoreOptions(**{k: v for k, v in vars(args).items() if k in names})
    scores = run_scoring(options)
    print(json.dumps({name: value["overall"] for name, value in scores["metrics"].items()}, indent=None))
    print(f"wrote {Path(options.out) / 'scores.json'}, details.jsonl and report.md")
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
    if options.task == "codis":
        expected = {(row[id_column], query) for row in rows for query in (1, 2)}
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


def score_description(rows, outputs, options: ScoreOptions, judge: LLMJudge | None) -> TaskResult:
    rows = [row for row in rows if row["image_id"] in outputs]
    descriptions = [outputs[row["image_id"]] for row in rows]
    nlp = recognition.load_noun_tagger(options.spacy_model)
    embedder = recognition.load_embedder(options.embedder)
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
    if judge is not None:
        calls = [c for row, text in zip(rows, descriptions) for c in cognition_judge.judge_calls(row["image_id"], row["cors"], text)]
        sizes = {c.prompt: len(c.items) for c in calls}
        replies = judge.ask(
            [c.prompt for c in calls],
            accept=lambda prompt, reply: cognition_judge.parse_verdicts(reply, sizes[prompt]) is not None,
        )
        verdicts: list[tuple[cognition_metrics.CorItem, int | None]] = []
        per_image: dict[str, list[dict[str, Any]]] = {}
        for call, reply in zip(calls, replies):
            parsed = cognition_judge.parse_verdicts(reply.text, len(call.items)) if reply.text is not None else None
            error = reply.error or (None if parsed is not None else "reply does not give N. [0|1] for every key point")
            for position, item in enumerate(call.items):
                verdict = parsed[position] if parsed is not None else None
                verdicts.append((item, verdict))
                per_image.setdefault(call.image_id, []).append(
                    {"category": item.category, "index": item.index, "figure": call.prompt_figure,
                     "key_point": item.key_point, "verdict": verdict, "judge_error": error}
                )
        metrics["cognition"] = cognition_metrics.cognition_scores(verdicts)
        for detail in details:
            detail["cognition"] = per_image.get(detail["item_id"], [])
        counts["cors"] = len(verdicts)
        counts["cors_judged"] = sum(v is not None for _, v in verdicts)
        counts["judge_failures"] = sum(v is None for _, v in verdicts)
        counts["cors_per_category"] = {c: sum(i.category == c for i, _ in verdicts) for c in COGBENCH_CATEGORIES}
    return TaskResult(metrics, details, counts)


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
        details.append({"item_id": row["question_id"], "category": row["category"], "answer": row["answer"],
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
    return TaskResult(metrics, details, counts)


def score_codis(rows, outputs, options: ScoreOptions, judge: LLMJudge | None) -> TaskResult:
    rows = [row for row in rows if (row["id"], 1) in outputs and (row["id"], 2) in outputs]
    queries = [(row, q) for row in rows for q in (1, 2)]
    rule = {(row["id"], q): codis_judge.rule_verdict(outputs[(row["id"], q)], row[f"answer_{q}"], row[f"answer_{3 - q}"])
            for row, q in queries}
    verdicts: dict[tuple[str, int], bool | None] = dict(rule)
    errors: dict[tuple[str, int], str | None] = {}
    agreement = None
    if judge is not None:
        prompts = [codis_judge.judge_prompt(row["question"], row[f"answer_{q}"], outputs[(row["id"], q)]) for row, q in queries]
        replies = judge.ask(prompts, accept=lambda prompt, reply: codis_judge.parse_verdict(reply) is not None)
        for (row, q), reply in zip(queries, replies):
            key = (row["id"], q)
            verdicts[key] = codis_judge.parse_verdict(reply.text) if reply.text is not None else None
            errors[key] = reply.error
        both = [key for key in verdicts if verdicts[key] is not None]
        agreement = percent(sum(verdicts[key] == rule[key] for key in both), len(both))
    pair_rows, query_rows, aware_rows, details = [], [], [], []
    for row in rows:
        v1, v2 = verdicts[(row["id"], 1)], verdicts[(row["id"], 2)]
        for q, v in ((1, v1), (2, v2)):
            if v is not None:
                query_rows.append((row["category"], float(v)))
        if v1 is not None and v2 is not None:
            pair_rows.append((row["category"], float(v1 and v2)))
        differ = codis_metrics.outputs_differ(outputs[(row["id"], 1)], outputs[(row["id"], 2)])
        aware_rows.append((row["category"], float(differ)))
        details.append({
            "item_id": row["id"], "category": row["category"], "outputs_differ": differ,
            "queries": [
                {"query": q, "answer": row[f"answer_{q}"], "output": outputs[(row["id"], q)],
                 "final_answer": codis_metrics.final_answer(outputs[(row["id"], q)]), "right": verdicts[(row["id"], q)],
                 "rule_right": rule[(row["id"], q)], "judge_error": errors.get((row["id"], q))}
                for q in (1, 2)
            ],
        })
    metrics = {
        "acc_p": by_category(pair_rows, CODIS_CATEGORIES),
        "acc_q": by_category(query_rows, CODIS_CATEGORIES),
        "context_awareness": by_category(aware_rows, CODIS_CATEGORIES),
    }
    failures = sum(v is None for v in verdicts.values())
    counts = {"items": len(rows), "queries": len(queries), "judge_failures": failures,
              "pairs_judged": len(pair_rows), "queries_judged": len(query_rows)}
    return TaskResult(metrics, details, counts, agreement)


SCORERS = {"description": score_description, "vqa": score_vqa, "codis": score_codis}


def run_scoring(options: ScoreOptions) -> dict[str, Any]:
    """Score one predictions file (or the oracle) and write the run folder; returns scores.json's content."""
    if not options.oracle and not options.predictions:
        raise UsageError("give --predictions FILE or --oracle")
    spec = _judge_spec(options)
    rows = _dataset_rows(options)
    outputs, source = _outputs_by_id(options, rows)
    judge = _llm_judge(options, spec)
    try:
        result = SCORERS[options.task](rows, outputs, options, judge)
        extra = analyses.run_analyses(options, rows, outputs, source.get("prompt_ids", []), judge,
                                      result.details, result.metrics, result.counts)
        judge_info: dict[str, Any] = {"kind": spec.kind}
        if judge is not None:
            judge_info.update(judge.summary())
    finally:
        if judge is not None:
            judge.close()
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
        "counts": {
            **result.counts,
            "dataset_items": len(rows),
            "missing_predictions": source.get("missing_predictions", []),
            "unknown_predictions": source.get("unknown_predictions", []),
        },
    }
    if extra:
        scores["analyses"] = extra
    write_run(Path(options.out), scores, result.details)
    return scores
