"""The board of a sweep (``cogbench report SWEEP_DIR --site DIR``): coverage, health and the complete cells ranked.

Each cell's state and items come from the sweep's ledger, rebuilt from the run folders first
(``sweeping.ledger.board_rows``, read by the ``report`` command and handed here as plain rows: queued, running,
done, failed, missing). A cell whose merged run exists is
verified as ``cogbench verify`` verifies it (``verifying.run_inputs.read_input``); one that does not verify is
``failed-verification``: shown with the first difference, never scored. A cell is **complete** when it is done,
merged and verified: only complete cells get a value, health figures (``board_health``) and a place in the
significance groups. A complete cell of a sweep run with ``limit`` is still a subset of the task's build: its
coverage labels (``PARTIAL``, ``SAMPLE``) stand beside each of its numbers.

Significance groups: per column (task and setting), the complete cells' headline metric, every pair compared
by the paired permutation test of ``cogbench compare`` (``leaderboard.pair_tests``), Holm's correction across
the pairs and the lettered groups (``leaderboard.ranked_metric``), as the site's leaderboard does. The cells of
one column share the sweep's plan (build, items, prompt, generation settings), so they are ranked together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError
from cogbench.numbers import fixed
from cogbench.option_types import DEFAULT_PERMUTATIONS, DEFAULT_SEED
from cogbench.reference_eval.reports.report_runs import ReportRun
from cogbench.reference_eval.run.completeness import run_labels, shown_value
from cogbench.reference_eval.site.board_health import health
from cogbench.reference_eval.site.leaderboard import METRIC_LABEL, TASK_TITLE, pair_tests, ranked_metric
from cogbench.reference_eval.site.significance import RULE
from cogbench.reference_eval.verifying.run_inputs import read_input

HEADLINE = {"vqa": "accuracy", "codis": "acc_p", "description": "cognition"}
COMPLETE, FAILED_VERIFICATION = "complete", "failed-verification"


def setting_label(cell: dict[str, Any]) -> str:
    tokens = cell["max_new_tokens"] if cell["max_new_tokens"] is not None else "default"
    variants = f", image variants {','.join(cell['image_variants'])}" if cell.get("image_variants") else ""
    return f"thinking {cell['thinking']}, tokens {tokens}, judge {cell['judge'] or 'default'}{variants}"


def _metric_value(metric: dict[str, Any] | None) -> dict[str, Any]:
    value = shown_value(metric)
    return {"v": value, "t": "-" if value is None else fixed(value, 1)}


def read_cell_run(folder: str, cell: dict[str, Any]) -> tuple[Any, str]:
    """(the verified run, "") of a merged cell, or (None, why it is not scored)."""
    if cell["state"] != "done":
        return None, ""
    if not cell["merged"]:
        return None, f"done, not merged: run `cogbench sweep merge {folder}`"
    try:
        return read_input(cell["run"])[0], ""
    except CogbenchError as error:
        return None, str(error)


def board_cell(folder: str, cell: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """What the board shows of one cell, and its verified run (None unless complete)."""
    entry = {
        "id": cell["id"],
        "model": cell["label"],
        "model_spec": cell["model"],
        "task": cell["task"],
        "setting": setting_label(cell),
        "state": cell["state"],
        "items_done": cell["items_done"],
        "items_total": cell["items_total"],
        "items_t": f"{cell['items_done']}/{cell['items_total']}",
        "note": cell["error"],
        "complete": False,
    }
    run, why = read_cell_run(folder, cell)
    if run is None:
        if why and cell["merged"]:
            entry["state"] = FAILED_VERIFICATION
        entry["note"] = why or entry["note"]
        return entry, None
    scores = run.scores
    headline = HEADLINE.get(cell["task"], "")
    if headline not in scores["metrics"]:  # a description run with no judge: recognition only
        headline = next(iter(scores["metrics"]))
    entry.update(
        complete=True,
        state=COMPLETE,
        metric=headline,
        metric_label=METRIC_LABEL.get(headline, headline),
        value=_metric_value(scores["metrics"].get(headline)),
        labels=run_labels(scores),
        health=health(cell["task"], run.details, Path(cell["run"]) / "predictions.jsonl"),
    )
    return entry, run


def _columns(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    columns: dict[tuple[str, str], dict[str, Any]] = {}
    for cell in cells:
        key = (cell["task"], cell["setting"])
        columns.setdefault(
            key,
            {"key": f"{key[0]}|{key[1]}", "task": key[0], "title": TASK_TITLE.get(key[0], key[0]), "setting": key[1]},
        )
    return list(columns.values())


def column_groups(
    cells: list[dict[str, Any]], runs: list[Any], alpha: float, permutations: int, seed: int
) -> dict[str, dict[str, Any]]:
    """Per column: the complete cells' significance letters on the headline metric (two cells or more)."""
    found: dict[str, dict[str, Any]] = {}
    for column in _columns(cells):
        members = [
            k
            for k, cell in enumerate(cells)
            if cell["complete"]
            and f"{cell['task']}|{cell['setting']}" == column["key"]
            and cell["value"]["v"] is not None
        ]
        if len(members) < 2:
            continue
        metric = cells[members[0]]["metric"]
        column_runs = [ReportRun(runs[k], cells[k]["model"], "") for k in members]
        positions = list(range(len(members)))
        tests = pair_tests(column_runs, {metric: [positions]}, permutations, seed)
        group = ranked_metric(column_runs, positions, metric, tests, alpha)
        found[column["key"]] = {
            "metric": metric,
            "letters": {cells[members[k]]["id"]: letters for k, letters in group["letters"].items()},
            "pairs": len(group["pairs"]),
            "mdd_t": group["mdd_t"],
        }
    return found


