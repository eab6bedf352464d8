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

import re
from pathlib import Path
from typing import Any

import yaml

from cogbench.errors import CogbenchError, UsageError, echoed
from cogbench.redaction import redact_url
from cogbench.reference_eval.metrics import intervals
from cogbench.reference_eval.publishing import details_dataset
from cogbench.reference_eval.publishing.hub_results import RESULTS_DIR, results_notes
from cogbench.reference_eval.recording.run_files import render_report
from cogbench.reference_eval.recording.run_reader import read_details, read_json_file, score_folder
from cogbench.reference_eval.verifying import eee_check, verify_panel, verify_rederive, verify_sources, verify_variants
from cogbench.reference_eval.verifying.item_checks import item_problems
from cogbench.reference_eval.verifying.result_source import configured_endpoint, details_source
from cogbench.reference_eval.verifying.verify_result import Difference, TaskData, Verification
from cogbench.schemas.vocabulary import BENCHMARK_TASKS, CODIS_CATEGORIES, COGBENCH_CATEGORIES

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
RUN_FILES = ("run.json", "predictions.jsonl")  # beside an eval run folder's score/


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
    tables = intervals.metric_tables(task, data.details, categories)
    recomputed_intervals, _ = intervals.score_intervals(task, data.details, categories)
    for name, metric in scores["metrics"].items():
        if name not in tables:
            continue
        table = tables[name]
        for column, value in zip(table.columns, table.pooled()):
            key = "overall" if column == "overall" else f"per_category.{column}"
            if column == "overall" and metric.get("partial"):  # a subset's value: overall_partial, overall null
                result.compare(f"{where}: metrics.{name}.overall", metric.get("overall"), None)
                key = "overall_partial"
            stated = metric.get(key) if column == "overall" else (metric.get("per_category") or {}).get(column)
            items = sorted(i for i in problems if column == "overall" or column in categories_of.get(i, ()))
            result.compare(f"{where}: metrics.{name}.{key}", stated, float(value), items)
            stated_interval = _interval(metric, column)
            fresh = _interval({"interval": recomputed_intervals[name]}, column)
            if stated_interval is not None or fresh is not None:
                for bound, (a, b) in zip(("low", "high"), zip(stated_interval or [None] * 2, fresh or [None] * 2)):
                    result.compare(f"{where}: metrics.{name}.interval.{key} ({bound})", a, b, items, tol=1e-3)
    for name in sorted(set(scores["metrics"]) - set(tables)):
        result.state(f"metrics.{name} (no per-item record to recompute it from)")


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


def check_task(data: TaskData, result: Verification, dataset: str | None = None) -> None:
    """Every number and field of one task's files: re-derived where it can be, else named as stated."""
    before = len(result.differences)
    check_scores(data, result)
    verify_variants.check_entries(data, result)
    expected = verify_sources.check_build(data, result, dataset) if dataset else None
    if dataset:
        verify_variants.check_images(data, result, dataset)
    if dataset is None:
        verify_sources.stated_without_build(result, data)
    verify_rederive.check_counts(data, result, expected)
    verify_rederive.check_interval_settings(data, result)
    verify_rederive.check_provenance(data, result)
    verify_rederive.check_analyses(data, result)
    verify_panel.check_panel(data, result)
    verify_rederive.check_replies(data, result)
    if data.rows is not None:
        verify_rederive.check_columns(data, result)
        verify_rederive.check_card(data, result)
    else:
        verify_sources.check_run_record(data, result)
    if data.report is not None:
        where = f"{data.scores_path.parent / 'report.md'}"
        text = Verification()
        compare_text(where, data.report, render_report(data.scores), text)
        result.equal += text.equal
        # report.md is rendered from scores.json: against an edited scores.json an untouched report differs too.
        # Only this task's differences count (those before `before` are earlier tasks').
        if text.differences and result.differences[before:]:
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
            raise UsageError(f"{path}: entry {number}: task_id {echoed(task_id)} is not a cogbench task")
        config, metric = BENCHMARK_TASKS[task_id]
        if config not in tasks:
            raise UsageError(f"{path}: entry {number}: the details hold no {config} run")
        data = tasks[config]
        # A result is the overall value alone: no category column (every unit counts in overall).
        (value,) = intervals.metric_tables(config, data.details, ())[metric].pooled()
        value = float(value)
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
    # An eval run folder (its score/ beside run.json and predictions.jsonl), whose record is checked too.
    # Paths compared, not their last parts' strings (which pathlib may intern: `is` would agree with == there).
    made = folder == folder.parent / "score" and any((folder.parent / n).is_file() for n in RUN_FILES)
    data = TaskData(str(folder / "details.jsonl"), details, scores, folder / "scores.json", report)
    data.run_dir = folder.parent if made else None
    return {scores["task"]: data}


