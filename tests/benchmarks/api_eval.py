"""`cogbench eval --model openai:` against the local server: peak memory and wall time against the bound.

Each run is a fresh ``cogbench eval`` process (``--no-score``) against a real local
HTTP server (tests/openai_server.py) that answers every request after
``--latency`` seconds. Printed:

- peak RSS (ru_maxrss) and peak anonymous memory (RssAnon, sampled every 20 ms) of the
  eval process at 50, 706 (all of CODIS)
  and 4 x 706 queries (CODIS copied four times with distinct image bytes, as in
  build_memory.py); bound: under 400 MB and flat;
- whether the run completes inside a memory cgroup limited to 400 MB (memory_limit.py; where
  the machine has a writable memory controller): peak RSS counts the mapped dataset pages,
  which the kernel drops under a limit, so the limited run is the test of "fits in 400 MB";
- the run's own generation time (its ``time:`` line: first request to last
  reply) for 64 and 706 queries, against the concurrency bound
  ``ceil(n / 64) x latency`` (64 requests in flight at most); target: within 1.5x.
  The process wall time (imports, dataset, merge, official export) is shown beside it.

One first run per build (2 queries, reported apart: it includes datasets' one-time Parquet to
Arrow conversion, whose peak grows with the shard, not with the queries: pyarrow's
``Fragment.to_batches`` keeps a file's reads until its end, apache/arrow#39808) fills the
datasets cache, the page cache and Python's bytecode cache; every setting then runs
``--repeats`` times, min and median reported.

    .venv/bin/python tests/benchmarks/api_eval.py [--latency 0.5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "benchmarks"))

import memory_limit  # noqa: E402
from build_memory import make_copies  # noqa: E402

from cogbench.cards.release import build_release  # noqa: E402

from openai_server import OpenAIServer, Reply  # noqa: E402
from shared_files import raw_data_dir  # noqa: E402

BOUND_MB = 400
CEILING = 64


SCRIPT = (
    "import resource, sys, threading, time\n"
    "samples = []\n"
    "def sample():\n"
    "    while True:\n"
    "        line = next(l for l in open('/proc/self/status') if l.startswith('RssAnon'))\n"
    "        samples.append(int(line.split()[1])); time.sleep(0.02)\n"
    "threading.Thread(target=sample, daemon=True).start()\n"
    "from cogbench.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "quarter = max(1, len(samples) // 4)\n"
    "print('quarters_kb', *[max(samples[i * quarter:(i + 1) * quarter] or [0]) for i in range(4)])\n"
    "print('peak_kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, max(samples)); sys.exit(code)"
)


def eval_command(dataset: Path, limit: int | None, base_url: str, out: Path) -> list[str]:
    return [
        sys.executable,
        "-c",
        SCRIPT,
        "eval",
        "--task",
        "codis",
        "--model",
        "openai:bench",
        "--base-url",
        base_url,
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--no-score",
        *(["--limit", str(limit)] if limit else []),
    ]


def eval_environment(cache: Path) -> dict[str, str]:
    """The datasets cache inside the benchmark's folder: its Arrow files are known (and evictable)."""
    return dict(
        os.environ, OPENAI_API_KEY="benchmark", HF_HUB_OFFLINE="1", TQDM_DISABLE="1", HF_DATASETS_CACHE=str(cache)
    )


def generation_seconds(stdout: str) -> float:
    return float(re.search(r"^time: ([0-9.]+) s", stdout, re.M).group(1))


def eval_once(dataset: Path, limit: int | None, base_url: str, out: Path, cache: Path) -> tuple:
    """(process seconds, generation seconds, peak RSS MB, peak anonymous MB, peak anonymous MB in each
    quarter of the process's life) of one `cogbench eval` process."""
    started = time.perf_counter()
    result = subprocess.run(
        eval_command(dataset, limit, base_url, out), capture_output=True, text=True, env=eval_environment(cache)
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"eval failed ({result.returncode}):\n{result.stderr[-2000:]}")
    peak_kb, anonymous_kb = map(int, re.search(r"^peak_kb (\d+) (\d+)", result.stdout, re.M).groups())
    quarters = [int(kb) / 1024 for kb in re.search(r"^quarters_kb (.*)$", result.stdout, re.M).group(1).split()]
    return seconds, generation_seconds(result.stdout), peak_kb / 1024, anonymous_kb / 1024, quarters


def limited(dataset: Path, limit: int | None, base_url: str, out: Path, cache: Path) -> str:
    """One run inside a memory cgroup of BOUND_MB (memory_limit.py): does it fit, and how fast."""
    run = memory_limit.run_limited(
        eval_command(dataset, limit, base_url, out), BOUND_MB, eval_environment(cache), evict=[cache, dataset]
    )
    if run.returncode != 0 or run.oom_kills:
        return f"FAILED (exit {run.returncode}, {run.oom_kills} killed for memory)"
    return (
        f"completed, 0 killed for memory, cgroup peak {run.max_usage_mb:.0f} MB (its page cache included), "
        f"generation {generation_seconds(run.stdout):.2f} s"
    )


