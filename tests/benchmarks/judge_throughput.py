"""Judge throughput on all 706 CODIS queries against the local server at 100 ms per call.

Side by side in one run, each side a fresh Python process timed from the outside
(process start, imports and the judge's sqlite cache included). A first child that
imports everything and sends nothing warms the bytecode and page caches (and is
printed: the start-up every child pays); then every setting runs ``--repeats`` times,
min and median printed, the speed-up taken between minimums against one call at a
time (the baseline):

1. one call at a time, as the official script does;
2. this package's LLM judge at default settings (adaptive concurrency, ceiling 64);
3. the same again on the cache it wrote: must send no request;
4. the judge against a server that answers 429 (with Retry-After) whenever more than
   ``--rate-limit`` requests are in flight: every query judged, none failed, 429s counted;
5. ``cogbench score --task codis`` of the same outputs with ``--judge openai:`` against
   ``--judge rule``, each ``--repeats`` times, interleaved: what the online judge adds to a
   score, against the bound ``ceil(distinct prompts / 64) x latency`` (0.9 s), and their
   ratio (bound / added; 1.0 is the bound, the goal at least 0.8). ``--score-only`` runs
   this part alone.

    .venv/bin/python tests/benchmarks/judge_throughput.py [--latency 0.1] [--rate-limit 4] [--repeats 3] [--score-only]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# The children import only what a judge run imports: the test helpers (pytest among
# them) are the parent's, so they stay out of the process start being timed.
TESTS = Path(__file__).resolve().parents[1]


def prompts(data: Path) -> list[str]:
    from cogbench.reference_eval.judges import codis

    pairs = {p["id"]: p for p in json.loads((data / "data.json").read_text())}
    outputs = json.loads((data / "output_example.json").read_text())
    return [
        codis.judge_prompt(
            pairs[o["id"]]["question"], pairs[o["id"]]["answer"][f"answer_{q}"], o["output"][f"output_{q}"]
        )
        for o in outputs
        for q in (1, 2)
    ]


def worker(mode: str, base_url: str, cache: str, data: Path) -> None:
    """Runs in the child process: judge every prompt, print a JSON summary."""
    from cogbench.reference_eval.backends.openai_api import ChatClient, ChatSettings, text_message
    from cogbench.reference_eval.judges import codis
    from cogbench.reference_eval.judges.llm import LLMJudge

    queries = prompts(data)
    if mode == "start":  # what every child pays before its first request
        LLMJudge(ChatSettings(model="bench", base_url=base_url), cache).close()
        print(json.dumps({"prompts": len(queries)}))
        return
    if mode == "serial":
        with ChatClient(ChatSettings(model="bench", base_url=base_url, concurrency=1)) as client:
            failed = sum(not client.complete(text_message(p)).ok for p in queries)
        print(json.dumps({"failed": failed, "peak": 1}))
        return
    judge = LLMJudge(ChatSettings(model="bench", base_url=base_url), cache)
    replies = judge.ask(queries, accept=lambda prompt, reply: codis.parse_verdict(reply) is not None)
    summary = judge.summary()
    print(
        json.dumps(
            {
                "failed": sum(r.error is not None for r in replies),
                "peak": judge.client.limit.peak,
                "judged": sum(r.error is None for r in replies),
                "rate_limited": summary["usage"]["rate_limited"],
            }
        )
    )
    judge.close()


def timed_child(mode: str, base_url: str, cache: str, data: Path) -> tuple[float, dict]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--worker", mode, "--base-url", base_url, "--cache", cache, "--data", str(data)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": "benchmark"},
    )
    return time.perf_counter() - start, json.loads(done.stdout.strip().splitlines()[-1])


def score_seconds(judge: str, dataset: Path, predictions: Path, out: Path, base_url: str) -> tuple[float, float]:
    """One `cogbench score` process, timed from the outside: (wall, CPU user + system) seconds."""
    extra = ["--judge-base-url", base_url] if judge.startswith("openai:") else []
    command = [sys.executable, "-m", "cogbench", "score", "--task", "codis", "--dataset", str(dataset)]
    command += ["--predictions", str(predictions), "--judge", judge, "--out", str(out), *extra]
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env={**os.environ, "OPENAI_API_KEY": "benchmark"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - start, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def score_against_rule(data: Path, latency: float, repeats: int) -> None:
    """What the online judge adds to `cogbench score` beside the rule judge, against its bound."""
    from cogbench.cards.release import build_release

    sys.path.insert(0, str(TESTS))
    from openai_server import OpenAIServer, Reply

    distinct = len(set(prompts(data)))
    bound = math.ceil(distinct / 64) * latency
    with (
        tempfile.TemporaryDirectory() as folder,
        OpenAIServer(lambda request: Reply(text="right", delay_seconds=latency), record=False) as server,
    ):
        dataset = Path(folder) / "release"
        build_release(data.parent, dataset)
        predictions = data / "output_example.json"
        rule, online = [], []
        score_seconds("rule", dataset, predictions, Path(folder) / "warm", server.base_url)  # warm caches
        for index in range(repeats):  # interleaved, so a busy moment hits both sides alike
            rule.append(score_seconds("rule", dataset, predictions, Path(folder) / f"rule-{index}", server.base_url))
            out = Path(folder) / f"online-{index}"  # a new verdict cache each run
            online.append(score_seconds("openai:bench", dataset, predictions, out, server.base_url))
    added = min(w for w, _ in online) - min(w for w, _ in rule)
    added_cpu = min(c for _, c in online) - min(c for _, c in rule)
    ratio = f"{bound / added:.2f}" if added > 0 else "n/a (the noise is larger than the judge: re-run on idle cores)"
    print(
        f"score --judge rule        : {stats([w for w, _ in rule])}; CPU min {min(c for _, c in rule):.2f} s\n"
        f"score --judge openai:     : {stats([w for w, _ in online])}; CPU min {min(c for _, c in online):.2f} s  "
        f"({distinct} distinct prompts, 64 in flight)\n"
        f"online judge adds         : {added:7.2f} s wall, {added_cpu:.2f} s CPU (minimums) against the bound "
        f"{bound:.2f} s (ceil({distinct}/64) x {latency * 1000:.0f} ms)\n"
        f"ratio bound / added wall  : {ratio} (goal: at least 0.80)"
    )


def stats(seconds: list[float]) -> str:
    return f"min {min(seconds):7.2f} s, median {statistics.median(seconds):7.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--rate-limit", type=int, default=4, help="requests in flight above which the server says 429")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per setting")
    parser.add_argument("--worker", choices=("start", "serial", "package"))
    parser.add_argument("--base-url")
    parser.add_argument("--cache")
    parser.add_argument("--data", type=Path)
    parser.add_argument("--score-only", action="store_true", help="only part 5: score with the online judge vs rule")
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.base_url, args.cache, args.data)

    sys.path.insert(0, str(TESTS))
    from openai_server import OpenAIServer, Reply
    from shared_files import raw_data_dir

    data = raw_data_dir() / "codis"
    if args.score_only:
        return score_against_rule(data, args.latency, args.repeats)

    def runs(mode: str, caches: list[str], base_url: str, server) -> tuple[list[float], dict, int]:
        """Seconds of each run, the last run's summary, requests sent by the first."""
        seconds, out, first_sent = [], {}, None
        for cache in caches:
            before = len(server.chat_requests)
            took, out = timed_child(mode, base_url, cache, data)
            seconds.append(took)
            first_sent = len(server.chat_requests) - before if first_sent is None else first_sent
        return seconds, out, first_sent

    with (
        tempfile.TemporaryDirectory() as folder,
        OpenAIServer(lambda request: Reply(text="right", delay_seconds=args.latency)) as server,
    ):
        start, _ = timed_child("start", server.base_url, str(Path(folder) / "start.sqlite"), data)  # warm-up
        serial, _serial_out, sent_serial = runs("serial", [""] * args.repeats, server.base_url, server)
        fresh = [str(Path(folder) / f"cache-{i}.sqlite") for i in range(args.repeats)]  # a new cache each run
        package, package_out, sent_package = runs("package", fresh, server.base_url, server)
        cached, _, sent_cached = runs("package", [fresh[0]] * args.repeats, server.base_url, server)

    in_flight, lock, too_many = [0], threading.Lock(), [0]

    def limited(request):
        with lock:
            in_flight[0] += 1
            over = in_flight[0] > args.rate_limit
            too_many[0] += over
        try:
            if over:
                return Reply(status=429, headers={"Retry-After": "1"})
            time.sleep(args.latency)
            return Reply(text="right")
        finally:
            with lock:
                in_flight[0] -= 1

    with tempfile.TemporaryDirectory() as folder, OpenAIServer(limited) as server:
        limited_time, limited_out = timed_child("package", server.base_url, str(Path(folder) / "cache.sqlite"), data)

    count = len(prompts(data))
    print(
        f"{count} CODIS judge queries, {args.latency * 1000:.0f} ms per call; times include process start; "
        f"{args.repeats} runs per setting after a warm-up child"
    )
    print(f"process start alone     : {start:7.2f} s  (warm-up: imports, data, client; no request)")
    print(f"one call at a time      : {stats(serial)}  ({sent_serial} requests per run)")
    print(
        f"cogbench judge (default): {stats(package)}  ({sent_package} requests per run: identical prompts sent once; "
        f"concurrency peaked at {package_out['peak']})"
    )
    print(
        f"speed-up (minimums)     : {min(serial) / min(package):7.1f}x end to end; "
        f"{(min(serial) - start) / max(min(package) - start, 1e-9):.1f}x without the process start"
    )
    print(f"cached re-run           : {stats(cached)}  ({sent_cached} requests)")
    print(
        f"429 above {args.rate_limit} in flight   : {limited_time:7.2f} s (one run)  judged {limited_out['judged']}, "
        f"failed {limited_out['failed']}, 429s received {limited_out['rate_limited']} "
        f"(server sent {too_many[0]}), concurrency peaked at {limited_out['peak']}"
    )
    score_against_rule(data, args.latency, args.repeats)


if __name__ == "__main__":
    main()
