"""`cogbench report --site` at 20 runs of each task over every item of the three configs (issue 43):
how long the site takes to build, its size, and how fast it opens and filters in headless Chromium.

The 20 "models" of each task are real scorings of edited predictions: CODIS's ground-truth outputs with
0, 5, 10, ... pairs swapped; VQA answers right every 1st, 2nd, ... 20th question; descriptions cut to 5%,
10%, ... 100% of their words. Targets: the site opens (leaderboard drawn) in under 2 s, a filter answers in
under 100 ms.

    COGBENCH_SHARED=../shared .venv/bin/python tests/benchmarks/site_speed.py [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_report_run_kind import score_description
from test_runs_report import vqa_run

from cogbench.cards.release import build_release
from cogbench.cli import main as cogbench
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring
from cogbench.reference_eval.tasks.prompts import DESCRIPTION_DIRECTED

from shared_files import codis_example, raw_data_dir

RUNS = 20
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def make_runs(release: Path, work: Path) -> list[Path]:
    runs = []
    pairs = json.loads(codis_example().read_text())
    for k in range(RUNS):
        edited = json.loads(json.dumps(pairs))
        for pair in edited[: 5 * k]:
            pair["output"] = {"output_1": pair["output"]["output_2"], "output_2": pair["output"]["output_1"]}
        path = work / f"codis-{k:02d}.json"
        path.write_text(json.dumps(edited))
        out = work / f"codis-{k:02d}"
        run_scoring(ScoreOptions(task="codis", dataset=str(release), predictions=str(path), out=str(out)))
        runs.append(out)
    runs += [vqa_run(release, work, f"vqa-{k:02d}", k + 1) for k in range(RUNS)]
    rows = load_config(str(release), "description").remove_columns("image").to_list()
    for k in range(RUNS):
        lines = []
        for row in rows:
            words = row["description"].split()
            lines.append(
                {
                    "task": "description",
                    "item_id": row["image_id"],
                    "output": " ".join(words[: max(1, len(words) * (k + 1) // RUNS)]),
                    "model": f"model-{k:02d}",
                    "prompt_id": DESCRIPTION_DIRECTED.id,
                    "prompt_sha256": DESCRIPTION_DIRECTED.sha256,
                }
            )
        path = work / f"description-{k:02d}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        runs.append(score_description(release, path, work / f"description-{k:02d}"))
    return runs


def measure(site: Path) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        start = time.perf_counter()
        page.goto((site / "index.html").as_uri())
        page.wait_for_selector("table[data-metric='acc_p']")
        opened = time.perf_counter() - start
        start = time.perf_counter()
        page.goto((site / "index.html").as_uri() + "#view=items&task=codis")
        page.wait_for_selector("#item-list li")
        items = time.perf_counter() - start
        timings = {"open_s": opened, "codis_items_first_view_s": items}
        for name, action in (
            ("filter_runs_disagree_ms", "document.getElementById('f-runs').click()"),
            ("filter_judges_disagree_ms", "document.getElementById('f-judges').click()"),
            ("filter_unscored_ms", "document.getElementById('f-unscored').click()"),
            (
                "filter_category_ms",
                "const s=document.getElementById('f-cat');s.value=s.options[2].value;"
                "s.dispatchEvent(new Event('change'))",
            ),
            (
                "search_ms",
                "const q=document.getElementById('f-q');q.value='bag';q.dispatchEvent(new Event('input'))",
            ),
        ):
            # from the event to the frame that shows it painted (a task queued after the next animation frame);
            # the median of 5, each from the unfiltered list
            times = []
            for _ in range(5):
                page.goto((site / "index.html").as_uri() + "#view=items&task=codis")
                page.wait_for_selector("#item-list li")
                times.append(
                    page.evaluate(
                        "() => new Promise(done => { const t = performance.now(); " + action + ";"
                        " requestAnimationFrame(() => setTimeout(() => done(performance.now() - t), 0)); })"
                    )
                )
            timings[name] = sorted(times)[2]
        browser.close()
    return timings


def folder_size(folder: Path) -> dict[str, float]:
    sizes: dict[str, float] = {}
    for path in folder.rglob("*"):
        if path.is_file():
            key = path.relative_to(folder).parts[0] if path.parent != folder else "page"
            sizes[key] = sizes.get(key, 0) + path.stat().st_size / 1e6
    return {k: round(v, 2) for k, v in sorted(sizes.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", help="folder for the release, the runs and the site (default: a temporary one)")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="cogbench-site-bench-"))
    release = work / "release"
    if not release.is_dir():
        build_release(raw_data_dir().resolve(), release)
    start = time.perf_counter()
    (work / "runs").mkdir(parents=True, exist_ok=True)
    runs = make_runs(release, work / "runs")
    print(f"scored {len(runs)} runs in {time.perf_counter() - start:.0f} s")
    site = work / "site"
    start = time.perf_counter()
    assert cogbench(["report", *map(str, runs), "--site", str(site)]) == 0
    print(f"built the site in {time.perf_counter() - start:.0f} s; size (MB): {folder_size(site)}")
    timings = measure(site)
    for name, value in timings.items():
        print(f"{name}: {value:.3f}" if name.endswith("_s") else f"{name}: {value:.1f}")
    ok = timings["open_s"] < 2 and all(v < 100 for k, v in timings.items() if k.endswith("_ms"))
    print("targets (open < 2 s, filter < 100 ms):", "met" if ok else "NOT MET")


if __name__ == "__main__":
    main()
