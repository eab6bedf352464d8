"""Progress of a long run where no terminal shows tqdm's bar: CI, nohup, a log file.

On a terminal `eval` shows tqdm's bar; anywhere else tqdm stays silent, so a run of hours would
print nothing until it ends. ``LogProgress`` writes one plain line at most every ``interval``
seconds (and one at the end) with done/total, the rate and the time left.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

LOG_INTERVAL_SECONDS = 10.0


def duration(seconds: float) -> str:
    """``1h02m``, ``3m05s`` or ``42s``."""
    seconds = round(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class LogProgress:
    """tqdm's ``update``/``set_postfix``/context interface, printing a line every ``interval`` seconds."""

    def __init__(
        self,
        total: int,
        desc: str,
        unit: str = "queries",
        interval: float = LOG_INTERVAL_SECONDS,
        file: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.total, self.desc, self.unit, self.interval = total, desc, unit, interval
        self.file = file or sys.stderr
        self.clock = clock
        self.done = 0
        self.postfix: dict[str, object] = {}
        self.started = self.last = clock()

    def line(self) -> str:
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = self.done / elapsed
        left = f"ETA {duration((self.total - self.done) / rate)}" if rate > 0 else "ETA unknown"
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        extra = "".join(f", {key} {value}" for key, value in self.postfix.items() if value)
        return f"{self.desc}: {self.done}/{self.total} {self.unit}{share}, {rate:.2f} {self.unit}/s, {left}{extra}"

    def update(self, count: int = 1) -> None:
        self.done += count
        if self.clock() - self.last >= self.interval:
            self.last = self.clock()
            print(self.line(), file=self.file, flush=True)

    def set_postfix(self, refresh: bool = False, **values: object) -> None:
        self.postfix = values

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.total:
            print(self.line() + f", done in {duration(self.clock() - self.started)}", file=self.file, flush=True)


def progress_bar(
    total: int, desc: str, position: int = 0, interval: float = LOG_INTERVAL_SECONDS, file: TextIO | None = None
):
    """tqdm on a terminal, ``LogProgress`` lines anywhere else."""
    file = file or sys.stderr
    if file.isatty():
        from tqdm.auto import tqdm

        return tqdm(total=total, unit="query", desc=desc, position=position, dynamic_ncols=True, file=file)
    return LogProgress(total, desc, interval=interval, file=file)
