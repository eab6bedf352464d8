"""The runs of ``cogbench report``: loaded, labelled so no two look alike, described in one line, and
each one row of leaderboard.csv.

A label is the short model name, told apart by the shortest distinct tail of the
run folders when two runs share it; a legend adds the description mode and the
judge (``run_kind``), so runs that differ in either are never drawn alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.errors import UsageError
from cogbench.reference_eval.answers.reply_details import OPTIONAL_STATUSES
from cogbench.reference_eval.recording.run_kind import (
    MIXED,
    MODE_LABEL,
    UNRECORDED,
    description_mode,
    is_judged,
    judge_identity,
    judge_label,
    judge_name,
)
from cogbench.reference_eval.reports.comparable import report_mismatches
from cogbench.reference_eval.reports.compare import ScoredRun, load_run
from cogbench.reference_eval.run.completeness import run_labels, sample_label, shown_value


@dataclass
class ReportRun:
    run: ScoredRun
    label: str
    mode: str  # description mode from the prompts the run used (run_kind.description_mode); "" for other tasks
    not_comparable: str = ""  # how it differs from its task's first run (comparable.report_mismatches); never ranked

    @property
    def task(self) -> str:
        return self.run.scores["task"]

    @property
    def judge(self) -> str:
        """The judge of the run's judged metrics ("" when none decided any)."""
        return judge_label(self.run.scores) if is_judged(self.run.scores) else ""

    @property
    def legend(self) -> str:
        """The label as charts show it: with the judge and, for descriptions, the mode, so no two kinds look alike."""
        parts = [MODE_LABEL[self.mode]] if self.mode else []
        return self.label + "".join(f" [{part}]" for part in [*parts, self.judge] if part)

    @property
    def metrics(self) -> dict[str, Any]:
        return self.run.scores["metrics"]


def _short_model(model: str) -> str:
    """hf:/long/path/model -> hf:model (the full name stays in the Runs list and leaderboard.csv)."""
    backend, separator, name = model.partition(":")
    if separator and backend in ("hf", "openai") and "/" in name:
        return f"{backend}:{name.rstrip('/').rsplit('/', 1)[-1]}"
    return model


def _run_folder(run: ScoredRun) -> Path:
    """The folder a user names: an ``eval`` run's folder rather than its ``score`` subfolder."""
    return run.folder.parent if run.folder.name == "score" else run.folder


def _distinct_tails(folders: Sequence[Path]) -> list[str]:
    """Each folder by its shortest trailing path that no other folder shares ("a/x" and "b/x", not "x #1")."""
    tails = []
    for folder in folders:
        parts = folder.resolve().parts
        for k in range(1, len(parts) + 1):
            tail = parts[-k:]
            if sum(f.resolve().parts[-k:] == tail for f in folders) == 1:
                break
        tails.append("/".join(tail))
    return tails


def named_after_file(run: ScoredRun) -> bool:
    """Official-format predictions name no model: ``score`` names the run after the file's stem."""
    predictions = run.scores["predictions"]
    return predictions != "oracle" and run.scores["model"] == Path(predictions).stem


def load_report_runs(paths: Sequence[str], allow_mismatch: bool = False) -> list[ReportRun]:
    return label_report_runs([load_run(path) for path in paths], allow_mismatch)