def best_settings(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model and task: the complete cell with the highest headline value (ties: the first planned)."""
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for cell in cells:
        if not cell["complete"] or cell["value"]["v"] is None:
            continue
        key = (cell["model"], cell["task"])
        if key not in best or cell["value"]["v"] > best[key]["value"]["v"]:
            best[key] = cell
    return [
        {
            "model": model,
            "task": task,
            "setting": cell["setting"],
            "metric_label": cell["metric_label"],
            "value_t": cell["value"]["t"],
            "labels": cell["labels"],
            "of": sum(1 for c in cells if c["model"] == model and c["task"] == task),
            "complete_of": sum(1 for c in cells if c["model"] == model and c["task"] == task and c["complete"]),
        }
        for (model, task), cell in best.items()
    ]


def board(
    sweep: dict[str, Any], alpha: float = 0.05, permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """Everything the board page shows, as plain data (written as ``data/board.js``). ``sweep``: the ledger's rows
    (``sweeping.ledger.board_rows``, read by the ``report`` command)."""
    cells, runs = [], []
    for cell in sweep["cells"]:
        entry, run = board_cell(sweep["sweep"], cell)
        cells.append(entry)
        runs.append(run)
    groups = column_groups(cells, runs, alpha, permutations, seed)
    for cell in cells:
        group = groups.get(f"{cell['task']}|{cell['setting']}")
        cell["letters"] = (group or {}).get("letters", {}).get(cell["id"], "")
    states: dict[str, int] = {}
    for cell in cells:
        states[cell["state"]] = states.get(cell["state"], 0) + 1
    return {
        "sweep": sweep["sweep"],
        "build": sweep["build"],
        "limit": sweep["limit"],
        "models": list(dict.fromkeys(cell["model"] for cell in cells)),
        "tasks": list(dict.fromkeys(cell["task"] for cell in cells)),
        "columns": _columns(cells),
        "cells": cells,
        "groups": groups,
        "best": best_settings(cells),
        "states": states,
        "alpha": alpha,
        "permutations": permutations,
        "rule": RULE.format(alpha=alpha),
    }
