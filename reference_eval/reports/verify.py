"""``cogbench verify TARGET``: every published number re-derived from the per-item details, offline.

TARGET is a run folder, a details dataset (a folder written by ``publish-results``, or a Hub repo
at ``--revision``), or an ``.eval_results`` file (its details: ``--details``, else the dataset its
``source.url`` names). No judge or model is called. From the details it recomputes each metric's
overall and per-category value and 95% interval and compares them with scores.json; re-renders
report.md and the results' notes from the checked scores.json and compares their numbers; and
compares each ``.eval_results`` value. Items whose own fields disagree (``item_checks``: an LLM
verdict that its stored reply does not read as, a parsed answer or rule verdict that its output
does not give) are listed as the explanation. Unlike ``read_run``, which stops at the first
difference, this lists them all.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cogbench.errors import CogbenchError, UsageError
from cogbench.reference_eval.metrics import intervals
from cogbench.reference_eval.reports import details_dataset
from cogbench.reference_eval.reports.hub_results import RESULTS_DIR, results_notes
from cogbench.reference_eval.reports.item_checks import item_problems
from cogbench.reference_eval.reports.run_files import render_report
from cogbench.reference_eval.reports.run_reader import _stated, read_details, read_json_file, score_folder
from cogbench.schemas.features import CODIS_CATEGORIES, COGBENCH_CATEGORIES
from cogbench.schemas.vocabulary import BENCHMARK_TASKS

TOLERANCE = 0.01  # points: scores.json keeps 4 decimals, a report 1, a result 2 (half its last digit)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass
class Difference:
    where: str
    stated: str
    recomputed: str
    items: list[str] = field(default_factory=list)

    def line(self) -> str:
        because = (
            f" (items: {', '.join(self.items[:10])}{' ...' if len(self.items) > 10 else ''})" if self.items else ""
        )
        if not self.recomputed:  # an item whose own fields disagree
            return f"{self.where}: {self.stated}"
        return f"{self.where}: says {self.stated}, the details give {self.recomputed}{because}"


@dataclass
class Verification:
    equal: int = 0
    differences: list[Difference] = field(default_factory=list)

    def compare(self, where: str, stated: Any, recomputed: Any, items: list[str] | None = None, tol=TOLERANCE) -> None:
        same = (
            isinstance(stated, (int, float))
            and isinstance(recomputed, (int, float))
            and not math.isnan(recomputed)
            and abs(stated - recomputed) <= tol
        ) or (stated is None and recomputed is None)
        if same:
            self.equal += 1
        else:
            shown = (
                _shown(stated) if isinstance(stated, (int, float)) and not isinstance(stated, bool) else repr(stated)
            )
            self.differences.append(Difference(where, shown, _shown(recomputed), items or []))


def _shown(value: Any) -> str:
    return "nothing" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"


@dataclass
class TaskData:
    """One task's details with the files stating numbers about them."""

    where: str
    details: list[dict[str, Any]]
    scores: dict[str, Any]
    scores_path: Path
    report: str | None


def check_scores(data: TaskData, result: Verification) -> None:
    """scores.json's values and intervals against the details; items that explain a difference."""
    scores, task = data.scores, data.scores["task"]
    problems = item_problems(task, data.details, scores["judge"]["kind"], scores["judge"].get("parsing", "tolerant"))
    for item, lines in problems.items():
        for problem in lines:
            result.differences.append(Difference(f"{data.where}: item {item}", problem, "", [item]))
    # An item's categories: its own (VQA, CODIS), or those of its CoRs (Description).
    categories_of = {
        d["item_id"]: {d.get("category")} | {c.get("category") for c in d.get("cognition") or []} for d in data.details
    }
    categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
    where = str(data.scores_path)
    result.compare(f"{where}: counts.items", scores["counts"].get("items"), len(data.details))
    tables = intervals.metric_tables(task, data.details, categories)
    recomputed_intervals, _ = intervals.score_intervals(task, data.details, categories)
    for name, metric in scores["metrics"].items():
        if name not in tables:
            continue
        table = tables[name]
        for column, value in zip(table.columns, table.pooled()):
            stated = _stated(metric, column)
            key = "overall" if column == "overall" else f"per_category.{column}"
            if stated is None:
                continue
            items = sorted(i for i in problems if column == "overall" or column in categories_of.get(i, ()))
            result.compare(f"{where}: metrics.{name}.{key}", stated, float(value), items)
            stated_interval = _interval(metric, column)
            fresh = _interval({"interval": recomputed_intervals[name]}, column)
            if stated_interval is not None or fresh is not None:
                for bound, (a, b) in zip(("low", "high"), zip(stated_interval or [None] * 2, fresh or [None] * 2)):
                    result.compare(f"{where}: metrics.{name}.interval.{key} ({bound})", a, b, items, tol=1e-3)


def _interval(metric: dict[str, Any], column: str) -> list[float] | None:
    interval = metric.get("interval") or {}
    return interval.get("overall") if column == "overall" else (interval.get("per_category") or {}).get(column)


def compare_text(where: str, written: str, rendered: str, result: Verification) -> None:
    """The numbers of a written text against the same text rendered from the checked scores.json."""
    stated, expected = NUMBER.findall(written), NUMBER.findall(rendered)
    if len(stated) != len(expected):
        result.differences.append(Difference(where, f"{len(stated)} numbers", f"{len(expected)} (text edited)"))
        return
    for position, (a, b) in enumerate(zip(stated, expected), 1):
        if a == b:
            result.equal += 1
        else:
            result.differences.append(Difference(f"{where}: number {position}", a, b))


