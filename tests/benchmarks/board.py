"""The board of a sweep at 100 models x 3 tasks (issue 50 item 5): how long ``sweep status`` and
``report SWEEP_DIR --site`` take, and how fast the board opens in headless Chromium.

The runs are synthetic but verifiable: a sweep of 100 models x VQA, CODIS and descriptions (``--limit``
items each, one shard per cell) is planned; three models are really run (``sweep run-shard`` against local
servers that answer A, answer B, or stop at the token limit) and merged; every other model's cells are copies
of one of those three models' cell folders (its shard, attempt record and merged run), so each of the 300
cells is done, merged and verified by the board as any cell is. Targets: status and board built in 60 s or
less; the board drawn in under 2 s.

    .venv/bin/python tests/benchmarks/board.py [--models 100] [--limit 4] [--permutations 9999] [--work DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
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
        spec = write_spec(work, release, entries, tasks=["vqa", "codis", "description"], limit=limit)
        sweep = work / "sweep"
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


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    assert quiet(argv) == 0, argv
    return time.perf_counter() - start


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
    print(f"synthetic sweep: {args.models} models x 3 tasks, {time.perf_counter() - start:.1f} s to make ({sweep})")
    status = timed(["sweep", "status", str(sweep)])
    site = work / "site"
    board = timed(["report", str(sweep), "--site", str(site), "--permutations", str(args.permutations)])
    data = (site / "data" / "board.js").stat().st_size / 1e6
    print(f"sweep status: {status:.1f} s")
    print(f"report --site (status, verify 300 cells, groups at {args.permutations} permutations): {board:.1f} s")
    print(f"status + board: {status + board:.1f} s (target <= 60 s); data/board.js {data:.2f} MB")
    if CHROMIUM:
        times = open_time(site)
        print(f"board open in Chromium (matrix drawn): {', '.join(f'{t:.2f}' for t in times)} s (target < 2 s)")
    else:
        print("board open: chromium not installed, not measured")


if __name__ == "__main__":
    main()
