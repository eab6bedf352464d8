"""One way to time a benchmark setting: warm up, repeat, report min and median.

The first call of anything pays one-off costs (imports, caches, allocator, kernels); a single
timed run on a shared machine is noise. Ratios are taken between minimums (the least disturbed
runs), against the baseline each benchmark names.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Timing:
    best: float  # seconds, the fastest repeat
    median: float
    result: Any  # what the last repeat returned

    def __str__(self) -> str:
        return f"min {self.best:8.3f} s, median {self.median:8.3f} s"


def timed(run: Callable[[], Any], repeats: int = 3, warm_ups: int = 1) -> Timing:
    for _ in range(warm_ups):
        run()
    seconds, result = [], None
    for _ in range(max(1, repeats)):
        started = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - started)
    return Timing(min(seconds), statistics.median(seconds), result)
