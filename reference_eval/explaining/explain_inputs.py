"""The scorings ``explain`` reads: a run folder, a details dataset (a local folder written by
``publish-results``, or ``ORG/NAME[@REVISION]`` on the configured Hub) or an ``.eval_results`` file with
the details its ``source.url`` names.

Every input is read by ``verifying.run_inputs``, the reader of ``report --site``: a run folder through
``run_reader.read_run``, a details dataset and an ``.eval_results`` file verified as ``cogbench verify``
verifies them, before anything is explained. A details dataset or results file may hold several tasks;
``explain`` takes the one both inputs hold (``--task`` where they share several). A details dataset keeps
each item's details line but no eval run.json, so its generation settings are "not recorded"
(``stages.generation_of``), never guessed.
"""

from __future__ import annotations

from pathlib import Path

from cogbench.errors import UsageError
from cogbench.reference_eval.recording.run_reader import ScoredRun
from cogbench.reference_eval.verifying.run_inputs import read_input
from cogbench.reference_eval.verifying.verify import read_results_file
from cogbench.schemas.vocabulary import BENCHMARK_TASKS


def scorings_of(path: str) -> dict[str, ScoredRun]:
    """task -> its verified scoring in the input (an ``.eval_results`` file: only the tasks it states)."""
    runs = {run.scores["task"]: run for run in read_input(path)}
    if Path(path).is_file() and Path(path).suffix in (".yaml", ".yml"):
        ids = [(entry.get("dataset") or {}).get("task_id") for entry in read_results_file(Path(path))]
        stated = {BENCHMARK_TASKS[i][0] for i in ids if i in BENCHMARK_TASKS}
        runs = {task: run for task, run in runs.items() if task in stated}
    return runs


def shown(path: str, held: dict[str, ScoredRun], task: str) -> str:
    """How an input is named in the output: as the user gave it, with the task where it holds several."""
    folder = held[task].folder
    if folder in (Path(path), Path(path) / "score"):  # a run folder: shown as before, its score folder
        return str(folder)
    return f"{path} ({task})"


def _tasks(held: dict[str, ScoredRun]) -> str:
    names = [repr(task) for task in sorted(held)] or ["no task"]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def pick_task(paths: list[str], held: list[dict[str, ScoredRun]], task: str | None) -> str:
    """The task every input holds: ``task`` when given, else the only one they share; else one line."""
    if task is not None:
        for path, runs in zip(paths, held):
            if task not in runs:
                raise UsageError(f"{path}: holds no {task!r} scoring (it holds {_tasks(runs)}); choose with --task")
        return task
    shared = sorted(set.intersection(*(set(runs) for runs in held)))
    if len(shared) == 1:
        return shared[0]
    if not shared:
        if len(paths) == 1:
            raise UsageError(f"{paths[0]}: holds no scoring")
        raise UsageError(
            f"cannot explain {paths[0]} against {paths[1]}: they score different tasks "
            f"({_tasks(held[0])} and {_tasks(held[1])})"
        )
    raise UsageError(f"{' and '.join(paths)} hold {_tasks(dict.fromkeys(shared))}: choose one with --task")


def read_scorings(paths: list[str], task: str | None = None) -> list[tuple[ScoredRun, str]]:
    """Each input's verified scoring of one task, with the name it is shown under."""
    held = [scorings_of(path) for path in paths]
    chosen = pick_task(paths, held, task)
    return [(runs[chosen], shown(path, runs, chosen)) for path, runs in zip(paths, held)]
