"""``cogbench publish-results``: a run's numbers on the model's Hub page, with the details behind them.

One ``.eval_results/<task_id>.yaml`` per task and metric family (hub-docs "Evaluation Results";
``huggingface_hub.EvalResultEntry`` writes the fields), pinned to the dataset commit the run read,
its ``source`` the details dataset (``details_dataset``) and its ``notes`` the 95% interval, the
images, the judge and the parsing mode. Opened as a pull request on the model repo (the Hub shows
it as "community"); a direct push only with ``--no-pr``. The older ``model-index`` block of the
model card is offered as a file, written by ``huggingface_hub``'s ``ModelCardData``/``EvalResult``.

Refused, one line each: a run that fails ``read_run`` (edited, not recomputable from its details),
PARTIAL or SAMPLE runs, a run on a local build that names no Hub repo or whose build changed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from cogbench import __version__
from cogbench.dataset_builders.load import dataset_revision
from cogbench.dataset_builders.output import check_apart, claim_output
from cogbench.errors import CogbenchError, UsageError
from cogbench.numbers import fixed
from cogbench.redaction import redact_url
from cogbench.reference_eval.publishing import details_dataset, eee_records, pr_audit
from cogbench.reference_eval.recording.run_reader import ScoredRun, read_run
from cogbench.reference_eval.run.completeness import coverage_label, sample_label
from cogbench.schemas.vocabulary import BENCHMARK_TASKS
from cogbench.validation.integrity import verify_build

RESULTS_DIR = ".eval_results"
MODEL_INDEX_FILE = "model-index.yaml"
DETAILS_DIR = "details"
OWNS = (
    f"{RESULTS_DIR}/*.yaml",
    MODEL_INDEX_FILE,
    f"{DETAILS_DIR}/README.md",
    f"{DETAILS_DIR}/data/*/test.parquet",
    f"{DETAILS_DIR}/runs/*/*",
    f"{DETAILS_DIR}/{eee_records.EEE_DIR}/data/*/*/*/*.json",
    f"{DETAILS_DIR}/{eee_records.EEE_DIR}/data/*/*/*/*_samples.jsonl",
)
COMMIT_SHA = re.compile(r"^[0-9a-f]{40}$")


class NotPublishable(UsageError):
    """A run the Hub must not show as a benchmark result (exit 2): what to do is in the message."""


@dataclass
class Pinned:
    """The Hub dataset a run scored, at the commit it read."""

    repo_id: str
    revision: str
    note: str = ""  # said when the revision could not be resolved to a commit (dry run offline)


def pin_dataset(run: ScoredRun, api: Any, dry_run: bool) -> Pinned:
    """The Hub repo and commit of the dataset the run read, or a one-line refusal."""
    where = f"{run.folder}: refused"
    source = (run.scores.get("provenance") or {}).get("dataset") or {}
    if source.get("source") == "hub":
        commit = source.get("commit") or ""
        if not COMMIT_SHA.match(commit):
            raise NotPublishable(
                f"{where}: the run did not record the commit of {source.get('repo')} (scored offline); "
                "score it again online so the dataset revision is pinned"
            )
        return Pinned(source["repo"], commit)
    folder = Path(source.get("path") or run.scores["dataset"])
    if not (folder / "manifest.json").is_file():
        raise NotPublishable(
            f"{where}: the build {folder} the run read is not here, so its Hub repo and version are unknown; "
            "run from the folder the run was scored in, or score the Hub dataset"
        )
    verify_build(folder)  # BuildNotVerified (exit 1) when its files changed since `cogbench build`
    if dataset_revision(str(folder)) != run.scores["dataset_revision"]:
        raise NotPublishable(
            f"{where}: {folder} is not the build the run scored ({dataset_revision(str(folder))}, the run says "
            f"{run.scores['dataset_revision']}); score the published build again"
        )
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    if not manifest.get("repo_id"):
        raise NotPublishable(
            f"{where}: the run scored the local build {folder}, which names no Hub repo; build it with --repo-id "
            "ORG/NAME, publish it (`cogbench publish`) and score the published build"
        )
    tag = f"v{manifest['dataset_version']}"
    try:
        return Pinned(manifest["repo_id"], api.dataset_info(manifest["repo_id"], revision=tag).sha)
    except Exception as error:
        if dry_run:
            return Pinned(manifest["repo_id"], tag, f"revision {tag} not resolved to a commit ({type(error).__name__})")
        raise NotPublishable(
            f"{where}: {manifest['repo_id']} has no release {tag} the Hub can show ({type(error).__name__}); "
            f"publish the build first (`cogbench publish {folder} --repo-id {manifest['repo_id']} "
            f"--version {manifest['dataset_version']}`)"
        ) from None


def check_publishable(run: ScoredRun) -> None:
    """PARTIAL and SAMPLE runs stay off model pages: their numbers are not the benchmark's."""
    partial = [f"{name} {coverage_label(m)}" for name, m in run.scores["metrics"].items() if m.get("partial")]
    if partial or run.scores["counts"].get("missing_predictions"):
        raise NotPublishable(
            f"{run.folder}: refused: PARTIAL run ({'; '.join(partial) or 'items without prediction'}); "
            + (
                "re-run the same `cogbench eval` command until every item is scored"
                if run.run_record is not None
                else "score predictions of every item, re-running the same `cogbench score` command to retry "
                "failed judge queries"
            )
        )
    counts = run.scores["counts"]
    short = [
        f"{name} {m.get('n_scored', m.get('judged'))}/{m.get('n_expected', m.get('denominator'))} {m.get('unit', 'units')}"
        for name, m in run.scores["metrics"].items()
        if m.get("n_scored", m.get("judged")) != m.get("n_expected", m.get("denominator"))
    ]
    if counts.get("items") != counts.get("dataset_items"):
        short.append(f"{counts.get('items')} of {counts.get('dataset_items')} items scored")
    if short or run.scores.get("complete") is not True:
        raise NotPublishable(
            f"{run.folder}: refused: its flags say complete, its counts do not "
            f"({'; '.join(short) or 'complete is not true'}): the run folder was edited or is partial"
        )
    sample = sample_label(run.scores)
    if sample:
        raise NotPublishable(
            f"{run.folder}: refused: {sample}: the build is not the full release, its numbers are not the "
            "benchmark's; score a build of the full release"
        )


