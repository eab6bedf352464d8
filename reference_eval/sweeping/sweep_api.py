"""``cogbench.sweep``: a sweep from Python (issue 50, item 7), on the code path of ``cogbench sweep``.

``sweep(spec, out)`` is ``sweep plan SPEC --out DIR`` (``plan.plan_sweep``), then ``sweep run DIR --jobs J``
or ``sweep run DIR --ray ADDRESS`` (``run_options.run_mode``, then ``running.run_sweep``: the command's checks and
code; refused as the command refuses it when a shard failed), then ``sweep merge DIR`` (``merge.merge_sweep``);
each cell's state is what ``sweep status`` shows (``ledger.rebuild``). It sits in sweeping/, above api/
(ARCHITECTURE.md), and ``cogbench`` names it lazily, as it names ``explain``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cogbench.errors import UsageError, echoed
from cogbench.reference_eval.api.arguments import checked, flag
from cogbench.reference_eval.sweeping import cli as sweep_cli
from cogbench.reference_eval.sweeping import ledger
from cogbench.reference_eval.sweeping.execute import failure
from cogbench.reference_eval.sweeping.launchers import DEFAULT_IMAGE
from cogbench.reference_eval.sweeping.layout import merged_dir
from cogbench.reference_eval.sweeping.merge import merge_sweep
from cogbench.reference_eval.sweeping.on_ray import say_line
from cogbench.reference_eval.sweeping.plan import Cost, plan_sweep
from cogbench.reference_eval.sweeping.run_options import run_mode
from cogbench.reference_eval.sweeping.running import run_sweep


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
    jobs: int | None = None,
    run: bool = True,
    merge: bool = True,
    image: str = DEFAULT_IMAGE,
    ray: str | None = None,
    ray_num_cpus: float | None = None,
    ray_num_gpus: float | None = None,
    remove_shards: bool = False,
) -> SweepResult:
    """Plan the sweep of ``spec`` (sweep.yaml) into ``out``, run every shard here or on Ray and merge every cell.

    The defaults are ``cogbench sweep plan``'s and ``sweep run``'s (``jobs`` None: one cell at a time here).
    ``ray``: the address of a Ray cluster (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``), whose tasks run each
    shard not yet done, reserving ``ray_num_cpus`` CPUs (default 1) and ``ray_num_gpus`` GPUs (default 0) each,
    as ``sweep run --ray`` does (the sweep folder on a file system every node shares, at the same path;
    docs/sweeps.md); ``jobs`` does not apply there. Every argument is checked before anything is planned, as
    the command checks its options (``UsageError`` with the command's message; an address shown masked).
    ``run=False`` plans only (the cost, the Slurm script and Kubernetes Job to run elsewhere); ``merge=False``
    leaves the shards unmerged; ``remove_shards=True`` removes each cell's shard folders once its merged run
    verifies (``sweep merge --remove-shards``: only files cogbench wrote, a folder holding another refused,
    nothing removed). A planned folder is planned again only for the same plan, and a run resumes
    what an earlier one left (as the commands do). A failed shard raises ``CogbenchError``
    (``IncompleteRunError`` when only model or judge queries failed: call again to retry them) with the line
    ``sweep run`` prints, before any merge.
    """
    spec, folder = _path(spec, "spec"), _path(out, "out")
    shards = _whole(shards, "shards")
    jobs = None if jobs is None else _whole(jobs, "jobs")
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
    given = {"ray": ray, "ray_num_cpus": ray_num_cpus, "ray_num_gpus": ray_num_gpus}
    if not run and any(value is not None for value in given.values()):
        raise UsageError("sweep: ray=, ray_num_cpus= and ray_num_gpus= need run=True (they say where shards run)")
    # Each as `sweep run`'s option of that name converts and checks it, then the options together.
    given = checked("sweep run", given, registers=(sweep_cli.register,))
    mode = run_mode(jobs, given["ray"], given["ray_num_cpus"], given["ray_num_gpus"]) if run else None
    cost = plan_sweep(spec, folder, shards, image)
    lines = [*cost.lines()]
    if mode is not None:
        said: list[str] = []

        def say(line: str) -> None:  # printed as the command prints it, and kept for the result
            say_line(line)
            said.append(line)

        outcomes = run_sweep(folder, mode, say)
        lines += said if mode.ray is not None else [outcome.line() for outcome in outcomes]
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
