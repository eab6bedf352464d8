"""Safe output folders: a build replaces only its own previous output, never anything else.

A build writes into a staging folder beside ``--out``; the last file it writes
there is the marker ``.cogbench-build.json`` (builder name, marker format and
the list of files the build wrote). An existing ``--out`` is replaced only when
it is empty or holds that marker and exactly the files the marker lists, and
the old folder is then removed file by file from that list: a file the build
did not write is never deleted. The swap into place is done under an exclusive
lock on the parent folder, so two builds racing on one ``--out`` end with one
complete build, and the loser says so in one line instead of a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from cogbench.dataset_builders.raw import sha256_file
from cogbench.errors import CogbenchError, UsageError

try:  # POSIX; where missing (Windows) the rename itself still refuses a non-empty target
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

MARKER_FILE = ".cogbench-build.json"
MARKER_BUILDER = "cogbench"
MARKER_FORMAT = 1


def folder_files(folder: Path) -> list[str]:
    """Every file below ``folder`` (links included, not followed), as sorted posix paths."""
    return sorted(
        path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file() or path.is_symlink()
    )


def read_marker(folder: Path) -> dict | None:
    """The marker of a build folder, or None when absent, unreadable or not ours."""
    try:
        marker = json.loads((folder / MARKER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get("builder") != MARKER_BUILDER or marker.get("format") != MARKER_FORMAT:
        return None
    if not isinstance(marker.get("files"), list) or not all(isinstance(name, str) for name in marker["files"]):
        return None
    return marker


def write_marker(staging: Path, builder_version: str, hashed: tuple[str, ...] = ()) -> None:
    """Write the marker last, listing every file written so far (and itself), with the
    sha256 of the ``hashed`` ones (the manifest and the card: no other file vouches for them)."""
    files = sorted(set(folder_files(staging)) | {MARKER_FILE})
    marker = {"builder": MARKER_BUILDER, "format": MARKER_FORMAT, "builder_version": builder_version, "files": files,
              "sha256": {name: sha256_file(staging / name) for name in hashed}}
    (staging / MARKER_FILE).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def foreign_files(out: Path) -> list[str]:
    """Files in ``out`` that a previous build did not write (all of them when it has no marker)."""
    present = folder_files(out)
    marker = read_marker(out)
    if marker is None:
        return present
    return [name for name in present if name not in set(marker["files"])]


def check_replaceable(out: Path) -> None:
    """Refuse an ``--out`` that is not empty and not exactly a previous build."""
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise UsageError(f"{out} exists and is not a folder; refusing to overwrite it")
    if not any(out.iterdir()):
        return
    if read_marker(out) is None:
        raise UsageError(
            f"{out} exists and is not a cogbench build (no {MARKER_FILE} written by `cogbench build`); "
            "refusing to overwrite it: choose another --out or empty it yourself"
        )
    foreign = foreign_files(out)
    if foreign:
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        raise UsageError(
            f"{out} holds files that `cogbench build` did not write ({', '.join(foreign[:3])}{more}); "
            "refusing to overwrite it: move them away or choose another --out"
        )


def new_staging(out: Path) -> Path:
    """An empty folder beside ``out`` to build into, so that the move into place is a rename."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.tmp-{os.getpid()}"
    if staging.exists():  # left by a crashed build of this same process id: ours by name
        shutil.rmtree(staging)
    staging.mkdir()
    return staging


@contextmanager
def _parent_lock(out: Path) -> Iterator[None]:
    """An exclusive lock on ``out``'s parent folder (no lock file is left behind)."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    handle = os.open(out.parent, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock


def remove_build(folder: Path) -> None:
    """Delete a previous build file by file, from its marker; keep anything else."""
    marker = read_marker(folder)
    for name in marker["files"] if marker else []:
        path = folder / name
        if path.is_file() or path.is_symlink():
            path.unlink()
    for directory in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if not any(directory.iterdir()):
            directory.rmdir()
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()


def move_into_place(staging: Path, out: Path) -> None:
    """Swap the finished staging folder in for ``out``; re-checked under the lock.

    Raises ``CogbenchError`` (exit 1, no traceback) when another build or
    person changed ``out`` meanwhile so that it may no longer be replaced.
    """
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    with _parent_lock(out):
        try:
            check_replaceable(out)
        except UsageError as error:
            raise CogbenchError(f"{out} changed while this build ran, so nothing was replaced: {error}") from None
        if out.exists():
            out.rename(old)
        try:
            staging.rename(out)
        except OSError as error:
            if old.exists():
                old.rename(out)
            raise CogbenchError(f"could not move the finished build into {out} ({error.strerror}); nothing was replaced") from None
    if old.exists():
        remove_build(old)
