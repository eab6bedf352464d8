"""``cogbench report RUN... --site DIR``: the leaderboard and every item behind it, as a static site.

The site works from the disk and offline: its page, script and style ship in this package
(``assets/``), its data are scripts that assign to a global (``data/*.js``; Chromium refuses
``fetch`` of JSON from a ``file://`` page but runs a ``<script src>``), one file per task's items,
loaded the first time the task is viewed. Images are written once, as the build stores them, under
``images/<sha256>.<format>``. README.md carries the front matter of a static Hugging Face Space, so
the folder can be uploaded unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from cogbench import __version__
from cogbench.dataset_builders.output import claim_output, record_written
from cogbench.dataset_builders.writes import ImageFiles, write_file
from cogbench.option_types import DEFAULT_PERMUTATIONS
from cogbench.reference_eval.reports.published import published_results
from cogbench.reference_eval.reports.report_charts import make_charts
from cogbench.reference_eval.reports.report_runs import label_report_runs
from cogbench.reference_eval.site.board import board
from cogbench.reference_eval.site.items import task_items
from cogbench.reference_eval.site.leaderboard import TASKS, leaderboard
from cogbench.reference_eval.verifying.run_inputs import read_inputs
from cogbench.validation.integrity import verify_build

ASSETS = ("index.html", "app.js", "style.css")
# Every file the site command writes in its folder (dataset_builders.output.claim_output).
SITE_FILES = (
    "README.md",
    *ASSETS,
    "data/site.js",
    "data/items-*.js",
    "images/*",
    "charts/*.png",
    "board.js",  # a sweep's board (write_board): its page is index.html, its data data/board.js
    "data/board.js",
)
BOARD_ASSETS = {"index.html": "board.html", "board.js": "board.js", "style.css": "style.css"}

# A Hugging Face static Space's front matter: the site and the board can each be pushed as a Space as written.
SPACE_FRONT_MATTER = """---
title: {title}
emoji: 📊
colorFrom: blue
colorTo: gray
sdk: static
app_file: index.html
pinned: false
tags:
- evaluation
- leaderboard
- cogbench
---
"""
SPACE_README = (
    SPACE_FRONT_MATTER.replace("{title}", "cogbench leaderboard")
    + """
# cogbench leaderboard

Written by `cogbench report --site` (cogbench {version}) from {runs} run(s): {tasks}.
Open `index.html` (it works from the disk, offline). The leaderboard shows each run's value with its 95%
interval and the significance groups: {rule}
"""
)


def script(name: str, value: Any) -> str:
    """A data file the page loads with ``<script src>``: JSON assigned to ``window.COGBENCH[name]``."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return f"window.COGBENCH=window.COGBENCH||{{}};window.COGBENCH[{json.dumps(name)}]={text};\n"


def write_site(
    paths: Sequence[str],
    out: Path,
    allow_mismatch: bool = False,
    alpha: float = 0.05,
    permutations: int = DEFAULT_PERMUTATIONS,
) -> dict[str, Any]:
    """Load and verify the runs (run folders, local details datasets: ``inputs``), write the site into ``out``."""
    reads = [("RUN_DIR", path) for path in paths]
    claim_output(out, "site", SITE_FILES, create=False, reads=reads, option="--site")
    runs = label_report_runs(read_inputs(paths), allow_mismatch)
    for dataset in sorted({run.run.scores["dataset"] for run in runs}):
        if Path(dataset).is_dir():  # a local build the runs were scored on: checked like `score` does
            verify_build(dataset)
    published = published_results()
    board = leaderboard(runs, published, alpha, permutations)
    claim_output(out, "site", SITE_FILES, reads=reads, option="--site")
    images = ImageFiles(out)
    write_image = images.write
    written: list[str] = []  # every file this run writes: the files an earlier run wrote and this one did not go

    item_counts = {}
    for task in TASKS:
        indexes = [i for i, run in enumerate(runs) if run.task == task]
        if not indexes:
            continue
        items, note = task_items(task, [runs[i] for i in indexes], write_image)
        item_counts[task] = len(items)
        write_file(
            out / "data" / f"items-{task}.js",
            script(f"items-{task}", {"task": task, "runs": indexes, "items": items, "note": note}),
            root=out,
        )
        written.append(f"data/items-{task}.js")
    (out / "charts").mkdir(exist_ok=True)
    figures = make_charts(runs, published, out / "charts")
    board["charts"] = [{"file": f"charts/{path.name}", "caption": caption} for path, caption in figures]
    board["items"] = item_counts
    board["version"] = __version__
    write_file(out / "data" / "site.js", script("site", board), root=out)
    for name in ASSETS:
        write_file(out / name, resources.files("cogbench.reference_eval.site").joinpath("assets", name).read_bytes())
    tasks = ", ".join(f"{task} ({count} items)" for task, count in item_counts.items())
    write_file(
        out / "README.md", SPACE_README.format(version=__version__, runs=len(runs), tasks=tasks, rule=board["rule"])
    )
    written += ["data/site.js", "README.md", *ASSETS, *(f"images/{name}" for name in images.names)]
    written += [f"charts/{path.name}" for path, _ in figures]
    removed, kept = record_written(out, SITE_FILES, written)
    return {
        "runs": len(runs),
        "items": item_counts,
        "images": len(images.names),
        "folder": str(out),
        "removed": removed,
        "kept": kept,
    }


BOARD_README = (
    SPACE_FRONT_MATTER.replace("{title}", "cogbench sweep board")
    + """
# cogbench sweep board

Written by `cogbench report SWEEP_DIR --site` (cogbench {version}) from the sweep {sweep}: {cells} cell(s),
{complete} complete (done, merged and verified). Open `index.html` (it works from the disk, offline).
Significance groups over the complete cells of each column: {rule}
"""
)


def write_board(
    folder: Path, rows, out: Path, alpha: float = 0.05, permutations: int = DEFAULT_PERMUTATIONS
) -> dict[str, Any]:
    """The board of the sweep in ``folder`` (``site.board``), written into ``out`` under the site's folder rules.
    ``rows``: called once ``out`` is checked, returns the ledger's rows (``sweeping.ledger.board_rows``)."""
    reads = [("SWEEP_DIR", folder)]
    claim_output(out, "site", SITE_FILES, create=False, reads=reads, option="--site")
    data = board(rows(), alpha, permutations)
    data["version"] = __version__
    claim_output(out, "site", SITE_FILES, reads=reads, option="--site")
    write_file(out / "data" / "board.js", script("board", data), root=out)
    site = resources.files("cogbench.reference_eval.site")
    for name, asset in BOARD_ASSETS.items():
        write_file(out / name, site.joinpath("assets", asset).read_bytes(), root=out)
    complete = sum(1 for cell in data["cells"] if cell["complete"])
    readme = BOARD_README.format(
        version=__version__, sweep=folder.name, cells=len(data["cells"]), complete=complete, rule=data["rule"]
    )
    write_file(out / "README.md", readme, root=out)
    removed, kept = record_written(out, SITE_FILES, ["data/board.js", "README.md", *BOARD_ASSETS])
    return {"cells": len(data["cells"]), "states": data["states"], "folder": str(out), "removed": removed, "kept": kept}