def check_task(data: TaskData, result: Verification) -> None:
    before = len(result.differences)
    check_scores(data, result)
    if data.report is not None:
        where = f"{data.scores_path.parent / 'report.md'}"
        text = Verification()
        compare_text(where, data.report, render_report(data.scores), text)
        result.equal += text.equal
        if text.differences and len(result.differences) > before:
            # report.md is rendered from scores.json: against an edited scores.json an untouched report differs too
            text.differences = [
                Difference(
                    where,
                    f"not compared number by number: it is rendered from {data.scores_path.name}, which differs "
                    "from the details (above); once that is put right, run verify again",
                    "",
                )
            ]
        result.differences += text.differences


def check_results_file(path: Path, entries: list[dict[str, Any]], tasks: dict[str, TaskData], result: Verification):
    """Each result's value and notes against the details of its task."""
    for number, entry in enumerate(entries):
        task_id = (entry.get("dataset") or {}).get("task_id")
        if task_id not in BENCHMARK_TASKS:
            raise UsageError(f"{path}: entry {number}: task_id {task_id!r} is not a cogbench task")
        config, metric = BENCHMARK_TASKS[task_id]
        if config not in tasks:
            raise UsageError(f"{path}: entry {number}: the details hold no {config} run")
        data = tasks[config]
        categories = CODIS_CATEGORIES if config == "codis" else COGBENCH_CATEGORIES
        table = intervals.metric_tables(config, data.details, categories)[metric]
        value = float(table.pooled()[-1])
        judge = data.scores["judge"]
        problems = sorted(item_problems(config, data.details, judge["kind"], judge.get("parsing", "tolerant")))
        result.compare(f"{path}: entry {number}: value", entry.get("value"), value, problems, tol=0.005 + 1e-9)
        compare_text(
            f"{path}: entry {number}: notes", str(entry.get("notes", "")), results_notes(data.scores, metric), result
        )


def run_folder_tasks(path: Path) -> dict[str, TaskData]:
    folder = score_folder(path)
    scores = read_json_file(folder / "scores.json", "scores.schema.json")
    details = read_details(folder / "details.jsonl", scores["task"])
    report = (folder / "report.md").read_text(encoding="utf-8") if (folder / "report.md").is_file() else None
    return {scores["task"]: TaskData(str(folder / "details.jsonl"), details, scores, folder / "scores.json", report)}


def details_tasks(folder: Path) -> dict[str, TaskData]:
    found = details_dataset.read_details_folder(folder)
    if not found:
        raise UsageError(f"{folder}: no data/<task>/test.parquet: not a details dataset written by publish-results")
    tasks = {}
    for task, files in found.items():
        scores = read_json_file(files["scores_path"], "scores.schema.json")
        report = files["report_path"].read_text(encoding="utf-8") if files["report_path"].is_file() else None
        tasks[task] = TaskData(f"{folder}/data/{task}", files["details"], scores, files["scores_path"], report)
    return tasks


def hub_details(repo_id: str, revision: str | None, endpoint: str | None = None) -> Path:
    """A details dataset from the Hub (the only network use of verify; no judge, no model).
    ``endpoint``: the Hub the result's source.url names (default: HF_ENDPOINT's)."""
    from huggingface_hub import constants, snapshot_download

    try:
        return Path(
            snapshot_download(repo_id, repo_type="dataset", revision=revision, endpoint=endpoint or constants.ENDPOINT)
        )
    except Exception as error:
        raise CogbenchError(
            f"cannot download the details {repo_id}@{revision or 'main'} ({type(error).__name__})"
        ) from None


def details_from(spec: str, revision: str | None, endpoint: str | None = None) -> dict[str, TaskData]:
    path = Path(spec)
    return details_tasks(path if path.is_dir() else hub_details(spec, revision, endpoint))


SOURCE_URL = re.compile(r"^(https?://[^/]+)/datasets/([^/]+/[^/]+?)(?:/tree/([^/]+))?/?$")


def verify(target: str, details: str | None = None, revision: str | None = None) -> Verification:
    path, result = Path(target), Verification()
    if path.is_file() or (path.is_dir() and path.name == RESULTS_DIR):
        files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
        for file in files:
            try:
                entries = yaml.safe_load(file.read_text(encoding="utf-8"))
            except (yaml.YAMLError, UnicodeDecodeError) as error:
                raise CogbenchError(f"{file}: not readable YAML ({type(error).__name__})") from None
            if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
                raise CogbenchError(f"{file}: not a list of results (hub-docs eval_results.yaml)")
            if details is None:
                match = SOURCE_URL.match(str((entries[0].get("source") or {}).get("url", "")))
                if not match:
                    raise UsageError(f"{file}: no source.url naming a details dataset; give --details")
                tasks = details_from(match.group(2), match.group(3), match.group(1))
            else:
                tasks = details_from(details, revision)
            for data in tasks.values():
                check_task(data, result)
            check_results_file(file, entries, tasks, result)
        return result
    if path.is_dir() and (path / "data").is_dir() and not (path / "scores.json").exists():
        tasks = details_tasks(path)
    elif path.is_dir():
        tasks = run_folder_tasks(path)
    elif re.fullmatch(r"[\w.-]+/[\w.-]+", target):
        tasks = details_from(target, revision)
    else:
        raise UsageError(
            f"{target}: no such file or folder (give a run folder, a details dataset or an .eval_results file)"
        )
    for data in tasks.values():
        check_task(data, result)
    return result


def run_verify(args: Any) -> int:
    result = verify(args.target, args.details, args.revision)
    for difference in result.differences:
        print(difference.line())
    if result.differences:
        print(f"NOT verified: {len(result.differences)} number(s) or item(s) differ, {result.equal} equal")
        return 1
    print(f"verified: {result.equal} numbers equal")
    return 0
