"""`cogbench --version`, `--help` and every refusal of a bad option answer before any heavy import.

Each case runs in a fresh interpreter (what a user's shell starts) and reads back which of the heavy
libraries that interpreter imported. The times and memory are measured by
tests/benchmarks/startup.py, not here (a shared CI machine's timings would make a flaky test).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# The libraries whose import `--help` must never pay (issue 49): each costs 0.1 s to over 1 s.
HEAVY = ("datasets", "torch", "transformers", "pandas", "pyarrow", "numpy", "jsonschema", "huggingface_hub")

PROBE = """
import contextlib, io, json, sys
from cogbench.cli import main
for argv in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    print(json.dumps({"argv": argv, "code": code, "heavy": sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules)}))
"""


def probe(*argvs: list[str]) -> list[dict]:
    """Run `cogbench ARGV...` one after another in one fresh interpreter; what each left imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(argvs)), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def subcommands() -> list[str]:
    from cogbench.cli import build_parser

    parser = build_parser()
    choices = next(a for a in parser._actions if a.choices and a.dest == "command").choices
    return sorted(choices)


def test_version_and_help_import_nothing_heavy():
    results = probe(["--version"], ["--help"])
    assert [r["code"] for r in results] == [0, 0]
    assert [r["heavy"] for r in results] == [[], []]


def test_the_probe_sees_a_heavy_import(real_raw_dir):
    """The probe itself can fail: a command that checks raw data imports jsonschema, and is seen doing so (a refusal,
    ``validate`` of a folder that does not exist, now imports nothing heavy)."""
    refused, checked = probe(["validate", "/nonexistent-cogbench-folder"], ["validate", str(real_raw_dir)])
    assert refused["code"] == 2 and "datasets" not in refused["heavy"]
    assert "jsonschema" in checked["heavy"]


@pytest.mark.parametrize("flag", ["--help", "--no-such-option"])
def test_every_subcommand_answers_help_and_refuses_a_bad_option_before_any_heavy_import(flag):
    names = subcommands()
    assert {"build", "eval", "score", "verify", "report"} <= set(names)
    results = probe(*([name, flag] for name in names))
    assert len(results) == len(names)
    expected_code = 0 if flag == "--help" else 2
    bad = {r["argv"][0]: (r["code"], r["heavy"]) for r in results if r["heavy"] or r["code"] != expected_code}
    assert bad == {}


def test_nested_subcommands_refuse_a_bad_option_before_any_heavy_import():
    (result,) = probe(["judges", "certify", "--no-such-option"])
    assert (result["code"], result["heavy"]) == (2, [])
