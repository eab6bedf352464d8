"""The board of a sweep at 100 models x 4 columns (issue 50 item 5): how long ``sweep status`` and
``report SWEEP_DIR --site`` take, and how fast the board opens in headless Chromium.

The runs are synthetic but verifiable: a sweep of 100 models x VQA and CODIS x two token budgets (default
and 8; ``--limit`` items each, one shard per cell: 400 cells, more than the issue's 100 x 3) is planned;
three models are really run (``sweep run-shard`` against local servers that answer A, answer B, or stop at
the token limit) and merged; every other model's cells are copies of one of those three models' cell folders
(its shard, attempt record and merged run), so each cell is done, merged and verified by the board as any
cell is. Descriptions are left out here (their board cells read as any other's; tests/benchmarks/sweep_many.py
runs and scores them). Targets: status and board built in 60 s or less; the board drawn in under 2 s.

    .venv/bin/python tests/benchmarks/board.py [--models 100] [--limit 4] [--permutations 9999] [--work DIR]

Printed: both commands' wall time and peak memory, each in a process of its own (imports included), then the
board's phases in this process (ledger, cells, every column's groups), the page's size and its open time.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cogbench.cards.release import build_release
from cogbench.cli import main as cogbench

from openai_server import OpenAIServer, Reply
from sweep_helpers import letter_responder, write_spec
from synthetic_raw import write_synthetic_raw

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
RESPONDERS = (letter_responder, lambda request: Reply(text="B"), lambda request: Reply(text="", finish_reason="length"))


def quiet(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return cogbench(argv)


def make_sweep(work: Path, models: int, limit: int) -> Path:
    release = work / "release"
    if not release.exists():
        build_release(write_synthetic_raw(work / "raw"), release)
    servers = [OpenAIServer(responder).start() for responder in RESPONDERS]
    try:
        entries = [
            {"model": f"openai:m{k:03d}", "base_url": servers[k % 3].base_url, "max_attempts": 1} for k in range(models)
        ]
        axes = {"max_new_tokens": ["default", 8]}
        spec = write_spec(work, release, entries, tasks=["vqa", "codis"], limit=limit, axes=axes)
        sweep = work / "sweep"
        shutil.rmtree(sweep, ignore_errors=True)  # this script's own, from an earlier run: the servers' ports differ
        assert quiet(["sweep", "plan", str(spec), "--out", str(sweep)]) == 0
        plan = json.loads((sweep / "plan.json").read_text())
        real = [cell for cell in plan["cells"] if cell["label"] in ("m000", "m001", "m002")]
        for cell in real:
            assert quiet(["sweep", "run-shard", str(sweep), "--index", str(cell["first_index"])]) == 0, cell["id"]
        assert quiet(["sweep", "merge", str(sweep), *(f"--cell={cell['id']}" for cell in real)]) == 0
    finally:
        for server in servers:
            server.stop()
    for cell in plan["cells"]:
        k = int(cell["label"][1:])
        if k < 3:
            continue
        source = sweep / "cells" / cell["id"].replace(cell["label"], f"m{k % 3:03d}", 1)
        target = sweep / "cells" / cell["id"]
        for child in source.iterdir():
            if child.name != "cell.json":
                shutil.copytree(child, target / child.name, dirs_exist_ok=True)
    return sweep


def command(argv: list[str]) -> tuple[float, float]:
    """(seconds, peak resident MB) of ``cogbench ARGV`` in a process of its own: what a user waits for."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "cogbench", *argv], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, argv
    return time.perf_counter() - start, usage.ru_maxrss / 1024


def phases(sweep: Path, permutations: int) -> dict[str, float]:
    """The board's work, phase by phase, in this process: the ledger, every cell verified and counted, then the
    significance groups of every column (all their pairs)."""
    from cogbench.reference_eval.site import board as board_module
    from cogbench.reference_eval.sweeping.ledger import board_rows

    times: dict[str, float] = {}
    start = time.perf_counter()
    rows = board_rows(sweep)
    times["ledger"] = time.perf_counter() - start
    start = time.perf_counter()
    found = [board_module.board_cell(rows["sweep"], cell) for cell in rows["cells"]]
    times["cells"] = time.perf_counter() - start
    entries, runs = [entry for entry, _ in found], [run for _, run in found]
    start = time.perf_counter()
    groups = board_module.column_groups(entries, runs, 0.05, permutations, 0)
    times["groups"] = time.perf_counter() - start
    times["pairs"] = sum(group["pairs"] for group in groups.values())
    return times


def open_time(site: Path, repeats: int = 3) -> list[float]:
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for _ in range(repeats):
            page = browser.new_page()
            start = time.perf_counter()
            page.goto((site / "index.html").as_uri())
            page.wait_for_selector("#matrix tbody tr")
            times.append(time.perf_counter() - start)
            page.close()
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--limit", type=int, default=4)
    parser.add_argument("--permutations", type=int, default=9999)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "benchmark")
    work = args.work or Path(tempfile.mkdtemp(prefix="board-bench-"))
    start = time.perf_counter()
    sweep = make_sweep(work, args.models, args.limit)
    cells = len(json.loads((sweep / "plan.json").read_text())["cells"])
    print(
        f"synthetic sweep: {args.models} models, {cells} cells, {time.perf_counter() - start:.1f} s to make ({sweep})"
    )
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    status, status_mb = command(["sweep", "status", str(sweep)])
    print(f"cogbench sweep status (ledger rebuilt from the run folders): {status:.1f} s, peak {status_mb:.0f} MB")
    site = work / "site"
    shutil.rmtree(site, ignore_errors=True)
    argv = ["report", str(sweep), "--site", str(site), "--permutations", str(args.permutations)]
    board, board_mb = command(argv)
    print(f"cogbench report SWEEP_DIR --site DIR (every pair grouped): {board:.1f} s, peak {board_mb:.0f} MB")
    print(f"status + board: {status + board:.1f} s (target <= 60 s)")
    t = phases(sweep, args.permutations)
    print(
        f"in process: ledger {t['ledger']:.1f} s; every cell verified and its health counted {t['cells']:.1f} s; "
        f"groups of every column ({t['pairs']:.0f} pairs, {args.permutations} permutations) {t['groups']:.1f} s"
    )
    print(f"data/board.js {(site / 'data' / 'board.js').stat().st_size / 1e6:.2f} MB")
    if CHROMIUM:
        times = open_time(site)
        print(f"board open in Chromium (matrix drawn): {', '.join(f'{x:.2f}' for x in times)} s (target < 2 s)")
    else:
        print("board open: chromium not installed, not measured")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