def parsing_mode(scores: dict[str, Any]) -> str:
    judge = scores["judge"]
    if scores["task"] == "vqa":
        return "robust answer-letter extractor"
    if judge["kind"] == "openai":
        return f"{judge.get('parsing', 'tolerant')} judge-reply parsing"
    return "no judge replies to parse"


def results_notes(scores: dict[str, Any], metric: str) -> str:
    """The notes of one result: interval, images, judge, parsing mode (``verify`` re-renders and compares)."""
    entry, settings = scores["metrics"][metric], scores["intervals"]
    low, high = entry["interval"]["overall"]
    judge = scores["judge"]
    answers = scores.get("answers") or {}
    truncated = (
        f"no answer (truncated) {answers['truncated']} of {answers['replies']} replies; "
        if answers.get("truncated") or answers.get("with_reasoning")
        else ""
    )
    for status, words in (("unclosed", "think block never closed"), ("unscored", "cut, thinking unknown: not read")):
        if answers.get(status):
            truncated += f"no answer ({words}) {answers[status]} of {answers['replies']} replies; "
    return (
        f"{100 * settings['level']:.0f}% CI [{fixed(low, 2)}, {fixed(high, 2)}] over {settings['clusters']} images "
        f"(Korn-Graubard, clustered by image); {scores['counts']['dataset_images']} images; "
        f"judge {judge['kind']}{':' + judge['model'] if judge.get('model') else ''}; parsing: {parsing_mode(scores)}; "
        f"{truncated}cogbench {(scores.get('provenance') or {}).get('cogbench_version', '?')}"
    )


