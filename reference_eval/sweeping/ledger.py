"""The sweep's ledger: each cell's and each shard's state and items done, in ``DIR/status.sqlite``.

The run folders are the truth (each shard's predictions, its attempt record, the merged run); the ledger
is rebuilt from them on every ``plan``, ``run``, ``merge`` and ``status``, into a new file swapped in
whole, so it can be deleted at any time. SQLite because it is in Python's standard library (no new
dependency on the core install), one file that any tool reads (``sqlite3 DIR/status.sqlite``), safe for
readers while a sweep runs (the swap is atomic), and queried with SQL: which models are complete on which
tasks is a ``GROUP BY`` over the ``cells`` table.

States: ``queued`` (not started, or stopped and resumable), ``running`` (an attempt whose process is alive on
this host), ``done`` (every shard answered all its items and was scored), ``failed`` (a shard's last attempt
failed: run again to retry), ``missing`` (planned, but the cell's folder is gone, or its shards were removed and
its merged run is gone). A cell whose shards ``merge --remove-shards`` removed (``cells/CELL/shards-removed.json``)
is read from its merged run: done and merged, each shard ``removed``, however many of their folders are left.
"""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.errors import UsageError
from cogbench.reference_eval.run.folder import done_keys
from cogbench.reference_eval.sweeping.layout import (
    LEDGER_FILE,
    attempt_path,
    cell_dir,
    merged_dir,
    read_json,
    read_plan,
    removal_path,
    shard_dir,
)

STATES = ("queued", "running", "done", "failed", "missing")
SCHEMA = """
CREATE TABLE cells (id TEXT PRIMARY KEY, task TEXT, model TEXT, label TEXT, thinking TEXT, max_new_tokens INTEGER,
    judge TEXT, state TEXT, items_done INTEGER, items_total INTEGER, shards_done INTEGER, shards_total INTEGER,
    merged INTEGER, shards_removed INTEGER);
CREATE TABLE shards (shard_index INTEGER PRIMARY KEY, cell TEXT REFERENCES cells(id), number INTEGER, state TEXT,
    items_done INTEGER, items_total INTEGER, error TEXT);
"""


@dataclass
class CellState:
    id: str
    state: str
    items_done: int
    items_total: int
    shards_done: int
    shards_total: int
    merged: bool
    shards_removed: int | None = None  # shard folders gone since `merge --remove-shards` (None: not asked)


def alive_here(attempt: dict[str, Any]) -> bool:
    """The attempt's process is alive on this host (a process elsewhere cannot be seen: taken as not)."""
    pid = attempt.get("pid")
    if attempt.get("host") != socket.gethostname() or not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_attempt(path: Path) -> dict[str, Any]:
    try:
        return read_json(path, "")
    except UsageError:
        return {}


def shard_state(folder: Path, cell: dict[str, Any], number: int) -> tuple[str, int, str | None]:
    """(state, items done, the last attempt's error) of one shard, from its run folder and attempt record."""
    items = cell["shards"][number]
    numbers = cell["queries_per_item"]
    done = done_keys(shard_dir(folder, cell["id"], number))
    shown = [None, *cell.get("image_variants", [])]  # the image, then each variant it is asked on again
    items_done = sum(1 for item in items if all((item, q, v) in done for q in numbers for v in shown))
    attempt = read_attempt(attempt_path(folder, cell["id"], number))
    scored = (shard_dir(folder, cell["id"], number) / "score" / "scores.json").is_file()
    if attempt.get("state") == "running" and alive_here(attempt):
        state = "running"
    elif attempt.get("state") == "done" and scored and items_done == len(items):
        state = "done"
    elif attempt.get("state") == "failed":
        state = "failed"
    else:
        state = "queued"
    return state, items_done, attempt.get("error") if state == "failed" else None


def collect(folder: Path) -> tuple[list[CellState], list[tuple[Any, ...]], list[dict[str, Any]]]:
    plan = read_plan(folder)
    states, shard_rows, records = [], [], []
    for entry in plan["cells"]:
        try:
            cell = read_json(cell_dir(folder, entry["id"]) / "cell.json", "")
        except UsageError:
            states.append(CellState(entry["id"], "missing", 0, entry["items"], 0, entry["shards"], False))
            records.append(entry)
            continue
        removed = removal_path(folder, entry["id"]).is_file()
        numbers = range(len(cell["shards"]))
        if removed:  # the merged run holds the cell: what is left of its shards is not read
            found = [("removed", len(cell["shards"][number]), None) for number in numbers]
        else:
            found = [shard_state(folder, cell, number) for number in numbers]
        for number, (state, items_done, error) in enumerate(found):
            row = (entry["first_index"] + number, entry["id"], number, state, items_done, len(cell["shards"][number]))
            shard_rows.append((*row, error))
        kinds = [state for state, _, _ in found]
        state = next((s for s in ("running", "failed") if s in kinds), "done" if set(kinds) == {"done"} else "queued")
        merged = (merged_dir(folder, entry["id"]) / "score" / "scores.json").is_file()
        if removed:
            state = "done" if merged else "missing"
        done = sum(items for _, items, _ in found) if state != "missing" else 0
        gone = sum(not shard_dir(folder, entry["id"], n).exists() for n in numbers) if removed else None
        shards_done = sum(kind in ("done", "removed") for kind in kinds) if state != "missing" else 0
        states.append(
            CellState(
                entry["id"], state, done, entry["items"], shards_done, len(kinds), merged and state == "done", gone
            )
        )
        records.append(entry)
    return states, shard_rows, records


