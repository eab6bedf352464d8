"""Safe output folders: every command replaces only its own previous output, never anything else.

A build writes into a staging folder beside ``--out``; the last file it writes
there is the marker ``.cogbench-build.json`` (builder name, marker format and
the list of files the build wrote, and the raw folder it read, for the ``cogbench build`` a hint
prints: the marker stays on this disk, ``publish`` uploads everything else). An existing ``--out`` is replaced only when
it is empty or holds that marker and exactly the files the marker lists, and
the old folder is then removed file by file from that list: a file the build
did not write is never deleted. The swap into place is done under an exclusive
lock on the parent folder, so two builds racing on one ``--out`` end with one
complete build, and the loser says so in one line instead of a traceback.

Every path a marker lists must resolve (links followed) inside its folder, or
the folder is refused before anything is deleted. The other commands (``eval``,
``score``, ``report``, ``export``) follow the same rule through ``claim_output``:
their ``--out`` must be new, empty, or marked ``.cogbench-output.json`` by the
same kind of command and hold only the files that command writes; a folder
inside a build or inside another kind's output is refused.
"""

from __future__ import annotations

import fnmatch
import json
import os
import secrets
import shlex
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cogbench.dataset_builders.raw import default_raw_dir, sha256_file
from cogbench.dataset_builders.writes import temporary_pattern, write_file
from cogbench.errors import CogbenchError, UsageError
from cogbench.redaction import redact_text

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


def check_contained(folder: Path, names: list[str], marker: str = MARKER_FILE) -> None:
    """Refuse (before anything is deleted) a marker listing a path that leaves ``folder``."""
    root = folder.resolve()
    for name in names:
        try:
            target = (folder / name).resolve()
        except (OSError, ValueError):  # a NUL byte, a name too long: not a path inside the folder either
            target = None
        if target is None or os.path.isabs(name) or (target != root and root not in target.parents):
            raise UsageError(
                f"{folder / marker}: lists {name!r}, which is outside {folder}; refusing to touch anything: "
                "the marker was edited, so this folder is not a build cogbench can replace"
            )


def write_marker(
    staging: Path, builder_version: str, hashed: tuple[str, ...] = (), raw_dir: str | os.PathLike | None = None
) -> None:
    """Write the marker last, listing every file written so far (and itself), with the
    sha256 of the ``hashed`` ones (the manifest and the card: no other file vouches for them)
    and the raw folder the build read (absolute), which the hints' ``cogbench build`` names."""
    files = sorted(set(folder_files(staging)) | {MARKER_FILE})
    marker = {
        "builder": MARKER_BUILDER,
        "format": MARKER_FORMAT,
        "builder_version": builder_version,
        "files": files,
        "sha256": {name: sha256_file(staging / name) for name in hashed},
    }
    if raw_dir is not None:
        marker["raw_dir"] = str(Path(raw_dir).resolve())
    write_file(staging / MARKER_FILE, json.dumps(marker, indent=2, sort_keys=True) + "\n")


def built_from(folder: str | os.PathLike) -> Path | None:
    """The raw folder ``folder`` was built from, as its build marker records it, while it is still a folder;
    shown relative to the current folder when inside it. None for a build whose marker names none."""
    marker = read_marker(Path(folder))
    recorded = marker.get("raw_dir") if marker else None
    if not isinstance(recorded, str):
        return None
    try:  # an edited marker may name anything: a name too long, a NUL byte, a folder gone
        if not Path(recorded).is_dir():
            return None
        return Path(os.path.relpath(recorded)) if Path(recorded).is_relative_to(Path.cwd()) else Path(recorded)
    except (OSError, ValueError):
        return None


def build_command(out: str | os.PathLike, *options: str) -> str:
    """The ``cogbench build`` call a hint prints: runnable as printed, from the raw folder ``out`` was built
    from (its build marker records it), else from the default raw folder."""
    raw_dir = built_from(out) or default_raw_dir()
    return " ".join(["cogbench build --raw-dir", shlex.quote(str(raw_dir)), "--out", shlex.quote(str(out)), *options])


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
    check_not_nested(out, "build")
    marker = read_marker(out)
    if marker is None:
        raise UsageError(
            f"{out} exists and is not a cogbench build (no {MARKER_FILE} written by `cogbench build`); "
            "refusing to overwrite it: choose another --out or empty it yourself"
        )
    check_contained(out, marker["files"])
    refuse_links(out)
    refuse_foreign(out, foreign_files(out), "cogbench build")


