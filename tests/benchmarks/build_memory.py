"""Peak memory and time of `cogbench build`, `build --previous`, `diff` and `validate` on CODIS and a 4x copy.

The 4x copy is made here, in a temporary folder: ten copies of every CODIS
pair with new ids, each copy pointing at its own image files whose bytes differ
(a few bytes appended after the JPEG end marker, which decoders ignore), so
nothing is deduplicated and four times the images are embedded and decoded.
At each size: a build (v2.0.0), a second build of the same data with
`--previous` the first (v2.0.1: diffs every record and image, writes the
changelog), `diff` of the two, and `validate` of the first.
Each command runs in a fresh process; peak RSS is that process's ru_maxrss (a peak does
not need a warm-up or repeats: it is what one run asks of the machine). The seconds beside
it are of that one run, for context; no ratio is taken from them.
The bound (issues 11, 24): under 400 MB, and not growing with the number of images.

Run: .venv/bin/python tests/benchmarks/build_memory.py [RAW_DIR]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BOUND_MB = 400
COPIES = 4
COMMANDS = ("build", "build --previous", "diff", "validate")


def make_copies(codis: Path, dest: Path, copies: int) -> Path:
    pairs = json.loads((codis / "data.json").read_text(encoding="utf-8"))
    (dest / "images").mkdir(parents=True)
    out = []
    for copy in range(copies):
        for name in sorted({pair["image_id"] for pair in pairs}):
            data = (codis / "images" / name).read_bytes()
            (dest / "images" / f"c{copy}_{name}").write_bytes(data + b"\0" * copy)
        out += [pair | {"id": f"{copy}-{pair['id']}", "image_id": f"c{copy}_{pair['image_id']}"} for pair in pairs]
    (dest / "data.json").write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    return dest


def measure(args: list[str]) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB, last output line) of one cogbench command in a fresh process."""
    script = (
        "import resource, sys; from cogbench.cli import main; code = main(sys.argv[1:]); "
        "print('peak_kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(code)"
    )
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1")
    )
    seconds = time.perf_counter() - started
    if result.returncode not in (0, 1):
        raise SystemExit(f"{args} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    lines = result.stdout.strip().splitlines()
    peak_kb = int(next(line for line in reversed(lines) if line.startswith("peak_kb")).split()[1])
    summary = next((line for line in reversed(lines) if line.startswith(("OK", "FAILED", "built"))), "")
    return seconds, peak_kb / 1024, summary


def main() -> None:
    raw = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[3] / "shared" / "data") / "codis"
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        larger = make_copies(raw, Path(folder) / f"codis-{COPIES}x", COPIES)
        for label, source in (("CODIS x1", raw), (f"CODIS x{COPIES}", larger)):
            first, second = Path(folder) / f"out-{source.name}", Path(folder) / f"next-{source.name}"
            images = sum(1 for _ in (source / "images").iterdir())
            megabytes = sum(p.stat().st_size for p in (source / "images").iterdir()) / 1e6
            results = [
                measure(["build", "--raw-dir", str(source), "--out", str(first)]),
                measure(
                    [
                        "build",
                        "--raw-dir",
                        str(source),
                        "--out",
                        str(second),
                        "--previous",
                        str(first),
                        "--version",
                        "2.0.1",
                    ]
                ),
                measure(["diff", str(first), str(second)]),
                measure(["validate", str(first), "--expected", "none"]),
            ]
            rows.append((label, images, megabytes, results))
    header = " | ".join(f"{name:>16}" for name in COMMANDS)
    print(f"{'data':<11} {'images':>6} {'MB':>6} | {header}   (seconds of one run / peak RSS MB)")
    for label, images, megabytes, results in rows:
        cells = " | ".join(f"{seconds:6.1f}s {peak:6.0f}MB" for seconds, peak, _ in results)
        print(f"{label:<11} {images:>6} {megabytes:6.0f} | {cells}")
    small, large = rows[0][3], rows[1][3]
    ratios = ", ".join(f"{name} {b[1] / a[1]:.2f}" for name, a, b in zip(COMMANDS, small, large))
    print(f"x{COPIES} / x1 peak RSS: {ratios}")
    print(f"validate summaries: {small[3][2]!r} / {large[3][2]!r}")
    worst = max(result[1] for row in rows for result in row[3])
    print(f"worst peak RSS {worst:.0f} MB: {'within' if worst < BOUND_MB else 'OVER'} the {BOUND_MB} MB bound")


if __name__ == "__main__":
    main()
