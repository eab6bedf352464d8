"""Intervals at the edges (issue 22, item 3): few images, 0% and 100%, one image, identical runs.

Expected values are derived here by hand from the published formulas (Korn and Graubard 1998; the
Clopper-Pearson bound for 0 successes is 1 - (alpha/2)^(1/n) in closed form), not from the code path.
The coverage over sizes is measured by tests/benchmarks/interval_coverage.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cogbench.reference_eval.metrics import intervals, small_sample
from cogbench.reference_eval.metrics.intervals import Unit
from cogbench.reference_eval.recording.run_files import interval_text
from cogbench.reference_eval.reports.compare import _metric_rows


def test_zero_of_64_on_5_images_has_a_positive_upper_bound():
    """All 64 questions wrong: no variance between images, so n_eff = 64 shrunk by (t_63 / t_4)^2."""
    totals = np.array([13, 13, 13, 13, 12])
    n_star = 64 * (stats.t.ppf(0.975, 63) / stats.t.ppf(0.975, 4)) ** 2
    expected_high = 100 * (1 - 0.025 ** (1 / n_star))  # Clopper-Pearson upper bound at 0 successes, closed form
    low, high = small_sample.korn_graubard(np.zeros(5), totals)
    assert low == 0.0 and high == pytest.approx(expected_high, abs=1e-3)
    assert 10.0 < high < 11.5  # wider than the exact binomial bound of 64 independent questions (5.6%)
    low, high = small_sample.korn_graubard(totals.astype(float), totals)  # all right
    assert high == 100.0 and low == pytest.approx(100 - expected_high, abs=1e-3)


def test_design_effect_by_hand():
    """Three images with 4, 4, 2 units and 3, 1, 2 hits: R = 0.6; v(R) = 3/2 * sum (y - R m)^2 / 10^2."""
    hits, totals = np.array([3.0, 1.0, 2.0]), np.array([4.0, 4.0, 2.0])
    variance = 1.5 * ((3 - 2.4) ** 2 + (1 - 2.4) ** 2 + (2 - 1.2) ** 2) / 100  # = 0.0408
    n_eff = 0.6 * 0.4 / variance * (stats.t.ppf(0.025, 9) / stats.t.ppf(0.025, 2)) ** 2
    x = 0.6 * n_eff
    expected = [100 * stats.beta.ppf(0.025, x, n_eff - x + 1), 100 * stats.beta.ppf(0.975, x + 1, n_eff - x)]
    assert small_sample.korn_graubard(hits, totals) == pytest.approx(expected, abs=1e-3)


def test_one_image_has_no_interval_and_says_so():
    table = intervals.cluster_table(
        [Unit("img1", "x", 1.0), Unit("img1", "x", 0.0), Unit("img2", "y", 1.0), Unit("img3", "y", 0.0)], ["x", "y"]
    )
    result = small_sample.column_intervals(table.hits, table.totals, table.columns)
    assert result["per_category"]["x"] is None and result["clusters"]["per_category"]["x"] == 1
    assert result["per_category"]["y"] is not None and result["clusters"]["overall"] == 3
    assert interval_text(50.0, None, 1) == "50.0 [n/a (1 image)]"


def test_paired_difference_by_hand_and_minimum_detectable_difference():
    """Per image (A hits, B hits) of 2 units: (2,1), (1,1), (2,0), (1,1): D = 3/8 = 37.5 points."""
    ta = tb = np.full(4, 2.0)
    ha, hb = np.array([2.0, 1, 2, 1]), np.array([1.0, 1, 0, 1])
    result = small_sample.paired_difference_t(ha, ta, hb, tb)
    ra, rb = 6 / 8, 3 / 8
    residual = (ha - ra * ta) / 8 - (hb - rb * tb) / 8
    se = 100 * math.sqrt(4 / 3 * (residual**2).sum())
    half = stats.t.ppf(0.975, 3) * se
    assert result["difference"] == pytest.approx(37.5)
    assert result["interval"] == pytest.approx([37.5 - half, 37.5 + half], abs=1e-3)
    mdd = small_sample.min_detectable_difference(result["se"], 8, (ra, rb), 4)
    assert mdd == pytest.approx((stats.t.ppf(0.975, 3) + stats.t.ppf(0.8, 3)) * se, abs=0.06)
    one = small_sample.paired_difference_t(ha[:1], ta[:1], hb[:1], tb[:1])
    assert one["interval"] is None and one["clusters"] == 1


def test_identical_runs_still_have_a_minimum_detectable_difference():
    mdd = small_sample.min_detectable_difference(0.0, 64, (0.5, 0.5), 5)
    expected = (stats.t.ppf(0.975, 4) + stats.t.ppf(0.8, 4)) * 100 * math.sqrt(2 * 0.25 / 64)
    assert mdd == pytest.approx(expected, abs=0.06)


def test_coverage_on_five_images_through_the_scoring_entry_point():
    """The public samples' shape (64 questions on 5 images), ICC 0.2, truth 60%: the percentile bootstrap
    covered about 84%; this method must hold at least 92% (the benchmark measures 1000 runs per cell)."""
    rng = np.random.default_rng(11)
    held, runs = 0, 300
    for _ in range(runs):
        probabilities = rng.beta(0.6 * 4, 0.4 * 4, 5)  # ICC = 1 / (4 + 1) = 0.2
        details = [
            {
                "item_id": f"{g}-{q}",
                "image_id": f"img{g}",
                "category": "event",
                "correct": bool(rng.random() < probabilities[g]),
                "correct_official": False,
            }
            for g in range(5)
            for q in range(13)
        ]
        result, _ = intervals.score_intervals("vqa", details, ["event"], resamples=500)
        low, high = result["accuracy"]["overall"]
        held += low <= 60.0 <= high
    assert held / runs >= 0.92


def test_all_wrong_and_one_image_categories_through_the_scoring_entry_point():
    """64 questions on 5 images, all wrong: not "0.0 [0.0, 0.0]" but an upper bound above the exact binomial
    bound of 64 independent questions (1 - 0.025^(1/64) = 5.6%); a category on one image: no interval."""
    details = [
        {
            "item_id": f"{g}-{q}",
            "image_id": f"img{g}",
            "category": "event" if g else "time",
            "correct": False,
            "correct_official": False,
        }
        for g in range(5)
        for q in range(13 if g < 4 else 12)
    ]
    result, _ = intervals.score_intervals("vqa", details, ["time", "event"])
    low, high = result["accuracy"]["overall"]
    assert low == 0.0 and high > 100 * (1 - 0.025 ** (1 / 64)) > 5.6
    assert result["accuracy"]["per_category"]["time"] is None
    assert result["accuracy"]["clusters"]["per_category"]["time"] == 1


def test_the_minimum_detectable_difference_of_two_runs_uses_the_smaller_runs_units():
    """5 images; run A counts 4 units on each (20 in all), run B 8 (40), both right on half of every image:
    the paired SE is 0, so the binomial SE stands in, on the smaller run's 20 units (the one whose noise
    limits what can be told apart): sqrt(2 * 0.25 / 20) = 15.81 points, times t_.975 + t_.8 on 4 df.
    On B's 40 units it would be 11.18 points."""
    images = [f"img{g}" for g in range(5)]
    table_a = intervals.cluster_table([Unit(g, "x", 2.0, 4.0) for g in images], ["x"], images)
    table_b = intervals.cluster_table([Unit(g, "x", 4.0, 8.0) for g in images], ["x"], images)
    for a, b in ((table_a, table_b), (table_b, table_a)):
        (_, overall) = _metric_rows(a, b, seed=0, permutations=99)
        assert overall["se"] == 0.0 and overall["clusters"] == 5
        factor = stats.t.ppf(0.975, 4) + stats.t.ppf(0.8, 4)
        assert overall["min_detectable"] == round(factor * 100 * math.sqrt(2 * 0.25 / 20), 1)
