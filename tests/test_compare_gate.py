"""``cogbench compare A B --gate --max-drop X`` (issue 50, item 6) on real scored CODIS runs.

A is the authors' example outputs scored against the built release (every pair right); B has a share of
its pairs' two outputs swapped (both answers wrong), as tests/test_intervals.py builds its comparisons.
The bar's boundary is derived here from the runs' details.jsonl (pairs per image, the paired ratio
linearisation with a t quantile on G - 1 degrees of freedom), not from cogbench's comparison code.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import needs_real_data
from scipy import stats
from test_intervals import codis_example, score_codis, swap_pairs

from cogbench.cli import main
from cogbench.errors import EXIT_CODES, EXIT_GATE_FAILED, EXIT_USAGE


def upper_end_of_b_minus_a(a: Path, b: Path) -> tuple[float, float]:
    """(B - A, upper end of its 95% interval) of acc_p overall, in points, from the two runs' details."""
    per_image = []
    for run in (a, b):
        hits: dict[str, float] = defaultdict(float)
        totals: dict[str, float] = defaultdict(float)
        for line in (run / "details.jsonl").read_text().splitlines():
            pair = json.loads(line)
            rights = [query["right"] for query in pair["queries"]]
            if all(right is not None for right in rights):  # a pair counts when both answers were scored
                hits[pair["image_id"]] += all(rights)
                totals[pair["image_id"]] += 1
        per_image.append((hits, totals))
    (hits_a, totals_a), (hits_b, totals_b) = per_image
    images = sorted(set(totals_a) & set(totals_b))
    sum_a, sum_b = sum(totals_a[i] for i in images), sum(totals_b[i] for i in images)
    rate_a, rate_b = sum(hits_a[i] for i in images) / sum_a, sum(hits_b[i] for i in images) / sum_b
    residuals = [
        (hits_b[i] - rate_b * totals_b[i]) / sum_b - (hits_a[i] - rate_a * totals_a[i]) / sum_a for i in images
    ]
    g = len(images)
    se = 100 * math.sqrt(g / (g - 1) * sum(r * r for r in residuals))
    difference = 100 * (rate_b - rate_a)
    return difference, difference + stats.t.ppf(0.975, g - 1) * se


def gate_line(capsys) -> str:
    out = capsys.readouterr().out.strip().splitlines()
    return out[-1]


@pytest.fixture
def planted(built_release, tmp_path) -> tuple[Path, Path]:
    """A (all right) and B (30% of the pairs made wrong): a regression of about 30 points."""
    a, b = tmp_path / "a", tmp_path / "b"
    score_codis(built_release, codis_example(), a)
    score_codis(built_release, swap_pairs(codis_example(), 0.3, 1, tmp_path / "p.json"), b)
    return a, b


def gate(a: Path, b: Path, max_drop: str, *more: str) -> int:
    return main(["compare", str(a), str(b), "--permutations", "200", "--gate", "--max-drop", max_drop, *more])


@needs_real_data
def test_gate_fails_a_planted_regression_and_passes_the_reverse(planted, capsys, tmp_path):
    a, b = planted
    assert gate(a, b, "5", "--json", str(tmp_path / "g.json")) == EXIT_GATE_FAILED != 0
    line = gate_line(capsys)
    assert line.startswith("gate FAIL: acc_p overall B - A = -30.03 points, 95% CI [")
    assert line.endswith("lies below -5.00 (--max-drop 5)")
    recorded = json.loads((tmp_path / "g.json").read_text())["gate"]
    assert recorded["passed"] is False and recorded["max_drop"] == 5 and recorded["metric"] == "acc_p"
    # B better than A: the same pair the other way round passes any bar.
    assert gate(b, a, "0") == 0
    assert gate_line(capsys).startswith("gate PASS: acc_p overall B - A = +30.03 points")
    # Another metric by name: context_awareness does not move when both outputs are swapped.
    assert gate(a, b, "0", "--gate-metric", "context_awareness") == 0
    assert gate_line(capsys).startswith("gate PASS: context_awareness overall B - A = +0.00 points")


@needs_real_data
def test_gate_passes_noise_within_the_interval(built_release, tmp_path, capsys):
    """Two runs each 10% wrong on different pairs: their difference is noise, inside the interval."""
    a, b = tmp_path / "a", tmp_path / "b"
    score_codis(built_release, swap_pairs(codis_example(), 0.1, 1, tmp_path / "p1.json"), a)
    score_codis(built_release, swap_pairs(codis_example(), 0.1, 2, tmp_path / "p2.json"), b)
    difference, upper = upper_end_of_b_minus_a(a, b)
    assert abs(difference) < 3 and upper > 0  # noise: the interval holds 0
    assert gate(a, b, "0") == 0
    assert gate_line(capsys).startswith("gate PASS")


@needs_real_data
def test_gate_bar_at_its_boundary(planted, capsys):
    """The gate flips where -X crosses the upper end of the interval of B - A, derived from the details."""
    a, b = planted
    difference, upper = upper_end_of_b_minus_a(a, b)
    assert difference == pytest.approx(-100 * 106 / 353, abs=0.01)  # as tests/test_intervals.py pins it
    boundary = -upper  # the largest drop shown with 95% confidence
    assert 0 < boundary < -difference
    assert gate(a, b, f"{boundary - 0.01:.4f}") == EXIT_GATE_FAILED
    assert gate_line(capsys).startswith("gate FAIL")
    assert gate(a, b, f"{boundary + 0.01:.4f}") == 0
    line = gate_line(capsys)
    assert line.startswith("gate PASS") and f"{upper:+.2f}]" in line


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--gate", "--max-drop", "-1"], "argument --max-drop: -1 is not a number of points from 0 to 100"),
        (["--gate", "--max-drop", "x"], "argument --max-drop: invalid metric_points value: 'x'"),
        (["--gate", "--max-drop", "nan"], "argument --max-drop: nan is not a finite number"),
        (["--gate", "--max-drop", "101"], "argument --max-drop: 101 is not a number of points from 0 to 100"),
        (["--gate"], "error: compare --gate: give --max-drop X"),
        (["--max-drop", "3"], "error: --max-drop applies to compare --gate"),
        (["--gate-metric", "acc_q"], "error: --gate-metric applies to compare --gate"),
        (["--gate", "--max-drop", "3", "--judges"], "error: --gate does not apply to --judges"),
    ],
)
def test_bad_gate_options_are_one_error_line(arguments, message, tmp_path, capsys):
    try:
        code = main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), *arguments])
    except SystemExit as done:  # argparse's own usage error
        code = done.code
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and err.count("error:") == 1 and "Traceback" not in err


def test_gate_failed_is_a_documented_exit_code():
    assert EXIT_CODES[EXIT_GATE_FAILED].startswith("compare --gate failed")
    table = (Path(__file__).parents[1] / "docs" / "conventions.md").read_text()
    assert f"| {EXIT_GATE_FAILED} | `compare --gate` failed" in table
