"""Time `validate` on all of CODIS (216 images decoded), raw and built, side by side.

Each side warms up once (imports, caches, page cache), then runs ``--repeats`` times: min and
median printed, the ratio taken between minimums (tests/benchmarks/timing.py).

Run: .venv/bin/python tests/benchmarks/validate_codis.py [RAW_DIR] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import timed

from cogbench.cards.release import build_release
from cogbench.validation import validate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("raw_dir", nargs="?", default="../shared/data")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    raw = Path(args.raw_dir) / "codis"
    with tempfile.TemporaryDirectory() as folder:
        built = build_release(raw, Path(folder) / "out").out
        raw_time = timed(lambda: validate(raw, expected="codis-1.0"), args.repeats)
        built_time = timed(lambda: validate(built, expected="codis-1.0"), args.repeats)
    for label, timing in (("raw  ", raw_time), ("built", built_time)):
        report = timing.result
        print(f"{label} CODIS: {timing}, {report.stats['images']['decoded']} images decoded, {report.summary()}")
    print(
        f"built/raw time ratio (minimums): {built_time.best / raw_time.best:.2f}; "
        f"one warm-up + {args.repeats} runs each"
    )


if __name__ == "__main__":
    main()
