"""``cogbench.sweep``: a sweep from Python (issue 50, item 7), on the code path of ``cogbench sweep``.

``sweep(spec, out)`` is ``sweep plan SPEC --out DIR`` (``plan.plan_sweep``), then ``sweep run DIR --jobs J``
(``execute.run_all``, refused as the command refuses it when a shard failed), then ``sweep merge DIR``
(``merge.merge_sweep``); each cell's state is what ``sweep status`` shows (``ledger.rebuild``). It sits in
sweeping/, above api/ (ARCHITECTURE.md), and ``cogbench`` names it lazily, as it names ``explain``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cogbench.errors import UsageError, echoed
from cogbench.reference_eval.api.arguments import flag
from cogbench.reference_eval.sweeping import ledger
from cogbench.reference_eval.sweeping.execute import failure, run_all
from cogbench.reference_eval.sweeping.launchers import DEFAULT_IMAGE
from cogbench.reference_eval.sweeping.layout import merged_dir
from cogbench.reference_eval.sweeping.merge import merge_sweep
from cogbench.reference_eval.sweeping.plan import Cost, plan_sweep


@dataclass(frozen=True)
class SweepCell:
    """One cell as ``cogbench sweep status`` shows it; ``run`` is its merged run folder once merged."""

    id: str
    state: str  # queued, running, done, failed or missing
    items_done: int
    items_total: int
    shards_done: int
    shards_total: int
    merged: bool
    run: Path | None


@dataclass(frozen=True)
class SweepResult:
    """What ``cogbench.sweep`` did: the sweep folder, the plan's cost, each cell, the lines the commands print."""

    folder: Path
    cost: Cost
    cells: tuple[SweepCell, ...]
    lines: tuple[str, ...]

    @property
    def runs(self) -> dict[str, Path]:
        """Each merged cell's run folder (an ordinary eval run folder), by cell id."""
        return {cell.id: cell.run for cell in self.cells if cell.run is not None}


def _whole(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"sweep: {name} must be a whole number of 1 or more, not {echoed(value)}")
    return value


def _path(value: object, name: str) -> Path:
    if not isinstance(value, (str, os.PathLike)):
        raise UsageError(f"sweep: {name} must be a path, not {type(value).__name__} {echoed(value)}")
    return Path(value)


def sweep(
    spec: str | os.PathLike,
    out: str | os.PathLike,
    shards: int = 1,
    jobs: int = 1,
    run: bool = True,
    merge: bool = True,
    image: str = DEFAULT_IMAGE,
    remove_shards: bool = False,
) -> SweepResult:
    """Plan the sweep of ``spec`` (sweep.yaml) into ``out``, run every shard here and merge every cell.

    The defaults are ``cogbench sweep plan``'s and ``sweep run``'s. ``run=False`` plans only (the cost, the
    Slurm script and Kubernetes Job to run elsewhere); ``merge=False`` leaves the shards unmerged;
    ``remove_shards=True`` removes each cell's shard folders once its merged run verifies (``sweep merge
    --remove-shards``: only files cogbench wrote, a folder holding another refused, nothing removed). A planned
    folder is planned again only for the same plan, and a run resumes what an earlier one left (as the
    commands do). A failed shard raises ``CogbenchError`` (``IncompleteRunError`` when only model or judge
    queries failed: call again to retry them) with the line ``sweep run`` prints, before any merge.
    """
    spec, folder = _path(spec, "spec"), _path(out, "out")
    shards, jobs = _whole(shards, "shards"), _whole(jobs, "jobs")
    run, merge = flag(run, "sweep: run"), flag(merge, "sweep: merge")
    remove_shards = flag(remove_shards, "sweep: remove_shards")
    if not isinstance(image, str) or not image:
        raise UsageError(f"sweep: image must be a container image name, not {echoed(image)}")
    if merge and not run:
        raise UsageError("sweep: merge=True needs run=True (a cell is merged once its shards have run)")
    if remove_shards and not merge:
        raise UsageError(
            "sweep: remove_shards=True needs merge=True (shards are removed once their merged run verifies)"
        )
    cost = plan_sweep(spec, folder, shards, image)
    lines = [*cost.lines()]
    if run:
        outcomes = run_all(folder, jobs)
        lines += [outcome.line() for outcome in outcomes]
        error = failure(outcomes)
        if error is not None:
            raise error
    if merge:
        lines += merge_sweep(folder, remove_shards=remove_shards)
    cells = tuple(
        SweepCell(
            id=state.id,
            state=state.state,
            items_done=state.items_done,
            items_total=state.items_total,
            shards_done=state.shards_done,
            shards_total=state.shards_total,
            merged=state.merged,
            run=merged_dir(folder, state.id) if state.merged else None,
        )
        for state in ledger.rebuild(folder)
    )
    return SweepResult(folder=folder, cost=cost, cells=cells, lines=tuple(lines))
