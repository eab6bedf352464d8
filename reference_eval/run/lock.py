"""One writer per run folder (per rank): a second ``eval`` on the same ``--out`` refuses at once.

The lock is an OS file lock (``filelock``: ``flock`` on POSIX) on
``RUN_DIR/rank-N.lock``; the kernel drops it when its process dies, even by
SIGKILL, so a lock left by a killed run is stale by construction and the next
run simply takes it (and says so). Beside it, ``rank-N.lock.json`` names the
holder (pid, host, start time) for the refusal message. Each rank of a
multi-GPU run locks its own shard, which is what must never have two writers.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from filelock import FileLock, Timeout

from cogbench.dataset_builders.writes import refuse_link, write_file
from cogbench.errors import UsageError


class RunLock:
    """Context manager holding the lock of one rank of a run folder."""

    def __init__(self, run_dir: Path, rank: int = 0, name: str | None = None, refusal: str | None = None):
        """``name``/``refusal``: another folder's lock file and the refusal's words (request folders)."""
        self.path = Path(run_dir) / (name or f"rank-{rank}.lock")
        self.holder_path = self.path.with_name(self.path.name + ".json")
        self.refusal = refusal or (
            "another cogbench eval is writing to this run folder ({holder}); "
            "wait for it to finish, or use another --out"
        )
        self._lock = FileLock(str(self.path), timeout=0)

    def acquire(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        refuse_link(self.path)  # filelock opens it by name, truncating: never a planted link
        try:
            self._lock.acquire()
        except Timeout:
            raise UsageError(f"{self.path.parent}: {self.refusal.format(holder=_describe(self._holder()))}") from None
        previous = self._holder()
        me = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        if previous and (previous.get("pid"), previous.get("host")) != (me["pid"], me["host"]):
            print(
                f"note: took over the lock of a run that ended without releasing it ({_describe(previous)})",
                file=sys.stderr,
            )
        write_file(self.holder_path, json.dumps(me) + "\n")
        return self

    def release(self, forget: bool = False) -> None:
        """Let go; ``forget`` also removes the lock files (a start that wrote nothing)."""
        if forget or self._holder().get("pid") == os.getpid():
            self.holder_path.unlink(missing_ok=True)
        self._lock.release()
        if forget:
            self.path.unlink(missing_ok=True)

    def _holder(self) -> dict:
        try:
            return json.loads(self.holder_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _describe(holder: dict) -> str:
    if not holder:
        return "holder unknown"
    return f"pid {holder.get('pid')} on host {holder.get('host')}"
