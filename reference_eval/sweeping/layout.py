"""A sweep folder's layout, and its plan read back.

::

    DIR/.cogbench-output.json       the output marker (kind "sweep")
    DIR/plan.json                   the spec it was planned from (path, sha256), the build, and every shard by index
    DIR/status.sqlite               the ledger (``ledger``), rebuilt from the run folders: never the source of truth
    DIR/slurm.sh, DIR/kubernetes-job.yaml   one array task / completion index per shard (``launchers``)
    DIR/cells/CELL/cell.json        the cell's settings (URLs masked) and its shards' item ids
    DIR/cells/CELL/shards/K/        shard K: an ordinary ``eval`` run folder restricted to its items
    DIR/cells/CELL/attempts/K.json  shard K's last attempt: running, done or failed (and why), when
    DIR/cells/CELL/run/             the merged run (``sweep merge``): an ordinary ``eval`` run folder
    DIR/cells/CELL/shards-removed.json   written before ``sweep merge --remove-shards`` removes the cell's shard
                                    folders (``shard_removal``): from then on the merged run holds the cell

Every file pattern is listed in ``SWEEP_FILES``: ``claim_output`` refuses a folder holding anything else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.output import OUTPUT_MARKER, read_output_marker
from cogbench.dataset_builders.writes import temporary_pattern, write_file
from cogbench.errors import UsageError
from cogbench.reference_eval.formats.predictions import parse_json
from cogbench.reference_eval.run.folder import EVAL_FILES

KIND = "sweep"
PLAN_FILE = "plan.json"
LEDGER_FILE = "status.sqlite"
SLURM_FILE = "slurm.sh"
KUBERNETES_FILE = "kubernetes-job.yaml"
REMOVED_FILE = "shards-removed.json"
PLAN_FORMAT = 1
EVAL_FOLDER_FILES = (OUTPUT_MARKER, f"{OUTPUT_MARKER}.*.tmp", *EVAL_FILES)  # all an eval run folder may hold
_OWN = (
    PLAN_FILE,
    LEDGER_FILE,
    f"{LEDGER_FILE}-journal",
    f"{LEDGER_FILE}.*.tmp",
    f"{LEDGER_FILE}.*.tmp-journal",  # SQLite's journal beside a ledger being written, left by a killed process
    SLURM_FILE,
    KUBERNETES_FILE,
    "cells/*/cell.json",
    "cells/*/attempts/*.json",
    f"cells/*/{REMOVED_FILE}",
)
SWEEP_FILES = (
    *_OWN,
    *(temporary_pattern(name) for name in _OWN),
    *(f"cells/*/shards/*/{name}" for name in EVAL_FOLDER_FILES),
    *(f"cells/*/run/{name}" for name in EVAL_FOLDER_FILES),
)


@dataclass(frozen=True)
class Shard:
    index: int  # across the whole sweep: the Slurm array task id, the Kubernetes completion index
    cell: str
    number: int  # within its cell
    items: tuple[str, ...]


def cell_dir(folder: Path, cell: str) -> Path:
    return folder / "cells" / cell


def shard_dir(folder: Path, cell: str, number: int) -> Path:
    return cell_dir(folder, cell) / "shards" / str(number)


def merged_dir(folder: Path, cell: str) -> Path:
    return cell_dir(folder, cell) / "run"


def removal_path(folder: Path, cell: str) -> Path:
    return cell_dir(folder, cell) / REMOVED_FILE


def attempt_path(folder: Path, cell: str, number: int) -> Path:
    return cell_dir(folder, cell) / "attempts" / f"{number}.json"


def read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: missing; {what}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: not readable ({error})") from None
    value = parse_json(text, str(path))
    if not isinstance(value, dict):
        raise UsageError(f"{path}: not a JSON object, as cogbench writes it")
    return value


def read_plan(folder: Path) -> dict[str, Any]:
    """``DIR/plan.json``, in a folder marked as a sweep's; anything else is one line."""
    marker = read_output_marker(folder)
    if marker is None or marker.get("kind") != KIND:
        raise UsageError(f"{folder}: not a sweep folder (no {OUTPUT_MARKER} of `cogbench sweep plan`); plan it first")
    plan = read_json(folder / PLAN_FILE, "plan the sweep again (`sweep plan`, this folder as its output)")
    if plan.get("format") != PLAN_FORMAT or not isinstance(plan.get("cells"), list):
        raise UsageError(f"{folder / PLAN_FILE}: not a sweep plan of format {PLAN_FORMAT}; plan the sweep again")
    return plan


def read_cell(folder: Path, cell: str) -> dict[str, Any]:
    return read_json(cell_dir(folder, cell) / "cell.json", "plan the sweep again to write it")


def shards_of(folder: Path, plan: dict[str, Any]) -> list[Shard]:
    """Every shard of the sweep, by index."""
    found = []
    for entry in plan["cells"]:
        cell = read_cell(folder, entry["id"])
        for number, items in enumerate(cell["shards"]):
            found.append(Shard(entry["first_index"] + number, entry["id"], number, tuple(items)))
    return found


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, json.dumps(value, indent=2, sort_keys=True) + "\n")
