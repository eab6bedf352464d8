"""The one way every command writes a file under its output folder: never through a link.

``claim_output`` decides whose a folder is; this module makes sure the bytes
then land in it. A symbolic link planted in an output folder (at a final name,
at a temporary name, or as a subfolder) would otherwise turn a re-run into a
write to any file the user can write. So, under a folder ``root``:

- each folder below ``root`` on the way to the file is opened with ``O_NOFOLLOW`` (and
  made with ``mkdir``, which never follows a link), and everything after is
  done relative to that open folder, so a link swapped in meanwhile is not used;
- a whole file is written to a temporary of a random name created with
  ``O_EXCL | O_NOFOLLOW`` (no planted name can be it), then renamed over the
  final name with ``os.replace``, which replaces a name and never writes
  through it; a final name that is a link or not a plain file is refused;
- a file appended to or updated in place is opened with ``O_NOFOLLOW`` and must
  be a plain file.

A refusal is a ``UsageError`` (one ``error:`` line, exit 2) naming the path.
"""

from __future__ import annotations

import fnmatch
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from cogbench.errors import UsageError

try:  # POSIX; where missing (Windows) ``locked_folder`` locks nothing
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def temporary_pattern(pattern: str) -> str:
    """The glob of the temporaries written for files matching ``pattern`` (``claim_output`` owns them)."""
    folder, _, name = pattern.rpartition("/")
    return f"{folder}/.{name}.*.tmp" if folder else f".{name}.*.tmp"


def _refusal(path: Path, what: str) -> UsageError:
    return UsageError(
        f"{path}: {what}, which cogbench never makes in its output; refusing to write through it: "
        "remove it or choose another --out"
    )


def _parts(path: Path, root: Path) -> tuple[str, ...]:
    try:
        parts = Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).parts
    except ValueError:
        raise ValueError(f"{path} is not under {root}") from None
    if not parts or ".." in parts:
        raise ValueError(f"{path} is not a file under {root}")
    return parts


@contextmanager
def _folder(root: Path, parts: tuple[str, ...], create: bool = True) -> Iterator[int]:
    """An open descriptor of ``root/parts...``; no component below ``root`` may be a link.

    ``root`` itself is the user's to place (``claim_output`` refuses an ``--out`` that is a link;
    a file option's folder may be one, as a home folder often is)."""
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for part in parts:
            path = path / part
            try:
                inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, dir_fd=fd)
                inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except OSError:  # ELOOP: a link; ENOTDIR: a file where a folder belongs
                raise _refusal(path, "a symbolic link or not a folder") from None
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _check_plain(fd: int, name: str, path: Path) -> None:
    """Refuse a final name that exists as anything but a plain file (a link above all)."""
    try:
        found = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(found.st_mode):
        raise _refusal(path, "a symbolic link")
    if not stat.S_ISREG(found.st_mode):
        raise _refusal(path, "not a plain file")


def write_file(path: Path, data: str | bytes, root: Path | None = None) -> Path:
    """Replace ``path`` (a file under ``root``, default its own folder) with ``data``, atomically."""
    return write_with(path, lambda handle: handle.write(data.encode("utf-8") if isinstance(data, str) else data), root)


def write_with(path: Path, write: Callable[[IO[bytes]], object], root: Path | None = None) -> Path:
    """Replace ``path`` with what ``write`` writes to a binary handle (a figure's ``savefig``, a table)."""
    path = Path(path)
    parts = _parts(path, path.parent if root is None else root)
    with _folder(path.parent if root is None else root, parts[:-1]) as fd:
        name = parts[-1]
        _check_plain(fd, name, path)
        temporary = f".{name}.{secrets.token_hex(8)}.tmp"
        handle_fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666, dir_fd=fd)
        try:
            with os.fdopen(handle_fd, "wb") as handle:
                write(handle)
            _check_plain(fd, name, path)  # again: a link planted while we wrote
            os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=fd)
            except OSError:
                pass
            raise
    return path


