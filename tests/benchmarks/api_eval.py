"""`cogbench eval --model openai:` against the local server: peak memory and wall time against the bound.

Each run is a fresh ``cogbench eval`` process (``--no-score``) against a real local
HTTP server (tests/openai_server.py) that answers every request after
``--latency`` seconds. Printed:

- peak RSS (ru_maxrss) and peak anonymous memory (RssAnon, sampled every 20 ms) of the
  eval process at 50, 706 (all of CODIS)
  and 4 x 706 queries (CODIS copied four times with distinct image bytes, as in
  build_memory.py); bound: under 400 MB and flat;
- the run's own generation time (its ``time:`` line: first request to last
  reply) for 64 and 706 queries, against the concurrency bound
  ``ceil(n / 64) x latency`` (64 requests in flight at most); target: within 1.5x.
  The process wall time (imports, dataset, merge, official export) is shown beside it.

One warm-up run (discarded) fills the page cache and Python's bytecode cache; every
setting then runs ``--repeats`` times, min and median reported.

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

from build_memory import make_copies  # noqa: E402
from openai_server import OpenAIServer, Reply  # noqa: E402
from shared_files import raw_data_dir  # noqa: E402

from cogbench.cards.release import build_release  # noqa: E402

BOUND_MB = 400
CEILING = 64


def eval_once(dataset: Path, limit: int | None, base_url: str, out: Path) -> tuple[float, float, float, float]:
    """(process seconds, generation seconds, peak RSS MB, peak anonymous MB) of one `cogbench eval` process."""
    script = (
        "import resource, sys, threading, time\n"
        "peak = [0]\n"
        "def sample():\n"
        "    while True:\n"
        "        line = next(l for l in open('/proc/self/status') if l.startswith('RssAnon'))\n"
        "        peak[0] = max(peak[0], int(line.split()[1])); time.sleep(0.02)\n"
        "threading.Thread(target=sample, daemon=True).start()\n"
        "from cogbench.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print('peak_kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, peak[0]); sys.exit(code)"
    )
    argv = ["eval", "--task", "codis", "--model", "openai:bench", "--base-url", base_url, "--dataset", str(dataset),
            "--out", str(out), "--no-score", *(["--limit", str(limit)] if limit else [])]
    env = dict(os.environ, OPENAI_API_KEY="benchmark", HF_HUB_OFFLINE="1", TQDM_DISABLE="1")
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"eval failed ({result.returncode}):\n{result.stderr[-2000:]}")
    generation = float(re.search(r"^time: ([0-9.]+) s", result.stdout, re.M).group(1))
    peak_kb, anonymous_kb = map(int, re.search(r"^peak_kb (\d+) (\d+)", result.stdout, re.M).groups())
    return seconds, generation, peak_kb / 1024, anonymous_kb / 1024


def repeated(count: int, dataset: Path, limit: int | None, base_url: str, work: Path) -> list[tuple]:
    return [eval_once(dataset, limit, base_url, work / f"run-{limit}-{time.monotonic_ns()}") for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, \
            OpenAIServer(lambda request: Reply(text="answer", delay_seconds=args.latency), record=False) as server:
        work = Path(folder)
        raw = raw_data_dir()
        single = build_release(raw, work / "release").out
        copies = make_copies(raw / "codis", work / "raw-x4" / "codis", 4).parent
        for other in raw.iterdir():  # the CogBench files as they are: only CODIS is multiplied
            if other.name != "codis":
                (copies / other.name).symlink_to(other.resolve())
        quadruple = build_release(copies, work / "release-x4").out
        eval_once(single, 25, server.base_url, work / "warm-up")
        settings = [("50", single, 25), ("64", single, 32), ("706", single, None), ("4x706", quadruple, None)]
        results = {label: repeated(args.repeats, dataset, limit, server.base_url, work) for label, dataset, limit in settings}

    print(f"cogbench eval --model openai: on CODIS, {args.latency} s per request, ceiling {CEILING}; "
          f"{args.repeats} runs per setting after one warm-up (min / median)")
    print(f"{'queries':>8} {'peak RSS MB':>16} {'peak anon MB':>14} {'generation s':>16} {'bound s':>8} {'x bound':>12} {'process s':>14}")
    for label, runs in results.items():
        count = {"50": 50, "64": 64, "706": 706, "4x706": 4 * 706}[label]
        bound = math.ceil(count / CEILING) * args.latency
        peaks = [r[2] for r in runs]
        generation = [r[1] for r in runs]
        process = [r[0] for r in runs]
        anonymous = [r[3] for r in runs]
        print(f"{label:>8} {min(peaks):7.0f} / {statistics.median(peaks):6.0f} "
              f"{min(anonymous):6.0f} / {statistics.median(anonymous):5.0f} "
              f"{min(generation):7.2f} / {statistics.median(generation):6.2f} {bound:8.1f} "
              f"{min(generation) / bound:5.2f} / {statistics.median(generation) / bound:4.2f} "
              f"{min(process):6.1f} / {statistics.median(process):5.1f}")
    for column, what in ((2, "RSS"), (3, "anonymous memory")):
        worst = max(r[column] for runs in results.values() for r in runs)
        print(f"worst peak {what} {worst:.0f} MB: {'within' if worst < BOUND_MB else 'OVER'} the {BOUND_MB} MB bound; "
              f"4x706 / 50: {max(r[column] for r in results['4x706']) / min(r[column] for r in results['50']):.2f}")
    print("RSS counts the pages of the memory-mapped Arrow dataset that the run has read (file-backed, "
          "dropped by the kernel under pressure); anonymous memory is what the process itself allocated")


if __name__ == "__main__":
    main()
