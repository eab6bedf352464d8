"""``cogbench sweep run DIR --ray ADDRESS``: one Ray task per shard not yet done, on a Ray cluster.

Each task runs its shard on a node exactly as ``sweep run-shard`` does (``execute.run_one``: ``eval`` restricted
to the shard's items, resumable, its attempt recorded), in a worker process of its own (``max_calls=1``: a fresh
interpreter per shard, as a Slurm array task has) and in the directory ``sweep run`` was started from, so the
sweep folder, the spec and the build are read at the same paths as here. The folder must therefore be on a file
system every node shares, at the same path (as Slurm assumes). Shards already done are skipped here, without a
task; each task's outcome is printed as it ends (a failed one does not stop the others), then the ledger is
rebuilt. ``ray`` is imported only when ``--ray`` is given: ``run_options.run_mode`` checks the address and that
Ray is installed before this module, and the shard's code, are loaded (``cogbench sweep run --ray`` and
``cogbench.sweep(ray=...)`` alike, through ``running.run_sweep``).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError, IncompleteRunError
from cogbench.redaction import redact_text
from cogbench.reference_eval.sweeping import ledger
from cogbench.reference_eval.sweeping.execute import Outcome, is_done, run_one, shard_at
from cogbench.reference_eval.sweeping.layout import PLAN_FILE, read_plan, shards_of


def failed(message: str, incomplete: bool = False) -> dict[str, Any]:
    return {"state": "failed", "error": redact_text(message), "incomplete": incomplete, "host": socket.gethostname()}


def shard_task(folder: str, directory: str, index: int) -> dict[str, Any]:
    """A Ray task, on a node: shard ``index`` of ``folder`` run as ``sweep run-shard`` runs it, from ``directory``.

    Returns plain values (the driver may run another cogbench than the node's)."""
    host = socket.gethostname()
    shared = "the sweep folder must be on a file system every node shares, at the same path"
    try:
        os.chdir(directory)
    except OSError:
        return failed(f"{directory}: no such directory on node {host} ({shared})")
    path = Path(folder)
    if not (path / PLAN_FILE).is_file():
        return failed(f"{path / PLAN_FILE}: not found on node {host} ({shared})")
    try:
        plan = read_plan(path)
        outcome = run_one(path, plan, shard_at(path, plan, index))
    except CogbenchError as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        return failed(first, isinstance(error, IncompleteRunError))
    return {"state": outcome.state, "error": outcome.error, "incomplete": outcome.incomplete, "host": host}


def connect(ray, address: str) -> None:
    """Join the cluster, quietly: Ray's own lines (which repeat the address) are not printed."""
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    except Exception as error:  # ConnectionError, a Ray Client timeout, a version mismatch: each one line
        words = str(error).strip().splitlines()
        reason = redact_text(words[0] if words else type(error).__name__)
        raise CogbenchError(f"--ray '{redact_text(address)}': could not join the Ray cluster: {reason}") from None


def task_error(error: BaseException) -> str:
    """A task that raised (its worker died, a node was lost, an unexpected exception): its last line, masked."""
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return redact_text(f"{type(error).__name__}: {lines[-1] if lines else ''}".rstrip(": "))


def say_line(line: str) -> None:
    print(line, flush=True)


def run_on_ray(
    folder: Path, address: str, num_cpus: float, num_gpus: float, say: Callable[[str], None] = say_line
) -> list[Outcome]:
    """``sweep run --ray``: every shard not yet done as one Ray task; the outcomes in shard order. Each line (a
    shard skipped, the tasks submitted, a shard's task ended) goes to ``say`` as it happens."""
    import ray  # run_options.run_mode checked that it is installed

    plan = read_plan(folder)
    shards = shards_of(folder, plan)
    ledger.rebuild(folder)
    outcomes: dict[int, Outcome] = {}
    pending = []
    for shard in shards:
        if is_done(folder, shard):
            outcomes[shard.index] = Outcome(shard, "skipped")
            say(outcomes[shard.index].line())
        else:
            pending.append(shard)
    if pending:
        connect(ray, address)
        try:
            task = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus, max_calls=1)(shard_task)
            directory = os.getcwd()
            running = {task.remote(str(folder), directory, shard.index): shard for shard in pending}
            say(
                f"ray {redact_text(address)}: {len(running)} shard tasks submitted, each reserving {num_cpus:g} CPU and "
                f"{num_gpus:g} GPU; {len(shards) - len(running)} already done"
            )
            while running:
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    shard = running.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayError as error:
                        outcome = Outcome(shard, "failed", task_error(error))
                    else:
                        outcome = Outcome(shard, result["state"], result.get("error"), bool(result.get("incomplete")))
                    outcomes[shard.index] = outcome
                    say(outcome.line())
        finally:
            ray.shutdown()
    ledger.rebuild(folder)
    return [outcomes[shard.index] for shard in shards]