def rebuild(folder: Path) -> list[CellState]:
    """Write ``DIR/status.sqlite`` anew from the run folders; returns each cell's state."""
    states, shard_rows, records = collect(folder)
    temporary = folder / f"{LEDGER_FILE}.{secrets.token_hex(6)}.tmp"
    connection = sqlite3.connect(temporary)
    try:
        connection.executescript(SCHEMA)
        connection.executemany(
            "INSERT INTO cells VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    s.id,
                    r["task"],
                    r["model"],
                    r["label"],
                    r["thinking"],
                    r["max_new_tokens"],
                    r["judge"],
                    s.state,
                    s.items_done,
                    s.items_total,
                    s.shards_done,
                    s.shards_total,
                    int(s.merged),
                    s.shards_removed,
                )
                for s, r in zip(states, records)
            ],
        )
        connection.executemany("INSERT INTO shards VALUES (?,?,?,?,?,?,?)", shard_rows)
        connection.commit()
    finally:
        connection.close()
    os.replace(temporary, folder / LEDGER_FILE)
    return states


def merged_column(merged: bool, removed: int | None, shards: int) -> str:
    """``status``'s last column: merged or not, and whether its shards were removed (or partly, a removal stopped)."""
    shown = "yes" if merged else "no"
    if removed is None:
        return shown
    return f"{shown}, shards removed" if removed == shards else f"{shown}, shards partly removed ({removed}/{shards})"


def status_lines(folder: Path) -> list[str]:
    """``cogbench sweep status``: one line per cell, read back from the rebuilt ledger, then the totals."""
    rebuild(folder)
    connection = sqlite3.connect(f"file:{folder / LEDGER_FILE}?mode=ro", uri=True)
    try:
        rows = connection.execute(
            "SELECT id, state, items_done, items_total, shards_done, shards_total, merged, shards_removed FROM cells "
            "ORDER BY id"
        ).fetchall()
        counts = dict(connection.execute("SELECT state, COUNT(*) FROM cells GROUP BY state").fetchall())
        failures = connection.execute(
            "SELECT shard_index, cell, error FROM shards WHERE state = 'failed' ORDER BY shard_index"
        ).fetchall()
    finally:
        connection.close()
    width = max((len(row[0]) for row in rows), default=4)
    lines = [f"{'cell':<{width}}  state    items      shards  merged"]
    for cell, state, done, total, shards_done, shards_total, merged, removed in rows:
        items = f"{done}/{total}"
        shown = merged_column(bool(merged), removed, shards_total)
        lines.append(f"{cell:<{width}}  {state:<7}  {items:<9}  {f'{shards_done}/{shards_total}':<6}  {shown}")
    lines.append("cells: " + ", ".join(f"{counts.get(state, 0)} {state}" for state in STATES))
    lines += [f"shard {index} ({cell}) failed: {error}" for index, cell, error in failures]
    return lines


def board_rows(folder: Path) -> dict[str, Any]:
    """What the board of ``report SWEEP_DIR --site`` reads (site/board.py): the ledger rebuilt, each cell's row in
    plan order with its first failed shard's error and its merged run folder, and the plan's build and limit."""
    rebuild(folder)
    connection = sqlite3.connect(f"file:{folder / LEDGER_FILE}?mode=ro", uri=True)
    try:
        connection.row_factory = sqlite3.Row
        rows = {row["id"]: dict(row) for row in connection.execute("SELECT * FROM cells")}
        errors: dict[str, str] = {}
        for cell, error in connection.execute(
            "SELECT cell, error FROM shards WHERE state = 'failed' ORDER BY shard_index"
        ):
            errors.setdefault(cell, error or "")
    finally:
        connection.close()
    plan = read_plan(folder)
    cells = []
    for entry in plan["cells"]:
        row = rows[entry["id"]]
        cells.append(
            {
                **row,
                "image_variants": entry.get("image_variants", []),  # the plan's (the ledger has no column for them)
                "error": errors.get(entry["id"], ""),
                "run": str(merged_dir(folder, entry["id"])),
            }
        )
    return {"sweep": str(folder), "build": plan.get("dataset_revision", ""), "limit": plan.get("limit"), "cells": cells}