def label_report_runs(runs: list[ScoredRun], allow_mismatch: bool = False) -> list[ReportRun]:
    """Runs already read and verified (``load_run``, or ``report --site``'s other inputs), labelled and checked."""
    if not runs:
        raise UsageError("give at least one run folder")
    modes = [description_mode(run.scores, run.run_record) for run in runs]
    mismatches = report_mismatches(runs, modes, allow_mismatch)
    models = [_short_model(run.scores["model"]) for run in runs]
    labels = list(models)
    for model in {m for m in models if models.count(m) > 1}:  # the same name twice: told apart by their folders
        same = [i for i, m in enumerate(models) if m == model]
        for i, tail in zip(same, _distinct_tails([_run_folder(runs[i]) for i in same])):
            labels[i] = f"{model} · {tail}"
    if len(set(labels)) < len(labels):  # one folder given twice
        labels = [f"{label} #{i + 1}" for i, label in enumerate(labels)]
    labels = [
        label
        + (" [circular]" if run.scores.get("circular") else "")
        + (" [no image]" if run.scores.get("no_image") else "")
        + (
            f" [image variants: {', '.join(run.scores['image_variants']['names'])}]"
            if run.scores.get("image_variants")
            else ""
        )
        + "".join(f" [{text}]" for text in run_labels(run.scores))
        + (f" [NOT COMPARABLE: {', '.join(what for what, _ in reasons)}]" if reasons else "")
        for run, label, reasons in zip(runs, labels, mismatches)
    ]
    whys = ["; ".join(why for _, why in reasons) for reasons in mismatches]
    return [ReportRun(*fields) for fields in zip(runs, labels, modes, whys)]


def run_line(run: ReportRun) -> str:
    """What the run is: model (or the file it was named after), task, mode, judge, dataset, items."""
    scores = run.run.scores
    model = (
        f"{scores['model']} (no model recorded: named after {scores['predictions']})"
        if named_after_file(run.run)
        else scores["model"]
    )
    mode = {
        UNRECORDED: "mode not recorded: the predictions name no prompt template, so the mode is not guessed",
        MIXED: "mixed prompts: the predictions name both modes' templates",
    }.get(run.mode, MODE_LABEL.get(run.mode, ""))
    judge = judge_label(scores) or "no judge"
    return ", ".join(
        x
        for x in (
            model,
            run.task,
            mode,
            judge,
            f"dataset {scores['dataset_revision']}",
            f"{scores['counts']['items']} items",
        )
        if x
    )


def leaderboard_rows(runs: list[ReportRun]) -> list[dict[str, Any]]:
    """One row per run: what it is, then every metric overall and per category with interval ends."""
    rows = []
    for run in runs:
        scores = run.run.scores
        row: dict[str, Any] = {
            "run": run.label,
            "model": scores["model"],
            "task": run.task,
            "mode": run.mode,
            "judge": judge_name(scores),
            "judge_parsing": judge_identity(scores)[2],
            "model_recorded": not named_after_file(run.run),
            "folder": str(run.run.folder),
            "dataset_revision": scores["dataset_revision"],
            "prompt_id": run.run.prompt_id or "",
            "items": scores["counts"]["items"],
            "sample": sample_label(scores),
            "not_comparable": run.not_comparable,
            # Replies with no answer before the token limit, and answers cut by it (answers/reasoning.py);
            # empty for runs scored before these were counted.
            "truncated": (scores.get("answers") or {}).get("truncated", ""),
            "cut": (scores.get("answers") or {}).get("cut", ""),
            # A think block never closed without the limit, and cut replies not read (thinking unknown).
            **{
                status: (scores["answers"].get(status, 0) if scores.get("answers") else "")
                for status in OPTIONAL_STATUSES
            },
            "replies": (scores.get("answers") or {}).get("replies", ""),
        }
        for name, metric in run.metrics.items():
            row[f"{name}.partial"] = bool(metric.get("partial"))
            row[f"{name}.n_scored"] = metric.get("n_scored", metric.get("judged", ""))
            row[f"{name}.n_expected"] = metric.get("n_expected", metric.get("denominator", ""))
            if "unscored" in metric:  # constrained judge parsing (judges/verdicts.py)
                row[f"{name}.unscored"] = metric["unscored"]
                row[f"{name}.unscored_rate"] = metric["unscored_rate"]
            interval = metric.get("interval") or {}
            cells = [(name, shown_value(metric), interval.get("overall"))]
            cells += [
                (f"{name}.{c}", v, (interval.get("per_category") or {}).get(c))
                for c, v in metric["per_category"].items()
            ]
            for key, value, ci in cells:
                row[key] = "" if value is None else value
                row[f"{key}.low"] = "" if not ci else ci[0]
                row[f"{key}.high"] = "" if not ci else ci[1]
        rows.append(row)
    return rows
