"""What ``report --site`` reads: run folders, and details datasets written by ``publish-results``.

A run folder is read by ``run_reader.read_run`` (schema-checked, every number recomputed from
details.jsonl). A local details dataset (``data/<task>/test.parquet`` with ``runs/<task>/scores.json``)
is first verified as ``cogbench verify`` verifies it (every number of its scores.json, report.md and
readable columns re-derived from the rows' details); any difference refuses it, naming the first. Each of
its tasks then becomes one run. Details datasets on the Hub and ``.eval_results`` files are not read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cogbench.reference_eval.reports.run_reader import RunNotVerified, ScoredRun, prompt_of, read_run
from cogbench.reference_eval.reports.verify import details_tasks, verify


def is_details_dataset(path: Path) -> bool:
    """A folder written by ``publish-results``: Parquet details per task, no scores.json at its top."""
    return path.is_dir() and any(path.glob("data/*/test.parquet")) and not (path / "scores.json").exists()


def details_dataset_runs(folder: Path) -> list[ScoredRun]:
    """One verified run per task of a local details dataset."""
    result = verify(str(folder))
    if result.differences:
        raise RunNotVerified(
            f"{folder}: not verified, {len(result.differences)} difference(s); first: {result.differences[0].line()} "
            f"(`cogbench verify {folder}` lists them all)"
        )
    return [
        ScoredRun(folder / "runs" / task, data.scores, data.details, prompt_of(data.scores, None))
        for task, data in details_tasks(folder).items()
    ]


def read_inputs(paths: Sequence[str]) -> list[ScoredRun]:
    """Every input as verified runs, in the order given."""
    runs: list[ScoredRun] = []
    for path in paths:
        runs += details_dataset_runs(Path(path)) if is_details_dataset(Path(path)) else [read_run(path)]
    return runs
