"""Time `validate` on all of CODIS (216 images decoded), raw and built, side by side.

Run: .venv/bin/python tests/benchmarks/validate_codis.py [RAW_DIR]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from cogbench.cards.release import build_release  # noqa: E402
from cogbench.validation import validate  # noqa: E402

raw = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data") / "codis"
started = time.perf_counter()
raw_report = validate(raw, expected="codis-1.0")
raw_seconds = time.perf_counter() - started
with tempfile.TemporaryDirectory() as folder:
    built = build_release(raw, Path(folder) / "out").out
    started = time.perf_counter()
    built_report = validate(built, expected="codis-1.0")
    built_seconds = time.perf_counter() - started
print(f"raw   CODIS: {raw_seconds:6.2f} s, {raw_report.stats['images']['decoded']} images decoded, {raw_report.summary()}")
print(f"built CODIS: {built_seconds:6.2f} s, {built_report.stats['images']['decoded']} images decoded, {built_report.summary()}")
print(f"built/raw time ratio: {built_seconds / raw_seconds:.2f}")