def refuse_links(out: Path) -> None:
    """No command makes a symbolic link in its output: one there was planted, and writing would follow it."""
    links = [name for name in folder_files(out) if (out / name).is_symlink()]
    if links:
        more = f" and {len(links) - 1} more" if len(links) > 1 else ""
        raise UsageError(
            f"{out / links[0]}{more}: a symbolic link, which cogbench never makes in its output; "
            "refusing to write into this folder (a write could follow it out): remove it or choose another --out"
        )


def refuse_foreign(out: Path, foreign: list[str], command: str) -> None:
    """The one refusal of every command: up to three of the files it did not write."""
    if foreign:
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        raise UsageError(
            f"{out} holds files that `{command}` did not write ({', '.join(foreign[:3])}{more}); "
            "refusing to overwrite it: move them away or choose another --out"
        )


def new_staging(out: Path) -> Path:
    """An empty folder beside ``out`` to build into, so that the move into place is a rename.

    Its name is random and ``mkdir`` fails on any existing name (a link included), so the
    folder is surely new and ours."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.tmp-{secrets.token_hex(8)}"
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
    names = marker["files"] if marker else []
    check_contained(folder, names)
    for name in names:
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
    old = out.parent / f".{out.name}.old-{secrets.token_hex(8)}"  # random: no planted name is it
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
            raise CogbenchError(
                f"could not move the finished build into {out} ({error.strerror}); nothing was replaced"
            ) from None
    if old.exists():
        remove_build(old)


# --- the output folders of eval, score, report and export ---------------------------

OUTPUT_MARKER = ".cogbench-output.json"
# An output kind may sit inside a folder of these kinds (eval's run folder holds its score/).
# A sweep's folder holds its cells' eval runs (reference_eval/sweeping/layout.py), and so their score/.
NESTS_IN = {"score": ("eval", "sweep"), "eval": ("sweep",)}


def read_output_marker(folder: Path) -> dict | None:
    """The output marker of ``folder`` (kind and the names its command writes), or None."""
    try:
        marker = json.loads((folder / OUTPUT_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if (
        not isinstance(marker, dict)
        or marker.get("builder") != MARKER_BUILDER
        or not isinstance(marker.get("kind"), str)
    ):
        return None
    return marker


def kind_of(folder: Path) -> str | None:
    """ "build", an output kind ("eval", "score", ...), or None for a folder cogbench did not mark."""
    if (folder / MARKER_FILE).exists():
        return "build"
    marker = read_output_marker(folder)
    return marker["kind"] if marker else None


def check_not_nested(out: Path, kind: str) -> None:
    """Refuse an output folder inside a built dataset or inside another kind's output."""
    for parent in Path(os.path.abspath(out)).parents:
        outer = kind_of(parent)
        if outer is not None and outer not in NESTS_IN.get(kind, ()):
            what = "a built dataset" if outer == "build" else f"the output folder of `cogbench {outer}`"
            raise UsageError(f"{out} is inside {parent}, {what}; refusing to write there: choose another --out")


def owned(name: str, patterns: tuple[str, ...]) -> bool:
    """``name`` matches a pattern at the same depth ("*.png" owns "a.png", not "user/a.png")."""
    return any(fnmatch.fnmatchcase(name, p) and name.count("/") == p.count("/") for p in patterns)


def claim_output(
    out: Path,
    kind: str,
    owns: tuple[str, ...],
    create: bool = True,
    task: str | None = None,
    reads: Iterable[tuple[str, Path | str | None]] = (),
    option: str = "--out",
) -> None:
    """Make ``out`` this command's output folder, or refuse it in one line.

    ``owns``: glob patterns (posix, relative to ``out``) of every file the command
    writes there. ``out`` must be new, empty, or marked as this kind's output and hold
    nothing else; the marker is written first, so a crash leaves a folder the same
    command may resume into. ``create=False`` only checks (a command's first step).
    ``task``, when given, is recorded too: the rule is then same command and same task,
    so a score of one task never silently replaces another's. ``reads``: what the command reads, which ``out``
    (named by ``option``) stays apart from (``check_apart``).
    """
    check_apart(out, option, reads)
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise UsageError(f"{out} exists and is not a folder; give a folder as --out")
    check_not_nested(out, kind)
    marker_temporaries = (f"{OUTPUT_MARKER}.*.tmp", temporary_pattern(OUTPUT_MARKER))
    if out.is_dir():
        refuse_links(out)
    if out.is_dir() and any(not owned(path.name, marker_temporaries) for path in out.iterdir()):
        found = kind_of(out)
        if found != kind:
            what = (
                "nothing cogbench wrote"
                if found is None
                else ("a built dataset" if found == "build" else f"the output of `cogbench {found}`")
            )
            raise UsageError(
                f"{out} exists and holds {what}; refusing to write into it: choose another --out or empty it yourself"
            )
        recorded = (read_output_marker(out) or {}).get("task")
        if task is not None and recorded is not None and recorded != task:
            raise UsageError(
                f"{out} holds the output of `cogbench {kind} --task {recorded}`; refusing to replace it with "
                f"--task {task}: choose another --out or empty it yourself"
            )
        mine = (OUTPUT_MARKER, *marker_temporaries, *owns, *map(temporary_pattern, owns))
        refuse_foreign(out, [name for name in folder_files(out) if not owned(name, mine)], f"cogbench {kind}")
        return
    if not create:
        return
    out.mkdir(parents=True, exist_ok=True)
    marker = {"builder": MARKER_BUILDER, "format": MARKER_FORMAT, "kind": kind, "files": list(owns)}
    if task is not None:
        marker["task"] = task
    write_file(out / OUTPUT_MARKER, json.dumps(marker, indent=2) + "\n")