def result_entries(run: ScoredRun, pinned: Pinned, source_url: str | None) -> dict[str, Any]:
    """``{file name: EvalResultEntry}`` for every benchmark task this run's metrics give."""
    from huggingface_hub import EvalResultEntry

    scores = run.scores
    date = datetime.fromtimestamp((run.folder / "scores.json").stat().st_mtime, UTC).date().isoformat()
    entries = {}
    for task_id, (config, metric) in BENCHMARK_TASKS.items():
        if config != scores["task"] or scores["metrics"].get(metric, {}).get("overall") is None:
            continue
        entries[f"{RESULTS_DIR}/{task_id}.yaml"] = EvalResultEntry(
            dataset_id=pinned.repo_id,
            task_id=task_id,
            value=float(fixed(scores["metrics"][metric]["overall"], 2)),  # the one rounding rule (cogbench/numbers.py)
            dataset_revision=pinned.revision,
            date=date,
            source_url=source_url,
            source_name="cogbench per-item details" if source_url else None,
            notes=results_notes(scores, metric),
        )
    return entries


def entries_text(entry: Any) -> str:
    from huggingface_hub import eval_result_entries_to_yaml

    return yaml.safe_dump(eval_result_entries_to_yaml([entry]), sort_keys=False, allow_unicode=True, width=200)


def model_index_text(model_repo: str, entries: list[Any]) -> str:
    """The card's ``model-index`` block for the same results (for tools that read only that)."""
    from huggingface_hub import EvalResult, ModelCardData

    results = [
        EvalResult(
            task_type="image-text-to-text",
            dataset_type=entry.dataset_id,
            dataset_name=entry.dataset_id,
            dataset_config=BENCHMARK_TASKS[entry.task_id][0],
            dataset_split="test",
            dataset_revision=entry.dataset_revision,
            metric_type=entry.task_id,
            metric_name=entry.task_id,
            metric_value=entry.value,
            source_url=entry.source_url,
            source_name=entry.source_name,
        )
        for entry in entries
    ]
    card = ModelCardData(model_name=model_repo.rsplit("/", maxsplit=1)[-1], eval_results=results)
    return yaml.safe_dump({"model-index": card.to_dict()["model-index"]}, sort_keys=False, width=200)


def load_runs(paths: list[str]) -> list[ScoredRun]:
    """Each run verified (``read_run``) and publishable; one run per task, one model."""
    runs = [read_run(path) for path in paths]
    for run in runs:
        check_publishable(run)
    tasks = [run.scores["task"] for run in runs]
    if len(set(tasks)) != len(tasks):
        raise UsageError("two runs of the same task: give one run per task (each task has one result file)")
    if len({run.scores["model"] for run in runs}) > 1:
        raise UsageError("runs of different models: publish each model's runs to its own --model-repo")
    return runs


def publish_results(args: Any, api: Any = None, say=print) -> int:
    """The command: verify, pin, write (dry run) or push details and open the results PR."""
    import tempfile

    from huggingface_hub import HfApi

    for option, value in (("--model-repo", args.model_repo), ("--details-repo", args.details_repo)):
        if value.count("/") != 1 or not all(value.split("/")):
            raise UsageError(f"{option} must be ORG/NAME, got {value!r}")
    if args.dry_run and not args.out:
        raise UsageError("--dry-run writes the files to --out DIR: give --out")
    if args.out:  # before any run is read: never into one
        check_apart(args.out, "--out", [("RUN", run) for run in args.runs])
    api = api or HfApi()
    runs = load_runs(args.runs)
    pins = [pin_dataset(run, api, args.dry_run) for run in runs]
    if len({pin.repo_id for pin in pins}) > 1:
        raise UsageError("runs of different Hub datasets: publish them separately")
    if args.out:
        claim_output(Path(args.out), "publish-results", OWNS, reads=[("RUN", run) for run in args.runs])
        return _write_and_push(args, api, runs, pins, Path(args.out), say)
    with tempfile.TemporaryDirectory(prefix="cogbench-results-") as tmp:
        return _write_and_push(args, api, runs, pins, Path(tmp), say)


