"""What ``report --site`` and ``explain`` read: run folders, details datasets written by ``publish-results`` (a
local folder, or ``ORG/NAME[@REVISION]`` on the Hub) and ``.eval_results`` files with their details.

A run folder is verified as ``cogbench verify`` verifies it (every number and field re-derived from
details.jsonl: an answer edited after scoring no longer matches the answers' hash, an eval folder's
answers no longer match its predictions.jsonl); the run is then made of the files verify read, checked as
``run_reader.read_run`` checks them (``checked_run``), never read a second time. A details
dataset is first verified as ``cogbench verify`` verifies it (every number of
its scores.json, report.md and readable columns re-derived from the rows' details), and an ``.eval_results``
file with the details dataset its ``source.url`` names (each value re-derived too); any difference refuses
the input, naming the first. Each task of a details dataset then becomes one run.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from cogbench.errors import CogbenchError
from cogbench.reference_eval.recording.run_reader import RunNotVerified, ScoredRun, checked_run, prompt_of, read_run
from cogbench.reference_eval.verifying.result_source import details_source
from cogbench.reference_eval.verifying.verify import (
    details_tasks,
    hub_details,
    local_path_meant,
    no_local_path,
    read_results_file,
    verify,
)
from cogbench.reference_eval.verifying.verify_result import Verification

HUB_REPO = re.compile(r"^([\w.-]+/[\w.-]+)(?:@([\w.-]+))?$")


def is_details_dataset(path: Path) -> bool:
    """A folder written by ``publish-results``: Parquet details per task, no scores.json at its top."""
    return path.is_dir() and any(path.glob("data/*/test.parquet")) and not (path / "scores.json").exists()


def _verified(target: str, shown: str) -> Verification:
    """Refused, in one line, unless ``cogbench verify TARGET`` finds no difference (exit 1, as verify's)."""
    result = verify(target)
    if result.differences:
        # The first difference that names an item (the record edited), else the first.
        named = next((d for d in result.differences if d.items), result.differences[0])
        which = "first" if named is result.differences[0] else "first naming an item"
        raise RunNotVerified(
            f"{shown}: not verified, {len(result.differences)} difference(s); {which}: {named.line()} "
            f"(`cogbench verify {shlex.quote(shown)}` lists them all)"
        )
    return result


def details_dataset_runs(folder: Path, shown: str | None = None, checked: bool = False) -> list[ScoredRun]:
    """One verified run per task of a details dataset folder (``checked``: verified already)."""
    if not checked:
        _verified(str(folder), shown or str(folder))
    return [
        ScoredRun(folder / "runs" / task, data.scores, data.details, prompt_of(data.scores, None))
        for task, data in details_tasks(folder).items()
    ]


def eval_results_runs(file: Path) -> list[ScoredRun]:
    """The runs of the details dataset an ``.eval_results`` file names, after its values are verified."""
    try:
        entries = read_results_file(file)
    except OSError as error:
        raise CogbenchError(f"{file}: not readable ({type(error).__name__})") from None
    # Downloaded from the Hub configured here only, where the user's token belongs (verifying/result_source).
    repo, revision, _ = details_source(file, str((entries[0].get("source") or {}).get("url", "")))
    _verified(str(file), str(file))
    return details_dataset_runs(hub_details(repo, revision), checked=True)


def read_input(path: str) -> list[ScoredRun]:
    """One input as verified runs: one for a run folder, one per task of a details dataset."""
    local = Path(path)
    hub = None if local.exists() else HUB_REPO.match(path)
    if is_details_dataset(local):
        return details_dataset_runs(local)
    if local.is_file() and local.suffix in (".yaml", ".yml"):
        return eval_results_runs(local)
    if hub and local_path_meant(path):  # `runs/a` where runs/ is a folder here: a mistyped local path
        raise no_local_path(path)
    if hub:
        return details_dataset_runs(hub_details(hub.group(1), hub.group(2), given=path), shown=path)
    if local.is_dir():  # a run folder: every field shown re-derived as `cogbench verify` re-derives it
        # The run is made of the very files verify read and checked (not read again: what is used is what was
        # verified), then checked as read_run checks it.
        found = list(_verified(path, path).tasks.values())
        if len(found) == 1:
            return [checked_run(found[0].scores_path.parent, found[0].scores, found[0].details)]
    return [read_run(path)]  # no run folder: refused there, in one line


def read_inputs(paths: Sequence[str]) -> list[ScoredRun]:
    """Every input as verified runs, in the order given."""
    return [run for path in paths for run in read_input(path)]
