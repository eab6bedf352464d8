"""A run as an Every Eval Ever (EEE) record: the aggregate JSON and its instance-level rows.

EEE (``every-eval-ever`` 0.3.0, schemas ``eval.schema.json`` and ``instance_level_eval.schema.json``)
is the results schema the Hub's Community Evals show. One record per run, laid out as the EEE
datastore wants it::

    data/<benchmark>/<org>/<model>/<uuid>.json            aggregate: one result per benchmark task
    data/<benchmark>/<org>/<model>/<uuid>_samples.jsonl   one row per counted unit of each result

The rows are the units the pooled score counts (``metrics.intervals.units_from_details``): an item
(a VQA question, a CODIS pair for Acc_p), a CODIS query (Acc_q), a Cognition CoR, or an image whose
annotated entities Recognition counts. Each row's ``metadata`` keeps its image, category, ``hits``
and ``total``, so the score (100 * sum hits / sum total) and its Korn-Graubard interval clustered
by image are re-derived from the rows alone (``eee_check``). The uuid is made from the run's
answers, task and model repo: the same run gives the same record.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.reference_eval.metrics.intervals import units_from_details
from cogbench.reference_eval.publishing.details_dataset import row_fields, template_sha256
from cogbench.reference_eval.recording.run_reader import ScoredRun
from cogbench.schemas.vocabulary import BENCHMARK_TASKS

SCHEMA_VERSION = "0.3.0"
EEE_DIR = "eee"
BENCHMARK = {"description": "cogbench", "vqa": "cogbench", "codis": "codis"}
MANY_UNITS = {"acc_q", "cognition"}  # metrics counting several units per item: rows named ITEM#N
METRIC_NAMES = {
    "recognition_micro": "Recognition Score (micro: entities recognised over entities annotated)",
    "cognition": "Cognition Score (chains of reasoning described)",
    "accuracy": "VQA accuracy (robust answer-letter extractor)",
    "acc_p": "Acc_p (pairs with both queries right)",
    "acc_q": "Acc_q (queries right)",
}
INTERVAL_METHOD = "Korn-Graubard, clustered by image"
SELF_RUN = {"hf", "vllm"}  # backends that load the weights in cogbench's process


@dataclass
class EeeRecord:
    """The aggregate, its rows, and where the datastore files them (``data/...``)."""

    aggregate: dict[str, Any]
    samples: list[dict[str, Any]]
    path: str  # data/<benchmark>/<org>/<model>/<uuid>.json

    @property
    def samples_path(self) -> str:
        return self.path.removesuffix(".json") + "_samples.jsonl"


def record_id(run: ScoredRun, model_repo: str) -> str:
    """A uuid4-shaped id from the answers scored, the task and the model repo (same run, same id)."""
    answers = (run.scores.get("provenance") or {}).get("answers_sha256") or json.dumps(run.details, sort_keys=True)
    digest = hashlib.sha256(f"{answers}\n{run.scores['task']}\n{model_repo}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def thinking_setting(run: ScoredRun) -> str:
    """The thinking setting the answers were made with: run.json's, else the replies', else not recorded."""
    recorded = ((run.run_record or {}).get("generation") or {}).get("thinking")
    if recorded is None:
        found = {(d.get("reply") or {}).get("thinking") for d in run.details} - {None}
        for detail in run.details:
            for query in detail.get("queries") or detail.get("rotations") or []:
                found |= {(query.get("reply") or {}).get("thinking")} - {None}
        recorded = ", ".join(sorted(found)) if found else None
    return str(recorded) if recorded is not None else "not recorded"


def _strings(values: dict[str, Any]) -> dict[str, str]:
    """EEE's ``additional_details``/``metadata``: every value a string, absent ones left out."""
    return {
        key: value if isinstance(value, str) else json.dumps(value)
        for key, value in values.items()
        if value is not None
    }