def repeated(count: int, dataset: Path, limit: int | None, base_url: str, work: Path) -> list[tuple]:
    return [
        eval_once(dataset, limit, base_url, work / f"run-{limit}-{time.monotonic_ns()}", work / "hf-cache")
        for _ in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as folder,
        OpenAIServer(lambda request: Reply(text="answer", delay_seconds=args.latency), record=False) as server,
    ):
        work = Path(folder)
        raw = raw_data_dir()
        single = build_release(raw, work / "release").out
        copies = make_copies(raw / "codis", work / "raw-x4" / "codis", 4).parent
        for other in raw.iterdir():  # the CogBench files as they are: only CODIS is multiplied
            if other.name != "codis":
                (copies / other.name).symlink_to(other.resolve())
        quadruple = build_release(copies, work / "release-x4").out
        # The first eval of a build on a machine also runs datasets' one-time conversion of the Parquet
        # shards into its Arrow cache; measured apart (2 queries each), then every setting reads the cache.
        first_load = {
            label: eval_once(dataset, 1, server.base_url, work / f"first-{label}", work / "hf-cache")
            for label, dataset in (("706", single), ("4x706", quadruple))
        }
        settings = [("50", single, 25), ("64", single, 32), ("706", single, None), ("4x706", quadruple, None)]
        results = {
            label: repeated(args.repeats, dataset, limit, server.base_url, work) for label, dataset, limit in settings
        }
        why_not = memory_limit.available()
        fits = {
            label: why_not or limited(dataset, limit, server.base_url, work / f"limited-{label}", work / "hf-cache")
            for label, dataset, limit in settings
            if label in ("50", "4x706")
        }

    print(
        f"cogbench eval --model openai: on CODIS, {args.latency} s per request, ceiling {CEILING}; "
        f"{args.repeats} runs per setting after one warm-up (min / median)"
    )
    print(
        f"{'queries':>8} {'peak RSS MB':>16} {'peak anon MB':>14} {'generation s':>16} {'bound s':>8} {'x bound':>12} {'process s':>14}"
    )
    for label, runs in results.items():
        count = {"50": 50, "64": 64, "706": 706, "4x706": 4 * 706}[label]
        bound = math.ceil(count / CEILING) * args.latency
        peaks = [r[2] for r in runs]
        generation = [r[1] for r in runs]
        process = [r[0] for r in runs]
        anonymous = [r[3] for r in runs]
        print(
            f"{label:>8} {min(peaks):7.0f} / {statistics.median(peaks):6.0f} "
            f"{min(anonymous):6.0f} / {statistics.median(anonymous):5.0f} "
            f"{min(generation):7.2f} / {statistics.median(generation):6.2f} {bound:8.1f} "
            f"{min(generation) / bound:5.2f} / {statistics.median(generation) / bound:4.2f} "
            f"{min(process):6.1f} / {statistics.median(process):5.1f}"
        )
    for column, what in ((2, "RSS"), (3, "anonymous memory")):
        worst = max(r[column] for runs in results.values() for r in runs)
        print(
            f"worst peak {what} {worst:.0f} MB: {'within' if worst < BOUND_MB else 'OVER'} the {BOUND_MB} MB bound; "
            f"4x706 / 50: {max(r[column] for r in results['4x706']) / min(r[column] for r in results['50']):.2f}, "
            f"4x706 / 706 (request window full in both): "
            f"{max(r[column] for r in results['4x706']) / min(r[column] for r in results['706']):.2f}"
        )
    quarters = " / ".join(f"{mb:.0f}" for mb in results["4x706"][-1][4])
    print(
        f"4x706, peak anonymous MB in each quarter of the run (imports first): {quarters} "
        "(requests are built at most 2 x 64 ahead: memory plateaus once that window is full)"
    )
    for label, run in first_load.items():
        print(
            f"first eval of the {label}-query build on this machine (datasets converts its Parquet shard to the "
            f"Arrow cache, once): peak RSS {run[2]:.0f} MB, peak anonymous {run[3]:.0f} MB"
        )
    print(
        "RSS counts the pages of the memory-mapped Arrow dataset that the run has read (file-backed, "
        "dropped by the kernel under pressure); anonymous memory is what the process itself allocated"
    )
    print(
        f"under a hard {BOUND_MB} MB memory limit (a cgroup, no swap; the dataset's files evicted from the "
        "page cache first, so the run charges its own reads):"
    )
    for label, line in fits.items():
        print(f"{label:>8}: {line}")


if __name__ == "__main__":
    main()
