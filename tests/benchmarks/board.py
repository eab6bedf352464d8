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


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    assert quiet(argv) == 0, argv
    return time.perf_counter() - start


def phases(sweep: Path, site: Path, permutations: int, group_models: int) -> dict[str, float]:
    """The board's work, phase by phase: the ledger, every cell verified and counted, the groups of the first
    ``group_models`` models of each column (their pairs timed; every column's pairs at all models extrapolated
    from that rate), then the site written with those groups."""
    from cogbench.reference_eval.site import board as board_module
    from cogbench.reference_eval.site.site_writer import write_board
    from cogbench.reference_eval.sweeping.ledger import board_rows

    times: dict[str, float] = {}
    start = time.perf_counter()
    rows = board_rows(sweep)
    times["ledger"] = time.perf_counter() - start
    start = time.perf_counter()
    found = [board_module.board_cell(rows["sweep"], cell) for cell in rows["cells"]]
    times["cells"] = time.perf_counter() - start
    entries, runs = [entry for entry, _ in found], [run for _, run in found]
    models = list(dict.fromkeys(entry["model"] for entry in entries))[:group_models]
    chosen = [k for k, entry in enumerate(entries) if entry["model"] in models]
    start = time.perf_counter()
    groups = board_module.column_groups([entries[k] for k in chosen], [runs[k] for k in chosen], 0.05, permutations, 0)
    times["groups_sample"] = time.perf_counter() - start
    pairs = sum(group["pairs"] for group in groups.values())
    complete = {}
    for entry in entries:
        if entry["complete"]:
            key = f"{entry['task']}|{entry['setting']}"
            complete[key] = complete.get(key, 0) + 1
    all_pairs = sum(n * (n - 1) // 2 for n in complete.values())
    times["pairs_sample"], times["pairs_all"] = pairs, all_pairs
    times["groups_all_estimate"] = times["groups_sample"] / max(pairs, 1) * all_pairs
    original = board_module.column_groups
    board_module.column_groups = lambda *args: groups  # the groups just timed, not computed again
    try:
        start = time.perf_counter()
        write_board(sweep, lambda: board_rows(sweep), site, permutations=permutations)
        times["write_with_sample_groups"] = time.perf_counter() - start
    finally:
        board_module.column_groups = original
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
    parser.add_argument("--group-models", type=int, default=10, help="models whose pairs are tested and timed")
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
    status = timed(["sweep", "status", str(sweep)])
    print(f"sweep status (ledger rebuilt from the run folders): {status:.1f} s")
    site = work / "site"
    t = phases(sweep, site, args.permutations, args.group_models)
    print(f"board: ledger {t['ledger']:.1f} s; every cell verified and its health counted {t['cells']:.1f} s")
    print(
        f"groups: {t['pairs_sample']} pairs ({args.group_models} models per column, {args.permutations} permutations) "
        f"in {t['groups_sample']:.1f} s; all {t['pairs_all']} pairs at that rate: {t['groups_all_estimate']:.0f} s"
    )
    print(f"board written (ledger, cells, the sampled groups): {t['write_with_sample_groups']:.1f} s")
    without = status + t["ledger"] + t["cells"]
    print(
        f"status + board without the groups: {without:.1f} s; with every pair: ~{without + t['groups_all_estimate']:.0f} s"
    )
    print(f"data/board.js {(site / 'data' / 'board.js').stat().st_size / 1e6:.2f} MB")
    if CHROMIUM:
        times = open_time(site)
        print(f"board open in Chromium (matrix drawn): {', '.join(f'{x:.2f}' for x in times)} s (target < 2 s)")
    else:
        print("board open: chromium not installed, not measured")


if __name__ == "__main__":
    main()
