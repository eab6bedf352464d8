"""``cogbench compare A B --gate --max-drop X`` (issue 50, item 6) on real scored CODIS runs, and
``cogbench.compare(a, b, gate=True, max_drop=X)``, the function the command calls: the same decision, the same
refusals in the same words.

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

import cogbench
from cogbench.cli import main
from cogbench.errors import EXIT_CODES, EXIT_GATE_FAILED, EXIT_USAGE, UsageError
from cogbench.reference_eval.reports.gate import Gate


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


def passed(a: Path, b: Path, max_drop: float, **more) -> bool:
    """``cogbench.compare``'s gate decision."""
    return cogbench.compare(a, b, permutations=200, gate=True, max_drop=max_drop, **more)["gate"]["passed"]


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
def test_the_gate_in_python_is_the_commands(planted, capsys, tmp_path):
    """``cogbench.compare(gate=True)`` returns what ``compare --gate --json`` writes, and the command's line."""
    a, b = planted
    result = cogbench.compare(a, b, permutations=200, gate=True, max_drop=5)
    assert gate(a, b, "5", "--json", str(tmp_path / "g.json")) == EXIT_GATE_FAILED
    assert json.loads((tmp_path / "g.json").read_text()) == json.loads(json.dumps(result))
    decision = result["gate"]
    assert decision["passed"] is False and decision["metric"] == "acc_p" and decision["max_drop"] == 5
    assert decision["difference"] == pytest.approx(-100 * 106 / 353) and decision["interval"][1] < -5
    assert Gate(**decision).line() == gate_line(capsys)
    assert passed(b, a, 0) is True  # the reverse passes any bar
    assert passed(a, b, "0", gate_metric="context_awareness") is True  # "0": taken as --max-drop takes it
    assert "gate" not in cogbench.compare(a, b, permutations=200)  # no gate asked, none decided
    with pytest.raises(UsageError) as lacking:
        cogbench.compare(a, b, permutations=200, gate=True, max_drop=1, gate_metric="acc_x")
    assert gate(a, b, "1", "--gate-metric", "acc_x") == EXIT_USAGE
    assert capsys.readouterr().err == f"error: {lacking.value}\n"
    assert (
        str(lacking.value)
        == "compare --gate-metric acc_x: not a metric of these codis runs (acc_p, acc_q, context_awareness)"
    )


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
    assert passed(a, b, 0) is True


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
    assert passed(a, b, boundary - 0.01) is False and passed(a, b, boundary + 0.01) is True
    interval = cogbench.compare(a, b, permutations=200, gate=True, max_drop=boundary)["gate"]["interval"]
    assert interval[1] == pytest.approx(upper, abs=5e-5)  # compare's interval: 4 decimals


# Each refusal as the command's options and as cogbench.compare's arguments, and the message both give.
REFUSALS = [
    (
        ["--gate", "--max-drop", "-1"],
        {"gate": True, "max_drop": -1},
        "argument --max-drop: -1 is not a number of points from 0 to 100",
    ),
    (
        ["--gate", "--max-drop", "x"],
        {"gate": True, "max_drop": "x"},
        "argument --max-drop: invalid metric_points value: 'x'",
    ),
    (
        ["--gate", "--max-drop", "nan"],
        {"gate": True, "max_drop": float("nan")},
        "argument --max-drop: nan is not a finite number",
    ),
    (
        ["--gate", "--max-drop", "101"],
        {"gate": True, "max_drop": 101},
        "argument --max-drop: 101 is not a number of points from 0 to 100",
    ),
    (["--gate"], {"gate": True}, "compare --gate: give --max-drop X"),
    (["--max-drop", "3"], {"max_drop": 3}, "--max-drop applies to compare --gate"),
    (["--gate-metric", "acc_q"], {"gate_metric": "acc_q"}, "--gate-metric applies to compare --gate"),
    (
        ["--gate", "--max-drop", "3", "--judges"],
        {"gate": True, "max_drop": 3, "judges": True},
        "--gate does not apply to --judges",
    ),
]


@pytest.mark.parametrize("arguments, _, message", REFUSALS)
def test_bad_gate_options_are_one_error_line(arguments, _, message, tmp_path, capsys):
    try:
        code = main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), *arguments])
    except SystemExit as done:  # argparse's own usage error
        code = done.code
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"error: {message}\n" in err and err.count("error:") == 1 and "Traceback" not in err


@pytest.mark.parametrize("_, arguments, message", REFUSALS)
def test_cogbench_compare_refuses_them_in_the_same_words(_, arguments, message, tmp_path):
    with pytest.raises(UsageError) as refused:
        cogbench.compare(tmp_path / "a", tmp_path / "b", **arguments)  # refused before the runs are read
    assert str(refused.value) == message


def test_cogbench_compare_refuses_gate_arguments_no_command_line_could_carry(tmp_path):
    for arguments, message in (
        ({"gate": "yes", "max_drop": 3}, "argument --gate: 'yes' is not True or False"),
        ({"gate": True, "max_drop": 3, "gate_metric": 3}, "argument --gate-metric: expected text, not int 3"),
    ):
        with pytest.raises(UsageError) as refused:
            cogbench.compare(tmp_path / "a", tmp_path / "b", **arguments)
        assert str(refused.value) == message


def test_gate_failed_is_a_documented_exit_code():
    assert EXIT_CODES[EXIT_GATE_FAILED].startswith("compare --gate failed")
    table = (Path(__file__).parents[1] / "docs" / "conventions.md").read_text()
    assert f"| {EXIT_GATE_FAILED} | `compare --gate` failed" in table
