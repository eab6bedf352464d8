"""``cogbench verify RECORD.json``: an Every Eval Ever record's numbers re-derived from its own rows.

The aggregate names its rows (``detailed_evaluation_results``: the ``_samples.jsonl`` beside it, its
sha256 and row count). Each result's score is 100 * sum(hits) / sum(total) over its rows, its 95%
interval the Korn-Graubard interval clustered by the rows' images (``metrics.small_sample``), and
its ``num_samples`` the number of rows; each row's own ``score`` and ``is_correct`` follow from its
``hits`` and ``total``. What the rows cannot give (the model, the judge, the thinking setting, the
cogbench version) is listed as stated. Whether the record fits the EEE schema is the EEE package's
own validator's to say (docs/hub.md; ``.ci/run-eee``).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError, UsageError, echoed, shown
from cogbench.jsonl import text_lines
from cogbench.reference_eval.formats.predictions import parse_json
from cogbench.reference_eval.metrics import small_sample
from cogbench.reference_eval.metrics.intervals import Unit, cluster_table
from cogbench.reference_eval.verifying.verify_result import Verification
from cogbench.schemas.vocabulary import BENCHMARK_TASKS, CODIS_CATEGORIES, COGBENCH_CATEGORIES

# The parts of a record this check reads, with the shapes it reads them in (the whole EEE schema is the EEE
# validator's): anything else is one line naming the file and field, exit 2, before a number is used.
OBJECT = {"type": ["object", "null"]}
AGGREGATE_SHAPE = {
    "type": "object",
    "required": ["evaluation_results", "detailed_evaluation_results"],
    "properties": {
        "evaluation_results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["evaluation_result_id"],
                "properties": {
                    "evaluation_result_id": {"type": "string"},
                    "score_details": {
                        **OBJECT,
                        "properties": {"uncertainty": {**OBJECT, "properties": {"confidence_interval": OBJECT}}},
                    },
                },
            },
        },
        "detailed_evaluation_results": {
            "type": "object",
            "required": ["file_path"],
            "properties": {"file_path": {"type": "string"}},
        },
        "model_info": OBJECT,
    },
}
ROW_SHAPE = {
    "type": "object",
    "required": ["metadata"],
    "properties": {
        "evaluation": OBJECT,
        "evaluation_result_id": {"type": "string"},
        "metadata": {
            "type": "object",
            "required": ["image_id", "hits", "total"],
            "properties": {"image_id": {"type": ["string", "integer"]}, "category": {"type": ["string", "null"]}},
        },
    },
}


def _check_shape(value: Any, shape: dict[str, Any], where: str) -> None:
    import jsonschema

    try:
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(shape).iter_errors(value))
        if error is None:
            return
        field = ".".join(str(part) for part in error.absolute_path) or "(top level)"
        message = error.message[:160]
    except RecursionError:  # a value nested nearly as deep as Python reads, shown in the message
        raise UsageError(f"{where}: not usable JSON (nested too deeply)") from None
    raise UsageError(f"{where}: field {field}: {message} (not an EEE record as cogbench writes one)")


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not UTF-8 text (byte {error.start})") from None


def is_record(path: Path) -> bool:
    """A JSON file that says it is an EEE aggregate (``verify`` tells it from an ``.eval_results`` file); a
    ``.json`` file that cannot be read as JSON at all (nested too deeply) is one line, exit 2."""
    if path.suffix != ".json" or not path.is_file():
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False
    except RecursionError:
        raise UsageError(f"{path}: not usable JSON (nested too deeply)") from None
    return isinstance(data, dict) and "evaluation_results" in data and "schema_version" in data


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    """(aggregate, rows, the rows file's text), each checked for the shape read; else one line naming the
    file, line and field."""
    aggregate = parse_json(_text(path), str(path))  # nested too deeply, a bad escape: one line, exit 2
    _check_shape(aggregate, AGGREGATE_SHAPE, str(path))
    detail = aggregate["detailed_evaluation_results"]
    samples = path.parent / Path(detail["file_path"]).name
    if samples.name != f"{path.stem}_samples.jsonl" or not samples.is_file():
        raise CogbenchError(
            f"{path}: detailed_evaluation_results.file_path: {echoed(samples.name)} is not beside the record"
        )
    text = _text(samples)
    rows = []
    for number, line in text_lines(text):
        where = f"{samples}: line {number}"
        row = parse_json(line, where)
        _check_shape(row, ROW_SHAPE, where)
        rows.append(row)
    return aggregate, rows, text


def _count(value: Any) -> float | None:
    """A row's hits or total: a number, or the text of one (EEE metadata values are strings)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _unit(row: dict[str, Any], where: str) -> Unit:
    meta = row["metadata"]
    hits, total = _count(meta["hits"]), _count(meta["total"])
    if hits is None or total is None or total == 0:
        raise UsageError(
            f"{where}: metadata: hits {echoed(meta['hits'])} and total {echoed(meta['total'])} are not counts "
            "(numbers, total above 0) to re-derive the score from"
        )
    return Unit(str(meta["image_id"]), meta.get("category"), hits, total)


def check_record(path: Path, result: Verification) -> None:
    """Every number of the aggregate against its rows; each row's score against its hits and total."""
    aggregate, rows, text = _read(path)
    detail = aggregate["detailed_evaluation_results"]
    samples = f"{path.parent / Path(detail['file_path']).name}"
    result.same(
        f"{path}: detailed_evaluation_results.checksum",
        detail.get("checksum"),
        hashlib.sha256(text.encode()).hexdigest(),
    )
    result.same(f"{path}: detailed_evaluation_results.total_rows", detail.get("total_rows"), len(rows))
    model = (aggregate.get("model_info") or {}).get("id")
    by_result: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for number, row in enumerate(rows, 1):
        where = f"{samples}: line {number}"
        result.same(f"{where}: evaluation_id", row.get("evaluation_id"), aggregate.get("evaluation_id"))
        result.same(f"{where}: model_id", row.get("model_id"), model)
        unit = _unit(row, where)
        evaluation = row.get("evaluation") or {}
        result.compare(f"{where}: evaluation.score", evaluation.get("score"), unit.hits / unit.total, tol=1e-9)
        result.same(f"{where}: evaluation.is_correct", evaluation.get("is_correct"), unit.hits == unit.total)
        by_result.setdefault(str(row.get("evaluation_result_id")), []).append((number, row))
    for index, entry in enumerate(aggregate["evaluation_results"]):
        name = entry["evaluation_result_id"]
        where = f"{path}: evaluation_results[{index}] ({shown(name)})"
        if name not in BENCHMARK_TASKS:
            raise UsageError(f"{where}: not a cogbench benchmark task; this record was not written by cogbench")
        config, metric = BENCHMARK_TASKS[name]
        mine = by_result.pop(name, [])
        units = [_unit(row, f"{samples}: line {number}") for number, row in mine]
        categories = (
            [] if metric.startswith("recognition") else CODIS_CATEGORIES if config == "codis" else COGBENCH_CATEGORIES
        )
        table = cluster_table(units, categories)
        details = entry.get("score_details") or {}
        result.compare(f"{where}: score", details.get("score"), float(table.pooled()[-1]) if units else None)
        uncertainty = details.get("uncertainty") or {}
        result.same(f"{where}: uncertainty.num_samples", uncertainty.get("num_samples"), len(mine))
        interval = small_sample.column_intervals(table.hits, table.totals, table.columns)["overall"] if units else None
        stated = uncertainty.get("confidence_interval")
        if stated is not None or interval is not None:
            stated = stated or {}
            for bound, fresh in zip(("lower", "upper"), interval or [None, None]):
                result.compare(f"{where}: confidence_interval.{bound}", stated.get(bound), fresh, tol=1e-3)
    for name, left in by_result.items():
        result.problem(f"{samples}", f"{len(left)} row(s) of {echoed(name)}, which the aggregate does not report")
    result.state(
        "the record's model_info (name, id, deployment)",
        "judge configuration (metric_config.llm_scoring, additional_details)",
        "thinking setting and generation arguments (generation_config)",
        "eval_library.version (the cogbench version)",
        "source_data (the dataset, its revision and item count)",
    )
