"""``sweep run``'s one function: every shard of a sweep here (``execute.run_all``) or on a Ray cluster
(``on_ray.run_on_ray``), as a ``run_options.RunMode`` says; ``cogbench sweep run`` and ``cogbench.sweep`` both
call it, after ``run_options.run_mode`` has checked their options."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cogbench.reference_eval.sweeping.execute import Outcome, run_all
from cogbench.reference_eval.sweeping.on_ray import run_on_ray, say_line
from cogbench.reference_eval.sweeping.run_options import RunMode


def run_sweep(folder: Path, mode: RunMode, say: Callable[[str], None] = say_line) -> list[Outcome]:
    """Every shard of ``folder`` not yet done, run as ``mode`` says; the outcomes in shard order. Each shard's line
    is printed as it ends (on Ray through ``say``, which also hears the tasks' submission line)."""
    if mode.ray is None:
        return run_all(folder, mode.jobs)
    return run_on_ray(folder, mode.ray, mode.num_cpus, mode.num_gpus, say)
