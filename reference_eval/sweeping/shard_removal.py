"""``cogbench sweep merge DIR --remove-shards``: a cell's shard folders removed once its merged run verifies.

Only on request, and only after ``merge`` wrote and verified the cell's run: that run is verified again right
before anything is removed, and every shard folder must hold only what ``eval`` writes (``EVAL_FOLDER_FILES``,
under its ``eval`` marker, no link); a shard holding any other file is refused in one line and nothing is removed.
Then ``cells/CELL/shards-removed.json`` is written, before the first file goes: from that moment the merged run
holds the cell. The ledger reads the cell as done and merged with its shards removed, ``sweep run`` skips its
shards (they are not run again), and ``sweep merge`` does not merge it again from what is left. Each shard is
removed under its run lock (an ``eval`` still writing it stops the removal there), file by file, its marker
last, then its empty folders. A removal stopped anywhere (a kill, a held lock) leaves a state every command reads
the same way, and ``merge --remove-shards`` again goes on from there. The attempt records are kept.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.output import OUTPUT_MARKER, folder_files, kind_of, owned
from cogbench.dataset_builders.raw import sha256_file
from cogbench.errors import CogbenchError, UsageError
from cogbench.reference_eval.run.lock import RunLock
from cogbench.reference_eval.sweeping.layout import (
    EVAL_FOLDER_FILES,
    cell_dir,
    merged_dir,
    read_cell,
    removal_path,
    shard_dir,
    write_json,
)
from cogbench.reference_eval.verifying.verify import verify

RECORD_FORMAT = 1
LOCK_FILES = ("rank-0.lock", "rank-0.lock.json")  # RunLock's, removed by its release(forget=True)
FOLDERS = ("shards", "score")  # the folders eval makes in a run folder


def requested(folder: Path, cell_id: str) -> bool:
    """The cell's shards are removed, or being removed: its merged run holds the cell."""
    return removal_path(folder, cell_id).is_file()


def left(folder: Path, cell: dict[str, Any]) -> list[int]:
    """The cell's shards whose folders are still there."""
    return [n for n in range(len(cell["shards"])) if shard_dir(folder, cell["id"], n).exists()]


def verified_run(folder: Path, plan: dict[str, Any], cell_id: str) -> Path:
    """The cell's merged run, verified now against the build; else one line, and nothing is removed."""
    out = merged_dir(folder, cell_id)
    if not (out / "score" / "scores.json").is_file():
        gone = f" and its shards were removed ({removal_path(folder, cell_id)})" if requested(folder, cell_id) else ""
        raise CogbenchError(f"{out}: no merged run{gone}; nothing to remove its shards for")
    try:
        result = verify(str(out), dataset=plan["build"])
    except CogbenchError as error:
        raise CogbenchError(f"{out}: verify cannot read the merged run ({str(error).splitlines()[0]})") from None
    if result.differences:
        raise CogbenchError(
            f"{out}: the merged run does not verify ({result.differences[0].line()}); its shards are kept"
        )
    return out


def refuse_strangers(where: Path) -> None:
    """A shard folder holds only what ``eval`` writes there, under its marker, and no link; else one line."""
    for path in (where.parent, where):
        if path.is_symlink() or not path.is_dir():
            raise UsageError(
                f"{path}: {'a symbolic link' if path.is_symlink() else 'not a folder'}, which cogbench never makes "
                "there; refusing to remove this cell's shards: move it away, then merge with --remove-shards again"
            )
    names = folder_files(where)
    links = [name for name in names if (where / name).is_symlink()]
    folders = [p.relative_to(where).as_posix() for p in where.rglob("*") if p.is_dir() and not p.is_symlink()]
    strangers = [name for name in names if not owned(name, EVAL_FOLDER_FILES)]
    strangers += [f"{name}/" for name in folders if name not in FOLDERS]
    if links or strangers:
        listed = links or strangers
        shown = ", ".join(listed[:3]) + (f" and {len(listed) - 3} more" if len(listed) > 3 else "")
        what = "a symbolic link" if links else "files cogbench did not write"
        raise UsageError(
            f"{where}: holds {what} ({shown}); refusing to remove this cell's shards: move them away, then merge "
            "with --remove-shards again"
        )
    if names and kind_of(where) != "eval":
        raise UsageError(
            f"{where}: not marked as the output of `cogbench eval` ({OUTPUT_MARKER}); refusing to remove this "
            "cell's shards"
        )


def remove_folder(where: Path, again: str) -> None:
    """One shard folder, under its run lock: its files (the marker last), then its empty folders. ``again``: the
    command that goes on, printed when another process holds the lock."""
    escaped = again.replace("{", "{{").replace("}", "}}")  # the refusal is a format string for its {holder}
    lock = RunLock(
        where,
        refusal="another process is writing this shard ({holder}); the removal of its cell's shards stops "
        f"here: run `{escaped}` again once it has finished",
    ).acquire()
    try:
        for name in folder_files(where):
            if name not in (*LOCK_FILES, OUTPUT_MARKER):
                (where / name).unlink()
    finally:
        lock.release(forget=True)
    (where / OUTPUT_MARKER).unlink(missing_ok=True)
    for inner in sorted((p for p in where.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        inner.rmdir()
    where.rmdir()


def remove_shards(folder: Path, plan: dict[str, Any], cell_id: str) -> str:
    """Remove the shard folders of one merged cell (or the rest of them); returns the line ``merge`` prints."""
    cell = read_cell(folder, cell_id)
    out = verified_run(folder, plan, cell_id)
    remaining = left(folder, cell)
    for number in remaining:  # every shard checked before the first file is removed
        refuse_strangers(shard_dir(folder, cell_id, number))
    record = removal_path(folder, cell_id)
    if not record.is_file():
        scores = out / "score" / "scores.json"
        write_json(
            record,
            {
                "format": RECORD_FORMAT,
                "shards": len(cell["shards"]),
                "merged_run": str(out.relative_to(cell_dir(folder, cell_id))),
                "merged_scores_sha256": sha256_file(scores),
                "started": round(time.time(), 3),
            },
        )
    again = shlex.join(["cogbench", "sweep", "merge", str(folder), "--remove-shards"])
    for number in remaining:
        remove_folder(shard_dir(folder, cell_id, number), again)
    shards = cell_dir(folder, cell_id) / "shards"
    if shards.is_dir() and not any(shards.iterdir()):
        shards.rmdir()
    total = len(cell["shards"])
    which = (
        f"its {total} shard folders"
        if len(remaining) == total
        else f"the last {len(remaining)} of its {total} shard folders"
    )
    return f"{cell_id}: {which} removed, {out} verified again first"