def open_existing_or_new(path: Path, mode: str, root: Path | None = None) -> IO:
    """``path`` opened to append (``"a"``, text) or to update in place (``"rb+"``); never through a link."""
    path = Path(path)
    parts = _parts(path, path.parent if root is None else root)
    flags = {"a": os.O_WRONLY | os.O_APPEND | os.O_CREAT, "rb+": os.O_RDWR}[mode]
    with _folder(path.parent if root is None else root, parts[:-1]) as fd:
        _check_plain(fd, parts[-1], path)
        try:  # O_NONBLOCK: a FIFO planted since the check fails below instead of blocking here
            handle_fd = os.open(parts[-1], flags | _NOFOLLOW | _CLOEXEC | os.O_NONBLOCK, 0o666, dir_fd=fd)
        except OSError as error:
            raise _refusal(path, f"not a plain file ({error.strerror})") from None
    if not stat.S_ISREG(os.fstat(handle_fd).st_mode):
        os.close(handle_fd)
        raise _refusal(path, "not a plain file")
    os.set_blocking(handle_fd, True)
    if mode == "a":
        return open(handle_fd, "a", encoding="utf-8")
    return open(handle_fd, mode)


def make_folder(path: Path, root: Path) -> Path:
    """Make ``path`` (and the folders between ``root`` and it), none of them a link."""
    with _folder(root, _parts(path, root)):
        pass
    return Path(path)


def refuse_link(path: Path) -> None:
    """For a file a library opens by name (sqlite, a lock): refuse it when it is a link or not a plain file."""
    path = Path(path)
    if path.is_symlink():
        raise _refusal(path, "a symbolic link")
    if path.exists() and not path.is_file():
        raise _refusal(path, "not a plain file")


TEMPORARY = re.compile(r"\.(.+)\.[0-9a-f]{16}\.tmp")


def remove_temporaries(folder: Path, patterns: tuple[str, ...], legacy: tuple[str, ...] = ()) -> None:
    """Delete what killed writers left in ``folder``: ``write_with``'s temporaries of files matching
    ``patterns`` (its own ``.NAME.<16 hex>.tmp`` names only), and the fixed-name ``legacy`` temporaries
    of older versions. The caller holds the folder's lock, so no writer is using them."""
    top = tuple(pattern for pattern in patterns if "/" not in pattern)
    for path in Path(folder).iterdir():
        match = TEMPORARY.fullmatch(path.name)
        ours = match is not None and any(fnmatch.fnmatchcase(match.group(1), pattern) for pattern in top)
        if (ours or path.name in legacy) and (path.is_symlink() or path.is_file()):
            path.unlink()


@contextmanager
def locked_folder(folder: Path) -> Iterator[None]:
    """An exclusive OS lock on ``folder`` itself (``flock``; no lock file), waited for; the kernel drops it
    when the process dies. Where ``fcntl`` is missing (Windows) nothing is locked."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    handle = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock


class ImageFiles:
    """A page's images (the site's, the labelling page's), each distinct one written once under
    ``out/images/<sha256>.<format>``: the build's bytes unchanged, named once however many items show them."""

    def __init__(self, out: Path):
        self.out = out
        self.names: set[str] = set()

    def write(self, data: bytes) -> str:
        """Write ``data`` unless an equal image was; its path relative to ``out``."""
        name = image_file_name(data)
        if name not in self.names:
            self.names.add(name)
            write_file(self.out / "images" / name, data, root=self.out)
        return f"images/{name}"


def image_file_name(data: bytes) -> str:
    """``<sha256>.<format>`` of an image's bytes (``bin`` where Pillow knows no format)."""
    import hashlib
    import io

    from PIL import Image

    try:
        kind = (Image.open(io.BytesIO(data)).format or "bin").lower()
    except OSError:
        kind = "bin"
    return f"{hashlib.sha256(data).hexdigest()}.{'jpg' if kind == 'jpeg' else kind}"
