"""Running shards: ``cogbench sweep run-shard DIR --index I`` (one shard, as a cluster's array task runs it) and
``cogbench sweep run DIR`` (every shard on this machine, ``--jobs K`` cells at a time, each in its own process).

A shard is ``eval`` restricted to its items, through the Python API's ``run_evaluation`` (generation, then
``score``'s code): its folder is an ordinary eval run folder, so a shard stopped anywhere (Ctrl-C, SIGKILL)
resumes item by item from what its predictions already hold, as ``eval`` does. A shard that is done (answered
and scored) is skipped, and so is one whose folder ``merge --remove-shards`` removed (its merged run holds it).
Each attempt is recorded in ``cells/CELL/attempts/K.json`` (running, done or failed) for ``sweep status``.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import socket
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError, IncompleteRunError, UsageError, locate
from cogbench.redaction import MASK, redact_text
from cogbench.reference_eval.api.evaluation import run_evaluation
from cogbench.reference_eval.backends.openai_api import API_KEY_VARIABLE
from cogbench.reference_eval.run.runner import EvalSettings
from cogbench.reference_eval.scoring.options import ScoreOptions
from cogbench.reference_eval.sweeping import ledger, scoring_models
from cogbench.reference_eval.sweeping.launchers import INDEX_VARIABLES
from cogbench.reference_eval.sweeping.layout import (
    Shard,
    attempt_path,
    read_cell,
    read_plan,
    removal_path,
    shard_dir,
    shards_of,
    write_json,
)
from cogbench.reference_eval.sweeping.spec import read_spec

PR_SET_PDEATHSIG = 1  # prctl(2)


@dataclass
class Outcome:
    shard: Shard
    state: str  # done, skipped (done before), failed
    error: str | None = None
    incomplete: bool = False  # failed because model or judge queries failed (a re-run retries them)

    def line(self) -> str:
        where = f"shard {self.shard.index} ({self.shard.cell}, shard {self.shard.number})"
        if self.state == "failed":
            return f"{where}: failed: {self.error}"
        return f"{where}: {'already done' if self.state == 'skipped' else 'done'}, {len(self.shard.items)} items"


def index_from_environment(given: int | None) -> int:
    """``--index``, else the array task id Slurm sets, else the completion index of a Kubernetes Indexed Job."""
    if given is not None:
        return given
    for name in INDEX_VARIABLES:
        value = os.environ.get(name)
        if value is not None:
            if not value.isdigit():
                raise UsageError(f"{name}={value!r}: not a shard index (a whole number from 0)")
            return int(value)
    raise UsageError(f"give --index I, or run under Slurm or Kubernetes ({' or '.join(INDEX_VARIABLES)} set)")


def real_base_url(plan: dict[str, Any], cell: dict[str, Any]) -> str | None:
    """The cell's base URL as the spec gives it: plan.json holds it masked, so one with credentials is read
    from the spec again, which must be the spec the sweep was planned from."""
    shown = cell.get("base_url")
    if shown is None or MASK not in shown:
        return shown
    spec_path = Path(plan["spec"])
    spec = read_spec(spec_path)
    if spec.sha256 != plan["spec_sha256"]:
        raise UsageError(
            f"{spec_path}: changed since the sweep was planned (sha256 {spec.sha256[:12]}, planned "
            f"{plan['spec_sha256'][:12]}); plan it again"
        )
    for found in spec.cells:
        if found.id == cell["id"]:
            return found.base_url
    raise UsageError(f"{spec_path}: names no cell {cell['id']}; plan the sweep again")


def shard_settings(folder: Path, plan: dict[str, Any], cell: dict[str, Any], out: Path, items) -> tuple:
    """The shard's (or, with ``items`` None, the merged run's) ``EvalSettings`` and ``ScoreOptions``."""
    options = cell.get("settings") or {}
    extra = {"timeout_seconds": options["request_timeout"]} if "request_timeout" in options else {}
    settings = EvalSettings(
        task=cell["task"],
        model=cell["model"],
        dataset=plan["build"],
        out=out,
        limit=plan.get("limit"),
        max_new_tokens=cell["max_new_tokens"],
        thinking=cell["thinking"],
        base_url=real_base_url(plan, cell),
        item_ids=None if items is None else tuple(items),
        api_key_variable=cell.get("api_key_env") or API_KEY_VARIABLE,
        image_variants=tuple(cell.get("image_variants") or ()),
        **{name: options[name] for name in ("batch_size", "concurrency", "max_attempts") if name in options},
        **extra,
    )
    scoring = ScoreOptions(
        task=cell["task"],
        dataset=plan["build"],
        judge=real_judge(plan, cell),
        out=str(out / "score"),
        # A shard holds some of the config's items: its scores are PARTIAL, and say so.
        allow_partial=items is not None or plan.get("limit") is not None,
        image_variants=tuple(cell.get("image_variants") or ()),
    )
    if cell["task"] == "description":  # the models plan.json records, loaded once per process
        models = plan.get("description") or scoring_models.DEFAULTS
        scoring.spacy_model, scoring.embedder = models["spacy_model"], models["embedder"]
        scoring.embed_batch_size = models["embed_batch_size"]
        scoring.loaded_models = scoring_models.loaded(models)
    return settings, scoring


def real_judge(plan: dict[str, Any], cell: dict[str, Any]) -> str | None:
    judge = cell.get("judge")
    if judge is None or MASK not in judge:
        return judge
    for found in read_spec(plan["spec"]).cells:
        if found.id == cell["id"]:
            return found.judge
    raise UsageError(f"{plan['spec']}: names no cell {cell['id']}; plan the sweep again")


def check_key(plan: dict[str, Any], cell: dict[str, Any]) -> None:
    """The variable the cell's model entry names as its ``api_key_env`` set here, or one line naming the spec, the
    entry and the variable (never a value: the key is read only into the request headers)."""
    variable = cell.get("api_key_env")
    if variable is not None and not os.environ.get(variable):
        raise UsageError(
            f"{locate(plan['spec'], None, cell['api_key_field'])}: {variable} is not set in this environment "
            f"(the API key of {cell['model']}); set it where the shard runs"
        )


def check_keys(folder: Path, plan: dict[str, Any], shards: list[Shard]) -> None:
    """Every key variable the shards not yet done need, set here: checked before any of them runs."""
    for cell_id in dict.fromkeys(shard.cell for shard in shards if not is_done(folder, shard)):
        check_key(plan, read_cell(folder, cell_id))


def is_done(folder: Path, shard: Shard) -> bool:
    """Answered and scored; or its cell merged and its shards removed (``merge --remove-shards``): never run again."""
    if removal_path(folder, shard.cell).is_file():
        return True
    return (
        ledger.read_attempt(attempt_path(folder, shard.cell, shard.number)).get("state") == "done"
        and (shard_dir(folder, shard.cell, shard.number) / "score" / "scores.json").is_file()
    )


def run_one(folder: Path, plan: dict[str, Any], shard: Shard) -> Outcome:
    """Run (or resume) one shard; its attempt record says how it went."""
    if is_done(folder, shard):
        return Outcome(shard, "skipped")
    record = attempt_path(folder, shard.cell, shard.number)
    me = {"pid": os.getpid(), "host": socket.gethostname(), "started": round(time.time(), 3)}
    write_json(record, {**me, "state": "running"})
    try:
        cell = read_cell(folder, shard.cell)
        check_key(plan, cell)  # on a node (a Ray task, an array task), the node's own environment
        settings, scoring = shard_settings(folder, plan, cell, shard_dir(folder, shard.cell, shard.number), shard.items)
        run_evaluation(settings, scoring)
    except CogbenchError as error:
        message = redact_text(str(error).splitlines()[0] if str(error) else type(error).__name__)
        write_json(record, {**me, "state": "failed", "error": message, "finished": round(time.time(), 3)})
        return Outcome(shard, "failed", message, isinstance(error, IncompleteRunError))
    write_json(record, {**me, "state": "done", "finished": round(time.time(), 3)})
    return Outcome(shard, "done")


def shard_at(folder: Path, plan: dict[str, Any], index: int) -> Shard:
    shards = shards_of(folder, plan)
    if not 0 <= index < len(shards):
        raise UsageError(f"--index {index}: the sweep {folder} has shards 0 to {len(shards) - 1}")
    return shards[index]


def run_shard(folder: Path, index: int | None) -> Outcome:
    """``sweep run-shard``: the shard at ``index`` (or the cluster's index variable)."""
    plan = read_plan(folder)
    shard = shard_at(folder, plan, index_from_environment(index))
    check_keys(folder, plan, [shard])
    outcome = run_one(folder, plan, shard)
    ledger.rebuild(folder)
    return outcome


def run_cell(folder: Path, plan: dict[str, Any], shards: list[Shard]) -> list[Outcome]:
    """One cell's shards, one after another, each line printed as it ends."""
    outcomes = []
    for shard in shards:
        outcome = run_one(folder, plan, shard)
        print(outcome.line(), flush=True)
        outcomes.append(outcome)
    return outcomes


def _die_with_parent() -> None:
    """A worker process ends when ``sweep run`` does, even by SIGKILL (Linux: PR_SET_PDEATHSIG), so a killed run
    leaves no shard still being written under its lock; where that is not available, it ends after its cell."""
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def run_cells(folder: Path, plan: dict[str, Any], cells: list[list[Shard]]) -> list[Outcome]:
    """Cells one after another (each a list of its shards), in the process this is called in."""
    return [outcome for shards in cells for outcome in run_cell(folder, plan, shards)]


def run_all(folder: Path, jobs: int) -> list[Outcome]:
    """``sweep run``: every shard, cells ``jobs`` at a time, each cell's shards one after another.

    With ``jobs`` above 1 each cell runs in a worker process (spawned: a fresh interpreter, as loading datasets
    and scoring are not safe to run in threads side by side); with 1, here."""
    plan = read_plan(folder)
    by_cell: dict[str, list[Shard]] = {}
    for shard in shards_of(folder, plan):
        by_cell.setdefault(shard.cell, []).append(shard)
    check_keys(folder, plan, [shard for shards in by_cell.values() for shard in shards])
    ledger.rebuild(folder)
    if jobs == 1 or len(by_cell) == 1:
        outcomes = run_cells(folder, plan, list(by_cell.values()))
    else:
        outcomes = sorted(in_workers(folder, plan, by_cell, jobs), key=lambda outcome: outcome.shard.index)
    ledger.rebuild(folder)
    return outcomes


def in_workers(folder: Path, plan: dict[str, Any], by_cell: dict[str, list[Shard]], jobs: int) -> list[Outcome]:
    """Every cell in ``jobs`` worker processes. The description cells run one after another in one worker of their
    own, whose process ends when they are done: the Recognition Score's models (spaCy, torch, the embedder: ~450 MB)
    are then loaded by one process, not by every worker, and given back once the descriptions are scored. The other
    cells share the other workers, and every worker once the descriptions are done."""
    task_of = {cell["id"]: cell["task"] for cell in plan["cells"]}
    lane = [shards for cell, shards in by_cell.items() if task_of.get(cell) == "description"]
    queue = [shards for cell, shards in by_cell.items() if task_of.get(cell) != "description"]
    context = multiprocessing.get_context("spawn")
    pools: list[ProcessPoolExecutor] = []

    def pool(workers: int) -> ProcessPoolExecutor:
        pools.append(ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_die_with_parent))
        return pools[-1]

    running: dict[Future, ProcessPoolExecutor] = {}
    outcomes: list[Outcome] = []
    lane_pool = pool(1) if lane else None
    if lane_pool is not None:
        running[lane_pool.submit(run_cells, folder, plan, lane)] = lane_pool
    general = jobs - 1 if lane else jobs
    free = [pool(general)] * general if queue else []  # one entry per slot
    try:
        while running or queue:
            while queue and free:
                executor = free.pop()
                running[executor.submit(run_cells, folder, plan, [queue.pop(0)])] = executor
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                executor = running.pop(future)
                outcomes += future.result()
                if executor is lane_pool:  # its process ends, and the models with it; a fresh worker takes its slot
                    executor.shutdown()
                    executor = pool(1)
                free.append(executor)
    finally:
        for each in pools:
            each.shutdown(cancel_futures=True)
    return outcomes


def failure(outcomes: list[Outcome]) -> CogbenchError | None:
    """The error of a run with failed shards (``IncompleteRunError`` when only queries failed); None when none did."""
    failed = [o for o in outcomes if o.state == "failed"]
    if not failed:
        return None
    message = (
        f"{len(failed)} of {len(outcomes)} shards failed (first: shard {failed[0].shard.index}, "
        f"{failed[0].shard.cell}: {failed[0].error}); run the same command again to resume them"
    )
    return IncompleteRunError(message) if all(o.incomplete for o in failed) else CogbenchError(message)


def finish(outcomes: list[Outcome]) -> int:
    """The exit of ``run`` / ``run-shard``: 0 when every shard is done; a failure is raised as its error line."""
    error = failure(outcomes)
    if error is None:
        return 0
    if isinstance(error, IncompleteRunError):
        raise error
    print(f"error: {error}", file=sys.stderr)
    return 1