WRITTEN = "written"  # in an output marker: each file the command's last run wrote there, with its sha256


def record_written(out: Path, owns: tuple[str, ...], written: Iterable[str]) -> tuple[list[str], list[str]]:
    """After a run wrote ``written`` (names under ``out``, its output folder, claimed with ``owns``): remove the
    files the previous run recorded there and this one did not write, each only while it holds what was written
    (its recorded sha256); record this run's files in the marker.

    Returns (removed, kept): kept are the files ``owns`` matches that this run did not write and that are not
    removed (changed since they were written, or never recorded: a file cogbench cannot tell is its own stays).
    """
    marker = read_output_marker(out) or {}
    recorded = marker.get(WRITTEN)
    recorded = recorded if isinstance(recorded, dict) else {}
    now = {name: sha256_file(out / name) for name in sorted(set(written))}
    removed = []
    for name, digest in sorted(recorded.items()):
        path = out / name
        if name in now or not isinstance(name, str) or not owned(name, owns) or ".." in name.split("/"):
            continue
        if path.is_file() and not path.is_symlink() and sha256_file(path) == digest:
            path.unlink()
            removed.append(name)
    kept = [name for name in folder_files(out) if owned(name, owns) and name not in now]
    write_file(out / OUTPUT_MARKER, json.dumps({**marker, WRITTEN: now}, indent=2) + "\n")
    return removed, kept


def check_option_file(
    path: Path,
    option: str,
    shared: tuple[str, str] | None = None,
    reads: Iterable[tuple[str, Path | str | None]] = (),
) -> None:
    """A file an option names (``compare --json``, ``--judge-cache``) may be anywhere but in a folder
    cogbench owns (a build, any command's output). ``shared``: (kind, name), the one file of such a
    folder the option may name, being that file itself (``--judge-cache`` a score folder's cache). ``reads``: what
    the command reads (``check_apart``)."""
    check_apart(path, option, reads)
    path = Path(os.path.abspath(path))
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise UsageError(f"{option} {path}: not a plain file (a folder or a symbolic link); give a file name")
    for parent in path.parents:
        kind = kind_of(parent)
        if kind is None:
            continue
        if shared is not None and (kind, path.relative_to(parent).as_posix()) == shared:
            return
        what = "a built dataset" if kind == "build" else f"the output folder of `cogbench {kind}`"
        raise UsageError(f"{option} {path}: inside {parent}, {what}; refusing to write there: choose a file outside it")


def placement(path: Path | str, other: Path | str) -> str | None:
    """Where ``path`` is against ``other``, links followed: "the same folder as", "inside", "around", or None
    when apart."""
    mine, theirs = Path(os.path.realpath(path)), Path(os.path.realpath(other))
    if mine == theirs:
        return "the same folder as"
    if theirs in mine.parents:
        return "inside"
    return "around" if mine in theirs.parents else None


def check_apart(out: Path | str, option: str, reads: Iterable[tuple[str, Path | str | None]]) -> None:
    """The one rule of what a command writes and what it reads: ``out`` (an ``--out`` folder, a ``--json`` file)
    is neither one of the command's inputs, nor inside one, nor around one, or it could replace or write into
    what it is reading (``rescore RUN --out RUN`` replaced the run it rescored). ``reads``: (how the input is
    named, its path); one not on the disk (a Hub repo id) is not a local input. An output path holding a URL's
    credentials (``--out http://me:KEY@host/x``) is refused too, masked: its folders would carry the key."""
    if redact_text(str(out)) != str(out):
        raise UsageError(
            f"{option} {redact_text(str(out))}: a URL with credentials, not a place on this disk; give a local path"
        )
    for name, given in reads:
        if given is None or not os.path.lexists(given):
            continue
        where = placement(out, given)
        if where is not None:
            raise UsageError(
                f"{option} {out}: {where} {name} {given}, which this command reads; refusing to write there: "
                f"give {option} a place of its own"
            )