def details_tasks(folder: Path) -> dict[str, TaskData]:
    found = details_dataset.read_details_folder(folder)
    if not found:
        raise UsageError(f"{folder}: no data/<task>/test.parquet: not a details dataset written by publish-results")
    tasks = {}
    for task, files in found.items():
        scores = read_json_file(files["scores_path"], "scores.schema.json")
        report = files["report_path"].read_text(encoding="utf-8") if files["report_path"].is_file() else None
        where = f"{folder}/data/{task}"
        tasks[task] = TaskData(where, files["details"], scores, files["scores_path"], report, files["rows"])
    return tasks


def hub_details(repo_id: str, revision: str | None, given: str | None = None) -> Path:
    """A details dataset from the Hub (the only network use of verify; no judge, no model).
    Always the configured Hub (HF_ENDPOINT's), where the user's token belongs (result_source).
    ``given``: the argument as typed, which may have been meant as a local path (the error says both)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    endpoint = configured_endpoint()
    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, endpoint=endpoint))
    except Exception as error:
        found = {RevisionNotFoundError: ": no such revision there", RepositoryNotFoundError: ": no such dataset there"}
        why = next((text for kind, text in found.items() if isinstance(error, kind)), "")
        local = f", and there is no local folder {given} either" if given is not None else ""
        raise CogbenchError(
            f"cannot download the details {repo_id}@{revision or 'main'} from the Hub at {redact_url(endpoint)} "
            f"({type(error).__name__}{why}){local}"
        ) from None


def local_path_meant(spec: str) -> bool:
    """An ``ORG/NAME`` that does not exist here but whose first part is a folder here is a mistyped local
    path (``runs/a``), read as one rather than sent to the Hub."""
    path = Path(spec)
    first = path.parts[:1]  # () for "" and ".", which exist; a one-part path that does not exist is no folder
    return not path.exists() and bool(first) and Path(*first).is_dir()


def no_local_path(spec: str) -> UsageError:
    first = Path(spec).parts[0]
    return UsageError(f"{spec}: no such file or folder ({first}/ is a folder here, so it is read as a local path)")


def details_from(spec: str, revision: str | None, given: str | None = None) -> dict[str, TaskData]:
    path = Path(spec)
    if given is not None and local_path_meant(spec):
        raise no_local_path(spec)
    return details_tasks(path if path.is_dir() else hub_details(spec, revision, given))


def read_results_file(file: Path) -> list[dict[str, Any]]:
    """An ``.eval_results`` file's entries, each checked to have the shape the checks read (hub-docs
    eval_results.yaml: a list of mappings, ``dataset`` and ``source`` mappings, ``value`` a number):
    anything else is one line naming the file and entry, never a traceback."""
    try:
        entries = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise CogbenchError(f"{file}: not readable YAML ({type(error).__name__})") from None
    except RecursionError:  # PyYAML composes nested collections recursively: 100,000 '[' is too deep
        raise CogbenchError(f"{file}: not readable YAML (nested too deeply)") from None
    if not isinstance(entries, list) or not entries:
        raise CogbenchError(f"{file}: not a list of results (hub-docs eval_results.yaml)")
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise CogbenchError(f"{file}: entry {number}: not a mapping (hub-docs eval_results.yaml)")
        for name in ("dataset", "source"):
            if not isinstance(entry.get(name) or {}, dict):
                raise CogbenchError(f"{file}: entry {number}: field {name}: not a mapping")
        value = entry.get("value")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise CogbenchError(f"{file}: entry {number}: field value: {echoed(value)} is not a number")
    return entries


def verify(
    target: str, details: str | None = None, revision: str | None = None, dataset: str | None = None
) -> Verification:
    """``dataset``: the build the run scored, to re-derive ids and reference answers from (``--dataset``)."""
    path, result = Path(target), Verification()
    if eee_check.is_record(path):
        eee_check.check_record(path, result)
        return result
    if path.is_file() or (path.is_dir() and path.name == RESULTS_DIR):
        files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
        for file in files:
            entries = read_results_file(file)
            if details is None:
                repo, at, record = details_source(file, str((entries[0].get("source") or {}).get("url", "")))
                tasks = details_from(repo, at)
                if record:  # the source is the run's EEE record: checked from its own rows too
                    eee_check.check_record(hub_details(repo, at) / record, result)
            else:
                tasks = details_from(details, revision, given=details)
            for data in tasks.values():
                check_task(data, result, dataset)
            check_results_file(file, entries, tasks, result)
        return result
    if path.is_dir() and (path / "data").is_dir() and not (path / "scores.json").exists():
        tasks = details_tasks(path)
    elif path.is_dir():
        tasks = run_folder_tasks(path)
    elif re.fullmatch(r"[\w.-]+/[\w.-]+", target):
        tasks = details_from(target, revision, given=target)
    else:
        raise UsageError(
            f"{target}: no such file or folder (give a run folder, a details dataset or an .eval_results file)"
        )
    for data in tasks.values():
        check_task(data, result, dataset)
    result.tasks = tasks
    return result