def _write_and_push(args: Any, api: Any, runs: list[ScoredRun], pins: list[Pinned], out: Path, say) -> int:
    from huggingface_hub import CommitOperationAdd

    details_url = f"{redact_url(api.endpoint)}/datasets/{args.details_repo}"
    checks = _check_before_pr(args, api, runs, pins, say)
    skipped = [c.file for c in checks if c.status == "already present"]
    if checks and len(skipped) == len(checks) and not args.dry_run:
        say(f"nothing to add: {args.model_repo} already holds every result; nothing pushed, no pull request opened")
        return 0
    details_dataset.write_details(runs, out / DETAILS_DIR, pins[0].repo_id, pins[0].revision)
    records = [
        eee_records.build_record(run, args.model_repo, pin.repo_id, pin.revision, __version__)
        for run, pin in zip(runs, pins)
    ]
    for record in records:
        for name in eee_records.write_record(record, out / DETAILS_DIR / eee_records.EEE_DIR):
            say(f"Every Eval Ever record: {DETAILS_DIR}/{eee_records.EEE_DIR}/{name}")
    if not args.dry_run:
        try:
            api.create_repo(args.details_repo, repo_type="dataset", exist_ok=True)
            commit = api.upload_folder(
                repo_id=args.details_repo,
                folder_path=str(out / DETAILS_DIR),
                repo_type="dataset",
                commit_message=f"cogbench details: {runs[0].scores['model']}",
            )
        except Exception as error:
            raise CogbenchError(f"pushing the details to {args.details_repo} failed ({type(error).__name__})") from None
        details_url += f"/tree/{commit.oid}"
        say(f"pushed the details to {details_url}")
    entries = {
        name: entry
        for run, pin, record in zip(runs, pins, records)
        for name, entry in result_entries(run, pin, _source(args, details_url, record)).items()
    }
    for name, entry in entries.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(entries_text(entry), encoding="utf-8")
    (out / MODEL_INDEX_FILE).write_text(model_index_text(args.model_repo, list(entries.values())), encoding="utf-8")
    for pin in pins:
        if pin.note:
            say(f"note: {pin.repo_id}: {pin.note}; the files say `{pin.revision}`")
    for name, entry in entries.items():
        say(f"{name}: {entry.task_id} = {entry.value} ({entry.notes.split(';')[0]})")
    if args.dry_run:
        say(
            f"dry run: wrote {len(entries)} result file(s), {MODEL_INDEX_FILE} and {DETAILS_DIR}/ to {out}; nothing was pushed"
        )
        return 0
    operations = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(out / name))
        for name in entries
        if name not in skipped
    ]
    try:
        commit = api.create_commit(
            repo_id=args.model_repo,
            repo_type="model",
            operations=operations,
            commit_message=f"Add cogbench results ({', '.join(e.task_id for n, e in entries.items() if n not in skipped)})",
            commit_description=f"Per-item details: {details_url}. Check with `cogbench verify`.",
            create_pr=not args.no_pr,
        )
    except Exception as error:
        raise CogbenchError(f"writing the results to {args.model_repo} failed ({type(error).__name__})") from None
    say(f"opened {commit.pr_url}" if commit.pr_url else f"pushed to {args.model_repo} (commit {commit.oid[:12]})")
    if args.out:
        say(f"the model-index block for the model card is in {out / MODEL_INDEX_FILE}")
    return 0


def _source(args: Any, details_url: str, record: eee_records.EeeRecord) -> str:
    """A result's ``source``: the details dataset, or with ``--results-source eee`` its EEE record in it."""
    if getattr(args, "results_source", "details") != "eee":
        return details_url
    blob = details_url.replace("/tree/", "/blob/") if "/tree/" in details_url else f"{details_url}/blob/main"
    return f"{blob}/{eee_records.EEE_DIR}/{record.path}"


def _check_before_pr(args: Any, api: Any, runs: list[ScoredRun], pins: list[Pinned], say) -> list[pr_audit.Check]:
    """What the model repo holds for each result (``pr_audit``): printed; a conflict stops a push."""
    planned = {name: entry for run, pin in zip(runs, pins) for name, entry in result_entries(run, pin, None).items()}
    try:
        checks = pr_audit.audit(api, args.model_repo, planned)
    except CogbenchError as error:
        if not args.dry_run:
            raise
        say(f"before the pull request: not checked ({error})")
        return []
    for line in pr_audit.render(args.model_repo, checks):
        say(line)
    conflicts = [c.task_id for c in checks if c.status == "conflict"]
    if conflicts and not args.dry_run and not getattr(args, "allow_conflict", False):
        raise NotPublishable(
            f"{args.model_repo}: refused: {', '.join(conflicts)} already hold another value (above); "
            "nothing was pushed; look at them, then publish with --allow-conflict to open the pull request anyway"
        )
    return checks
