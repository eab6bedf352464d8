"""Run a command under a hard memory limit (a Linux memory cgroup), for the memory benchmarks.

Peak RSS over-states what a run needs when it reads a memory-mapped dataset: every page of the
Arrow file it touched counts, although the kernel can drop those clean file pages and read them
again. Whether a run *fits* in N MB is answered by running it where it cannot have more: a memory
cgroup limited to N MB, with swap off (so allocated memory cannot hide there). The files the run
maps are first evicted from the page cache (``posix_fadvise``), so that the run charges its own
reads to its cgroup instead of finding them cached by an earlier run.

Needs a writable cgroup memory controller (root, cgroup v1 ``/sys/fs/cgroup/memory`` or v2 with
``memory`` enabled); ``available()`` says why not where there is none.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

V1 = Path("/sys/fs/cgroup/memory")
V2 = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class LimitedRun:
    returncode: int
    oom_kills: int  # processes the kernel killed for the limit
    max_usage_mb: float  # the cgroup's peak charge (allocated + page cache it read), at most the limit
    stdout: str
    stderr: str


def _version() -> int | None:
    if (V1 / "memory.limit_in_bytes").exists() and os.access(V1, os.W_OK):
        return 1
    controllers = V2 / "cgroup.controllers"
    if controllers.exists() and "memory" in controllers.read_text().split() and os.access(V2, os.W_OK):
        return 2
    return None


def available() -> str | None:
    """None when a limited run is possible here, else the reason it is not."""
    if _version() is None:
        return "no writable memory cgroup (needs root and /sys/fs/cgroup/memory or cgroup v2 with memory)"
    if (
        _version() == 1
        and Path("/proc/swaps").read_text().count("\n") > 1
        and not (V1 / "memory.memsw.limit_in_bytes").exists()
    ):
        return "swap is on and this cgroup v1 cannot limit it"
    return None


def evict_from_page_cache(*folders: Path) -> None:
    """Drop the cached pages of every file under ``folders`` (clean pages only; nothing is lost)."""
    for folder in folders:
        for path in Path(folder).rglob("*"):
            if path.is_file() and not path.is_symlink():
                descriptor = os.open(path, os.O_RDONLY)
                try:
                    os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(descriptor)


class Group:
    """A memory cgroup of ``limit_mb`` MB (swap included): a process joins it with ``join`` (a ``preexec_fn``, so
    every byte after the fork is charged), and it says its peak charge and how many processes the kernel killed."""

    def __init__(self, limit_mb: int):
        self.version = _version()
        if self.version is None:
            raise RuntimeError(available())
        self.path = (V1 if self.version == 1 else V2) / f"cogbench-bench-{uuid.uuid4().hex[:8]}"
        self.path.mkdir()
        limit = str(limit_mb * 2**20)
        if self.version == 1:
            (self.path / "memory.limit_in_bytes").write_text(limit)
            if (self.path / "memory.memsw.limit_in_bytes").exists():
                (self.path / "memory.memsw.limit_in_bytes").write_text(limit)
        else:
            (self.path / "memory.max").write_text(limit)
            (self.path / "memory.swap.max").write_text("0")

    def join(self) -> None:
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def peak_mb(self) -> float:
        if self.version == 1:
            return int((self.path / "memory.max_usage_in_bytes").read_text()) / 2**20
        peak = self.path / "memory.peak"
        return int(peak.read_text()) / 2**20 if peak.exists() else -1.0

    def oom_kills(self) -> int:
        events = self.path / ("memory.oom_control" if self.version == 1 else "memory.events")
        lines = [line for line in events.read_text().splitlines() if line.startswith("oom_kill ")]
        return int(lines[0].split()[1]) if lines else 0

    def remove(self, wait_seconds: float = 30.0) -> None:
        """Remove the cgroup once its last process has gone (a command's workers may outlive it by a moment)."""
        deadline = time.monotonic() + wait_seconds
        while (self.path / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.path.rmdir()


def run_limited(command: list[str], limit_mb: int, env: dict[str, str], evict: list[Path]) -> LimitedRun:
    """Run ``command`` in a fresh cgroup of ``limit_mb`` MB (swap included), then remove the cgroup."""
    group = Group(limit_mb)
    try:
        evict_from_page_cache(*evict)
        result = subprocess.run(command, capture_output=True, text=True, env=env, preexec_fn=group.join)
        return LimitedRun(result.returncode, group.oom_kills(), group.peak_mb(), result.stdout, result.stderr)
    finally:
        group.remove()
