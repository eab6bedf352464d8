"""How fast `cogbench` answers when it does no work: `--version`, `--help`, a refused option.

Side by side in one run, each a fresh process timed from the outside (wall clock and peak RSS
from the child's rusage): a bare `python -c pass` (the floor every command pays), then
`cogbench --version`, `cogbench --help` and `cogbench eval --no-such-option`. Targets (issue 49):
`--version` and `--help` at most 0.3 s and 60 MB on 2 idle cores; the ratio to the bare
interpreter is printed beside each, so a loaded machine still shows what cogbench adds.

    .venv/bin/python tests/benchmarks/startup.py [--repeats 10]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_SECONDS = 0.3
TARGET_MB = 60.0


def run_once(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child running ARGV."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    return seconds, usage.ru_maxrss / 1024  # Linux: KB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    cogbench = str(Path(sys.executable).with_name("cogbench"))
    settings = {
        "python -c pass (floor)": [sys.executable, "-c", "pass"],
        "cogbench --version": [cogbench, "--version"],
        "cogbench --help": [cogbench, "--help"],
        "cogbench eval --no-such-option": [cogbench, "eval", "--no-such-option"],
    }
    for argv in settings.values():  # warm the page cache and the bytecode
        run_once(argv)
    print(f"{args.repeats} runs each, interleaved; load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in settings}
    for _ in range(args.repeats):
        for name, argv in settings.items():
            results[name].append(run_once(argv))
    floor = min(s for s, _ in results["python -c pass (floor)"])
    failed = False
    for name, runs in results.items():
        seconds = [s for s, _ in runs]
        peak = max(mb for _, mb in runs)
        best = min(seconds)
        verdict = ""
        if name in ("cogbench --version", "cogbench --help"):
            ok = best <= TARGET_SECONDS and peak <= TARGET_MB
            failed |= not ok
            verdict = f"  target <= {TARGET_SECONDS} s, <= {TARGET_MB:.0f} MB: {'PASS' if ok else 'FAIL'}"
        print(
            f"{name:34s} min {best:6.3f} s  median {statistics.median(seconds):6.3f} s  "
            f"peak {peak:5.1f} MB  x{best / floor:4.1f} the floor{verdict}"
        )
    print(f"(this process's own peak: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MB)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
