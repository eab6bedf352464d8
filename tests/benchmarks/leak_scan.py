"""Time `cogbench leak-scan` on a million precomputed hashes, and (``--images N``) on a folder of N images.

The issue's bar (51): a million hashes against the benchmark's images in at most 60 s on 2 cores with a peak
resident set of at most 1 GB. The hashes are generated here (random, plus ``--planted`` copies of benchmark
hashes with a few bits flipped, which the scan must find); the command runs in a subprocess pinned to two
cores (``taskset``, ``OMP_NUM_THREADS=2``), its wall time and peak RSS (``wait4``'s ru_maxrss) printed.
The folder (``--images``) holds small generated JPEGs, some of them copies of benchmark images.

Run: .venv/bin/python tests/benchmarks/leak_scan.py [--dataset BUILD] [--rows 1000000] [--images 10000]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from cogbench.cards.release import build_release
from cogbench.dataset_builders.fingerprints import FAMILIES, FINGERPRINT_FILE


def hex_array(codes: np.ndarray) -> pa.Array:
    """(n, bytes) uint8 codes as a pyarrow string array of hex, without a Python loop."""
    n, width = codes.shape
    data = codes.tobytes().hex().encode("ascii")
    offsets = np.arange(0, 2 * width * (n + 1), 2 * width, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data))


def codes_of(hexes: list[str], bits: int) -> np.ndarray:
    return np.frombuffer(bytes.fromhex("".join(hexes)), dtype=np.uint8).reshape(len(hexes), bits // 8)


def write_hashes(path: Path, rows: int, planted: int, prints: list[dict], seed: int = 0) -> list[int]:
    """``rows`` random hash rows, ``planted`` of them copies of benchmark images' hashes with 2 bits flipped."""
    rng = np.random.default_rng(seed)
    where = sorted(rng.choice(rows, planted, replace=False).tolist())
    chunk = 200_000
    with pq.ParquetWriter(path, pa.schema([("key", pa.string())] + [(f, pa.string()) for f in FAMILIES])) as writer:
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            columns = {"key": pa.array([f"item-{i:07d}" for i in range(start, start + n)])}
            for family, bits in FAMILIES.items():
                codes = rng.integers(0, 256, (n, bits // 8), dtype=np.uint8)
                for k, row in enumerate(where):
                    if start <= row < start + n:
                        source = codes_of([prints[k % len(prints)][family]], bits)[0].copy()
                        source[0] ^= 0b00000011  # two bits flipped
                        codes[row - start] = source
                columns[family] = hex_array(codes)
            writer.write_table(pa.table(columns))
    return where


def write_images(folder: Path, count: int, planted: int, raw_images: list[Path], seed: int = 1) -> None:
    """``count`` small JPEGs: generated pictures, ``planted`` of them benchmark images at 200 px, quality 60."""
    from PIL import Image

    from cogbench.reference_eval.contamination.calibration import distractors

    folder.mkdir(parents=True)
    for index in range(planted):
        image = Image.open(raw_images[index % len(raw_images)]).convert("RGB")
        image.thumbnail((200, 200))
        image.save(folder / f"planted-{index:04d}.jpg", quality=60)
    made = 0
    while made < count - planted:
        for image in distractors(min(500, count - planted - made), seed=seed + made):
            buffer = io.BytesIO()
            image.resize((max(16, image.width // 2), max(16, image.height // 2))).save(buffer, "JPEG", quality=85)
            (folder / f"img-{made:06d}.jpg").write_bytes(buffer.getvalue())
            made += 1


def run_pinned(argv: list[str]) -> tuple[float, float, int, str]:
    """(wall seconds, peak RSS in MB, exit code, stdout) of ``cogbench ARGV`` on two cores."""
    command = [sys.executable, "-m", "cogbench", *argv]
    if shutil.which("taskset"):
        command = ["taskset", "-c", "0,1", *command]
    env = dict(os.environ, OMP_NUM_THREADS="2")
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - started, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--raw-dir", default="../shared/data")
    parser.add_argument("--dataset", type=Path, default=None, help="a build (default: built here from --raw-dir)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--planted", type=int, default=25)
    parser.add_argument("--images", type=int, default=0, help="also scan a folder of this many generated images")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build = args.dataset or build_release(args.raw_dir, folder / "build").out
        prints = pq.read_table(build / FINGERPRINT_FILE).to_pylist()
        started = time.perf_counter()
        where = write_hashes(folder / "hashes.parquet", args.rows, args.planted, prints)
        size = (folder / "hashes.parquet").stat().st_size / 1e6
        print(f"generated {args.rows:,} hash rows ({size:.0f} MB) in {time.perf_counter() - started:.1f} s")
        wall, rss, code, out = run_pinned(
            ["leak-scan", str(folder / "hashes.parquet"), "--dataset", str(build), "--out", str(folder / "r1")]
        )
        print(out.strip().splitlines()[0])
        print(
            f"hash corpus: {args.rows:,} rows against {len(prints)} images: {wall:.1f} s wall on 2 cores, "
            f"peak RSS {rss:.0f} MB, exit {code} (bars: <= 60 s, <= 1024 MB; {len(where)} planted copies)"
        )
        if args.images:
            raw = sorted(Path(args.raw_dir).glob("*/images/*.jpg"))
            started = time.perf_counter()
            write_images(folder / "images", args.images, args.planted, raw)
            print(f"generated {args.images:,} images in {time.perf_counter() - started:.1f} s")
            wall, rss, code, out = run_pinned(
                ["leak-scan", str(folder / "images"), "--dataset", str(build), "--out", str(folder / "r2")]
            )
            print(out.strip().splitlines()[0])
            print(
                f"image folder: {args.images:,} images end to end: {wall:.1f} s wall on 2 cores, peak RSS {rss:.0f} MB, exit {code}"
            )


if __name__ == "__main__":
    main()