def _judge(scores: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """(EEE ``llm_scoring`` for an LLM judge or None, the judge as key-value details)."""
    judge = scores["judge"]
    provenance = (scores.get("provenance") or {}).get("judge") or {}
    described = _strings(
        {
            "judge": judge["kind"],
            "judge_model": judge.get("model"),
            "judge_parsing": judge.get("parsing"),
            "judge_temperature": provenance.get("temperature"),
            "judge_cache_key": judge.get("cache_key"),
        }
    )
    if judge["kind"] != "openai":
        return None, described
    templates = [t for t in (scores.get("provenance") or {}).get("prompt_templates") or [] if t.get("role") == "judge"]
    judge_info: dict[str, Any] = {
        "model_info": {
            "name": judge["model"],
            "id": judge["model"],
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        }
    }
    if isinstance(provenance.get("temperature"), (int, float)):
        judge_info["temperature"] = provenance["temperature"]
    scoring = {
        "judges": [judge_info],
        "input_prompt": "; ".join(f"cogbench judge template {t['id']} (sha256 {t['sha256']})" for t in templates)
        or "cogbench judge templates (not recorded)",
        "additional_details": _strings({"parsing": judge.get("parsing", "tolerant")}),
    }
    return scoring, described


def _result(run: ScoredRun, task_id: str, metric: str, source: dict[str, Any], n_rows: int) -> dict[str, Any]:
    scores = run.scores
    entry, settings = scores["metrics"][metric], scores["intervals"]
    generation = dict((run.run_record or {}).get("generation") or {})
    scoring, judge = _judge(scores)
    metric_config: dict[str, Any] = {
        "evaluation_description": METRIC_NAMES.get(metric, metric),
        "metric_id": f"cogbench.{task_id}",
        "metric_name": task_id,
        "metric_kind": "accuracy",
        "metric_unit": "percent",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0,
        "max_score": 100,
        "additional_details": judge,
    }
    if scoring:
        metric_config["llm_scoring"] = scoring
    uncertainty: dict[str, Any] = {"num_samples": n_rows}
    low_high = (entry.get("interval") or {}).get("overall")
    if low_high:
        uncertainty["confidence_interval"] = {
            "lower": low_high[0],
            "upper": low_high[1],
            "confidence_level": settings["level"],
            "method": INTERVAL_METHOD,
        }
    args = {"temperature": generation.get("temperature"), "reasoning": None}
    if isinstance(generation.get("max_new_tokens"), int) and generation["max_new_tokens"] > 0:
        args["max_tokens"] = generation["max_new_tokens"]
    thinking = thinking_setting(run)
    if thinking in ("on", "off"):
        args["reasoning"] = thinking == "on"
    return {
        "evaluation_result_id": task_id,
        "evaluation_name": task_id,
        "source_data": source,
        "metric_config": metric_config,
        "score_details": {
            "score": entry["overall"],
            "details": _strings(
                {
                    "images": scores["counts"].get("dataset_images"),
                    "items": scores["counts"].get("items"),
                    "n_scored": entry.get("n_scored", entry.get("judged")),
                    "unit": entry.get("unit"),
                    "interval_clusters": settings.get("clusters"),
                }
            ),
            "uncertainty": uncertainty,
        },
        "generation_config": {
            "generation_args": {key: value for key, value in args.items() if value is not None},
            "additional_details": _strings(
                {
                    "thinking": thinking,
                    "prompt_id": (run.run_record or {}).get("prompt_id") or run.prompt_id,
                    "prompt_template_sha256": template_sha256(run),
                    **{f"generation_{key}": value for key, value in generation.items() if key not in args},
                }
            ),
        },
    }


def _rows(run: ScoredRun, evaluation_id: str, model_repo: str, task_id: str, metric: str) -> list[dict[str, Any]]:
    task, rows = run.scores["task"], []
    kind = run.scores["judge"]["kind"]
    for detail in run.details:
        units = units_from_details(task, [detail]).get(metric) or []
        outputs = row_fields(task, detail)["raw_output"]
        outputs = outputs if isinstance(outputs, list) else [outputs]
        question = (
            detail.get("question") or f"item {detail['item_id']} (image {detail.get('image_id', detail['item_id'])})"
        )
        for number, unit in enumerate(units, 1):
            raw = [outputs[number - 1]] if metric == "acc_q" and len(outputs) == len(units) else outputs
            name = f"{detail['item_id']}#{number}" if metric in MANY_UNITS else str(detail["item_id"])
            rows.append(
                {
                    "schema_version": SCHEMA_VERSION,
                    "evaluation_id": evaluation_id,
                    "model_id": model_repo,
                    "evaluation_name": task_id,
                    "evaluation_result_id": task_id,
                    "sample_id": name,
                    "sample_hash": hashlib.sha256(question.encode()).hexdigest(),
                    "interaction_type": "single_turn",
                    "input": {"raw": question, "reference": []},
                    "output": {"raw": [text if isinstance(text, str) else json.dumps(text) for text in raw]},
                    "answer_attribution": [
                        {
                            "turn_idx": 0,
                            "source": "output.raw",
                            "extracted_value": f"{unit.hits:g} of {unit.total:g}",
                            "extraction_method": f"cogbench {task} scorer, judge {kind}",
                            "is_terminal": True,
                        }
                    ],
                    "evaluation": {"score": unit.hits / unit.total, "is_correct": unit.hits == unit.total},
                    "metadata": _strings(
                        {
                            "item_id": str(detail["item_id"]),
                            "image_id": unit.cluster,
                            "category": unit.category,
                            "hits": f"{unit.hits:g}",
                            "total": f"{unit.total:g}",
                        }
                    ),
                }
            )
    return rows


def build_record(run: ScoredRun, model_repo: str, dataset_repo: str, revision: str, cogbench_version: str) -> EeeRecord:
    """The run's EEE record for ``model_repo`` (ORG/NAME), on ``dataset_repo`` at ``revision``."""
    scores = run.scores
    org, name = model_repo.split("/")
    record = record_id(run, model_repo)
    stamp = int((run.folder / "scores.json").stat().st_mtime)
    benchmark = BENCHMARK[scores["task"]]
    evaluation_id = f"{benchmark}/{model_repo}/{stamp}"
    generation = (run.run_record or {}).get("generation") or {}
    source = {
        "dataset_name": dataset_repo,
        "source_type": "hf_dataset",
        "hf_repo": dataset_repo,
        "hf_split": "test",
        "samples_number": scores["counts"].get("dataset_items"),
        "additional_details": _strings({"config": scores["task"], "revision": revision}),
    }
    results, samples = [], []
    for task_id, (config, metric) in BENCHMARK_TASKS.items():
        if config != scores["task"] or scores["metrics"].get(metric, {}).get("overall") is None:
            continue
        rows = _rows(run, evaluation_id, model_repo, task_id, metric)
        results.append(_result(run, task_id, metric, source, len(rows)))
        samples += rows
    path = f"data/{benchmark}/{org}/{name}/{record}.json"
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in samples)
    aggregate = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "evaluation_timestamp": str(stamp),
        "retrieved_timestamp": str(stamp),
        "source_metadata": {
            "source_name": "cogbench",
            "source_type": "evaluation_run",
            "source_organization_name": "cogbench",
            "evaluator_relationship": "third_party",
        },
        "eval_library": {
            "name": "cogbench",
            "version": (scores.get("provenance") or {}).get("cogbench_version", "unknown"),
            "additional_details": {"record_written_by": f"cogbench {cogbench_version}"},
        },
        "model_info": {
            "name": scores["model"],
            "id": model_repo,
            "developer": org,
            "inference_platform": generation.get("backend", "unknown"),
            "additional_details": {
                "deployment_type": "self_deployed" if generation.get("backend") in SELF_RUN else "unknown",
                "model_availability": "open_weights" if generation.get("backend") in SELF_RUN else "unknown",
            },
        },
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": path.removesuffix(".json") + "_samples.jsonl",
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "total_rows": len(samples),
        },
    }
    return EeeRecord(aggregate, samples, path)


def write_record(record: EeeRecord, folder: Path) -> list[str]:
    """Write the record under ``folder`` (``folder/data/...``); return the two paths, relative to it."""
    target = folder / record.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(record.aggregate, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in record.samples)
    (folder / record.samples_path).write_text(text, encoding="utf-8")
    return [record.path, record.samples_path]
