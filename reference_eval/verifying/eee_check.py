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
from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError, UsageError
from cogbench.jsonl import text_lines
from cogbench.reference_eval.metrics import small_sample
from cogbench.reference_eval.metrics.intervals import Unit, cluster_table
from cogbench.reference_eval.verifying.verify_result import Verification
from cogbench.schemas.features import CODIS_CATEGORIES, COGBENCH_CATEGORIES
from cogbench.schemas.vocabulary import BENCHMARK_TASKS


def is_record(path: Path) -> bool:
    """A JSON file that says it is an EEE aggregate (``verify`` tells it from an ``.eval_results`` file)."""
    if path.suffix != ".json" or not path.is_file():
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and "evaluation_results" in data and "schema_version" in data


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    """(aggregate, rows, the rows file's text), or a one-line refusal naming the file and line."""
    aggregate = json.loads(path.read_text(encoding="utf-8"))
    detail = aggregate.get("detailed_evaluation_results")
    if not isinstance(detail, dict) or not isinstance(detail.get("file_path"), str):
        raise UsageError(f"{path}: detailed_evaluation_results.file_path: missing; no instance rows to re-derive from")
    samples = path.parent / Path(detail["file_path"]).name
    if samples.name != f"{path.stem}_samples.jsonl" or not samples.is_file():
        raise CogbenchError(f"{path}: detailed_evaluation_results.file_path: {samples.name} is not beside the record")
    text = samples.read_text(encoding="utf-8")
    rows = []
    for number, line in text_lines(text):
        try:
            row = json.loads(line)
        except ValueError:
            raise CogbenchError(f"{samples}: line {number}: not valid JSON") from None
        if not isinstance(row, dict):
            raise CogbenchError(f"{samples}: line {number}: not a JSON object")
        rows.append(row)
    return aggregate, rows, text


def _unit(row: dict[str, Any], where: str) -> Unit:
    meta = row.get("metadata") or {}
    try:
        return Unit(str(meta["image_id"]), meta.get("category"), float(meta["hits"]), float(meta["total"]))
    except (KeyError, TypeError, ValueError):
        raise CogbenchError(f"{where}: metadata: image_id, hits and total are needed to re-derive the score") from None


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
    for index, entry in enumerate(aggregate.get("evaluation_results") or []):
        name = entry.get("evaluation_result_id")
        where = f"{path}: evaluation_results[{index}] ({name})"
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
        result.problem(f"{samples}", f"{len(left)} row(s) of {name!r}, which the aggregate does not report")
    result.state(
        "the record's model_info (name, id, deployment)",
        "judge configuration (metric_config.llm_scoring, additional_details)",
        "thinking setting and generation arguments (generation_config)",
        "eval_library.version (the cogbench version)",
        "source_data (the dataset, its revision and item count)",
    )
