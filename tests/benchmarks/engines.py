"""Engines side by side: one tiny model, the same 64 CODIS queries, every way cogbench runs a model.

The tiny random-weight Qwen2.5-VL of tests/tiny_models.py (hidden size 128, the one CI serves),
the first 32 CODIS items of the built release (64 queries), 32 new tokens at most, greedy, through:

- ``hf:`` at batch 8 (transformers in the process);
- ``vllm:`` in the process (vLLM's offline ``LLM``, all 64 queries in one chunk);
- ``openai:`` against ``vllm serve`` of the same folder (the server's start-up is the start-up);
- ``vllm run-batch`` on the request file of ``cogbench eval --write-requests`` (the ``openai:``
  path's own request bodies), its output read back with ``--read-responses``. Its start-up is the
  time to vLLM's "Reading batch" log line; the rest is generation; writing and reading the files
  are timed apart.

Each engine runs once, as its own process tree; printed: start-up seconds, generation seconds
(cogbench's ``time:`` line), wall seconds (the whole tree, start to exit), queries/s over
generation, peak RSS of the tree (sum over its processes, sampled every 0.1 s), answers equal to
``vllm:``'s, and the ratio of queries/s and of wall time to ``hf:``. vLLM runs as CI runs it on
CPU (float32, eager, 1 GiB of KV cache). One run per engine: start-up dominates and repeats cost
minutes on a shared machine, so read the table as one sample.

The engines run with the vllm venv's python (.ci/run-vllm builds it; it holds torch,
transformers, torchvision, vllm and cogbench), named by ``COGBENCH_VLLM_PYTHON`` as in the
tests; this script itself runs in the test venv:

    COGBENCH_VLLM_PYTHON=.venv-vllm/bin/python .venv/bin/python tests/benchmarks/engines.py
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

from cogbench.cards.release import build_release
from cogbench.reference_eval.formats.predictions import read_predictions

from shared_files import raw_data_dir
from vllm_helpers import NAME, engine_env, free_port

ENGINE_PYTHON = os.environ.get(
    "COGBENCH_VLLM_PYTHON", str(Path(__file__).resolve().parents[2] / ".venv-vllm/bin/python")
)
ENGINE = ["--enforce-eager", "--dtype", "float32", "--max-model-len", "4096", "--limit-mm-per-prompt", '{"image":1}']
SERVER_ONLY = ["--gpu-memory-utilization", "0.2", "--seed", "0"]


class PeakMemory:
    """Peak of the summed RSS of a process and its descendants, sampled every 0.1 s."""

    def __init__(self, *pids: int):
        self.pids, self.peak, self._stop = list(pids), 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            total = 0
            for pid in self.pids:
                try:
                    root = psutil.Process(pid)
                    for process in [root, *root.children(recursive=True)]:
                        total += process.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            time.sleep(0.1)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak / 2**20


def vllm_env(work: Path) -> dict[str, str]:
    return engine_env(work, TQDM_DISABLE="1", OPENAI_API_KEY="EMPTY")


def cogbench_eval(work: Path, model: str, dataset: str, out: Path, *extra: str, watch: tuple[int, ...] = ()) -> dict:
    """One `cogbench eval` process: its own start-up and generation seconds, wall seconds, peak RSS MiB."""
    command = [ENGINE_PYTHON, "-m", "cogbench", "eval", "--task", "codis", "--model", model, "--dataset", dataset]
    command += ["--out", str(out), "--limit", "32", "--max-new-tokens", "32", "--no-score", *extra]
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=vllm_env(work))
    memory = PeakMemory(process.pid, *watch)
    out_text, err_text = process.communicate()
    wall = time.monotonic() - started
    peak = memory.stop()
    if process.returncode != 0:
        raise SystemExit(f"{model}: exit {process.returncode}\n{err_text[-3000:]}")
    timing = re.search(r"time: ([\d.]+) s generating.*after ([\d.]+) s loading", out_text)
    return {
        "generation": float(timing.group(1)),
        "startup": float(timing.group(2)),
        "wall": wall,
        "peak": peak,
        "answers": [(p.key, p.output) for p in read_predictions(out / "predictions.jsonl")],
    }


def openai_against_vllm_serve(work: Path, model: Path, dataset: str) -> dict:
    port = free_port()
    command = [ENGINE_PYTHON, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model)]
    command += ["--served-model-name", NAME, "--host", "127.0.0.1", "--port", str(port), *ENGINE, *SERVER_ONLY]
    log = (work / "serve.log").open("wb")
    started = time.monotonic()
    server = subprocess.Popen(command, stdout=log, stderr=log, env=vllm_env(work), start_new_session=True)
    memory = PeakMemory(server.pid)
    try:
        while True:
            if server.poll() is not None:
                raise SystemExit(f"vllm serve exited {server.returncode}: see {work / 'serve.log'}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).read()
                break
            except OSError:
                time.sleep(0.5)
        ready = time.monotonic() - started
        base = f"http://127.0.0.1:{port}/v1"
        result = cogbench_eval(
            work, f"openai:{NAME}", dataset, work / "openai", "--base-url", base, watch=(server.pid,)
        )
    finally:
        server.terminate()
        server.wait(timeout=60)
    server_peak = memory.stop()
    return {**result, "startup": ready, "wall": ready + result["wall"], "peak": max(result["peak"], server_peak)}


def request_files(dataset_dir: str, work: Path, *extra: str) -> float:
    """`cogbench eval --write-requests` (or `--read-responses`) of the 64 queries; returns its seconds."""
    command = [ENGINE_PYTHON, "-m", "cogbench", "eval", "--task", "codis", "--model", f"openai:{NAME}"]
    command += ["--base-url", "http://127.0.0.1:9/v1", "--dataset", dataset_dir, "--out", str(work / "batch")]
    command += ["--limit", "32", "--max-new-tokens", "32", "--no-score", *extra]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env={**vllm_env(work), "OPENAI_API_KEY": "EMPTY"})
    if done.returncode != 0:
        raise SystemExit(f"cogbench eval {' '.join(extra)}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return time.monotonic() - started


def run_batch(work: Path, model: Path, dataset_dir: str) -> dict:
    written = request_files(dataset_dir, work, "--write-requests", str(work / "requests"))
    (shard,) = sorted((work / "requests").glob("requests-*.jsonl"))
    command = [ENGINE_PYTHON, "-m", "vllm.entrypoints.openai.run_batch", "-i", str(shard)]
    command += ["-o", str(work / "responses.jsonl"), "--model", str(model), "--served-model-name", NAME, *ENGINE]
    command += SERVER_ONLY
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=vllm_env(work))
    memory = PeakMemory(process.pid)
    ready, log = None, []
    for raw in process.stdout:
        line = raw.decode("utf-8", "replace")
        log.append(line)
        if ready is None and "Reading batch from" in line:
            ready = time.monotonic() - started
    process.wait()
    wall = time.monotonic() - started
    peak = memory.stop()
    if process.returncode != 0 or ready is None:
        raise SystemExit(f"run-batch: exit {process.returncode}\n{''.join(log[-40:])}")
    read = request_files(dataset_dir, work, "--read-responses", str(work / "responses.jsonl"))
    print(f"run-batch: --write-requests {written:.1f} s, --read-responses {read:.1f} s (beside the table)")
    answers = [(p.key, p.output) for p in read_predictions(work / "batch" / "predictions.jsonl")]
    return {"generation": wall - ready, "startup": ready, "wall": wall, "peak": peak, "answers": answers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", help="built dataset folder (default: build ../shared/data into a temp folder)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import tiny_models

    with tempfile.TemporaryDirectory(prefix="engines-") as temporary:
        work = Path(temporary)
        dataset = args.dataset or str(build_release(raw_data_dir(), work / "release").out)
        model = tiny_models.build_tiny_qwen2_5_vl(work / "model", hidden_size=128)
        rows = {}
        for name, run in [
            ("hf: batch 8", lambda: cogbench_eval(work, f"hf:{model}", dataset, work / "hf", "--batch-size", "8")),
            (
                "vllm: in process",
                lambda: cogbench_eval(work, f"vllm:{model}", dataset, work / "vllm", "--batch-size", "64", *ENGINE),
            ),
            ("openai: + vllm serve", lambda: openai_against_vllm_serve(work, model, dataset)),
            ("vllm run-batch", lambda: run_batch(work, model, dataset)),
        ]:
            rows[name] = run()
            print(f"{name}: done in {rows[name]['wall']:.0f} s", flush=True)
        print_table(rows, psutil.cpu_count(), os.getloadavg()[0])


def print_table(rows: dict, cores: int, load: float) -> None:
    base = rows["hf: batch 8"]
    same = rows["vllm: in process"]["answers"]
    print(f"\n64 CODIS queries, 32 new tokens at most; {cores} CPU cores, load average {load:.1f} at the end")
    print(
        f"{'engine':<22} {'start-up s':>10} {'generate s':>10} {'wall s':>7} {'queries/s':>9} "
        f"{'peak MiB':>8} {'= vllm:':>7} {'q/s x hf':>8} {'wall x hf':>9}"
    )
    for name, row in rows.items():
        rate = 64 / row["generation"]
        print(
            f"{name:<22} {row['startup']:10.1f} {row['generation']:10.1f} {row['wall']:7.1f} {rate:9.2f} "
            f"{row['peak']:8.0f} {'yes' if row['answers'] == same else 'no':>7} "
            f"{rate / (64 / base['generation']):8.2f} {row['wall'] / base['wall']:9.2f}"
        )


if __name__ == "__main__":
    main()
