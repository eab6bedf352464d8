"""Korn-Graubard intervals, paired t intervals and minimum detectable differences pinned on small cases.

Every expected value is worked out here from the published formulas, not from the code path:
Cochran's ratio variance ``v(R) = G/(G-1) * sum (y - R m)^2 / (sum m)^2`` by hand on two to five
images (the arithmetic is in the comments), then Korn and Graubard's (1998) effective sample size
``n_eff = R(1-R)/v`` shrunk by ``(t_{n-1}/t_{G-1})^2`` and the Clopper-Pearson limits as beta quantiles
(``scipy.stats.beta``), and the paired t interval and the minimum detectable difference from
``scipy.stats.t``. Light at import (numpy, scipy.stats, the module under test) for mutation testing.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from cogbench.reference_eval.metrics import small_sample

T975 = {df: stats.t.ppf(0.975, df) for df in (1, 2, 3, 4, 5, 8, 11, 19, 24)}


def clopper_pearson_percent(successes: float, n: float) -> list[float]:
    """The 95% Clopper-Pearson limits at (possibly fractional) ``successes`` of ``n``, rounded as reported."""
    low = 0.0 if successes == 0 else stats.beta.ppf(0.025, successes, n - successes + 1)
    high = 1.0 if successes == n else stats.beta.ppf(0.975, successes + 1, n - successes)
    return [round(100 * low, 4), round(100 * high, 4)]


def shrunk(n_eff: float, units: float, images: int) -> float:
    """Korn-Graubard's degrees-of-freedom correction: n_eff * (t_{units-1} / t_{G-1})^2 (two-sided 95%)."""
    return n_eff * (stats.t.ppf(0.975, units - 1) / stats.t.ppf(0.975, images - 1)) ** 2


def assert_interval(result, expected):
    assert result == pytest.approx(expected, abs=1e-9)
    assert all(round(x, 4) == x for x in result)  # reported to 4 decimals


# --- korn_graubard -------------------------------------------------------------------------------


def test_two_images_and_an_image_without_units():
    """Images of 10, 10 and 0 units with 5, 4, 0 hits: the empty image does not count (G = 2).

    R = 9/20 = 0.45; residuals 5 - 4.5 = 0.5 and 4 - 4.5 = -0.5; v = 2/1 * 0.5 / 20^2 = 0.0025;
    n_eff = 0.45 * 0.55 / 0.0025 = 99, shrunk by (t_19 / t_1)^2.
    """
    n = shrunk(99.0, 20, 2)
    expected = clopper_pearson_percent(0.45 * n, n)
    assert_interval(small_sample.korn_graubard(np.array([5.0, 4, 0]), np.array([10.0, 10, 0])), expected)


def test_one_unit_per_image_has_the_binomial_variance_on_n_minus_1():
    """Five images of one unit, one hit: R = 0.2; residuals 0.8 and four -0.2, sum of squares 0.8;
    v = 5/4 * 0.8 / 25 = 0.04 = R(1-R)/(n-1), so n_eff = 4 and the shrink (t_4 / t_4)^2 is 1."""
    expected = clopper_pearson_percent(0.8, 4.0)
    assert_interval(small_sample.korn_graubard([1, 0, 0, 0, 0], [1, 1, 1, 1, 1]), expected)


def test_one_hit_in_25_has_a_positive_lower_bound():
    """Five images of 5 units, one hit: R = 0.04; residuals 0.8 and four -0.2, sum 0.8;
    v = 5/4 * 0.8 / 625 = 0.0016; n_eff = 0.04 * 0.96 / 0.0016 = 24, shrunk by (t_24 / t_4)^2,
    which leaves about 0.53 successes: the lower bound is small but not 0."""
    n = shrunk(24.0, 25, 5)
    expected = clopper_pearson_percent(0.04 * n, n)
    assert 0 < 0.04 * n < 1 and expected[0] > 0
    assert_interval(small_sample.korn_graubard([1, 0, 0, 0, 0], [5, 5, 5, 5, 5]), expected)


def test_three_images_of_different_sizes():
    """Images of 4, 4, 1 units with 3, 1, 1 hits: R = 5/9.

    Residuals 3 - 20/9 = 7/9, 1 - 20/9 = -11/9, 1 - 5/9 = 4/9; squares 49/81 + 121/81 + 16/81 = 186/81;
    v = 3/2 * 186/81 / 81 = 279/6561; n_eff = (20/81) / v = 1620/279, shrunk by (t_8 / t_2)^2.
    """
    n = shrunk(1620 / 279, 9, 3)
    expected = clopper_pearson_percent(5 / 9 * n, n)
    assert_interval(small_sample.korn_graubard([3, 1, 1], [4, 4, 1]), expected)


def test_images_with_the_same_rate_use_the_unit_count():
    """Images of 2, 4, 6 units all at 50%: every residual is 0, v = 0, so n_eff = 12 units, shrunk by (t_11 / t_2)^2."""
    n = shrunk(12.0, 12, 3)
    expected = clopper_pearson_percent(0.5 * n, n)
    assert_interval(small_sample.korn_graubard([1, 2, 3], [2, 4, 6]), expected)


def test_none_right_and_all_right_on_five_images():
    """64 questions (13, 13, 13, 13, 12), none right: v = 0, n_eff = 64 shrunk by (t_63 / t_4)^2; the upper
    bound is the Clopper-Pearson bound at 0 successes, 1 - 0.025^(1/n) in closed form; all right mirrors it."""
    totals = [13, 13, 13, 13, 12]
    n = shrunk(64.0, 64, 5)
    high = round(100 * (1 - 0.025 ** (1 / n)), 4)
    none_right = small_sample.korn_graubard([0] * 5, totals)
    assert none_right[0] == 0.0 and none_right[1] == pytest.approx(high, abs=2e-4)
    all_right = small_sample.korn_graubard(totals, totals)
    assert all_right[1] == 100.0 and all_right[0] == pytest.approx(100 - high, abs=2e-4)


def test_fractional_units_below_two_in_all_still_get_an_interval():
    """Two images of half a unit, one with half a hit: R = 0.5; residuals 0.25 and -0.25, sum 0.125;
    v = 2 * 0.125 / 1 = 0.25; n_eff = 1; the unit count's degrees of freedom stay at least 1, so the
    shrink is (t_1 / t_1)^2 = 1: the Clopper-Pearson interval at 0.5 successes of 1."""
    assert_interval(small_sample.korn_graubard([0.5, 0.0], [0.5, 0.5]), clopper_pearson_percent(0.5, 1.0))


# --- hits above units: Cognition verdicts of 2 (official parsing, as cognition_score.py sums them) --------


def test_a_rate_of_one_with_spread_is_not_zero_variance():
    """Two images of one CoR, verdicts 2 and 0: R = 2/2 = 1, yet the residuals are 1 and -1, so
    v = 2/1 * (1 + 1) / 2^2 = 1, not 0. The t interval on 1 degree of freedom: 1 +- t_1 * 1 = 1 +- 12.7062,
    floored at 0. (Reading R = 1 as "every image all right" gave [x, 100], as if there were no spread.)"""
    expected = [0.0, round(100 * (1 + T975[1]), 4)]
    assert_interval(small_sample.korn_graubard([2, 0], [1, 1]), expected)


def test_a_rate_above_one_gets_the_t_interval_of_the_ratio():
    """Hits 2, 1, 3 of units 1, 1, 2: R = 6/4 = 1.5; residuals 0.5, -0.5, 0, sum of squares 0.5;
    v = 3/2 * 0.5 / 4^2 = 0.046875, sqrt 0.2165064; half-width t_2 * 0.2165064 = 4.3026527 * 0.2165064 = 0.9315520."""
    half = T975[2] * math.sqrt(0.046875)
    expected = [round(100 * (1.5 - half), 4), round(100 * (1.5 + half), 4)]
    assert expected == pytest.approx([56.8448, 243.1552], abs=1e-4)
    assert_interval(small_sample.korn_graubard([2, 1, 3], [1, 1, 2]), expected)


def test_a_rate_below_one_with_an_image_above_its_units_is_not_binomial():
    """Hits 2, 0, 0 of units 1, 1, 1 (one verdict of 2): R = 2/3 < 1, but R(1-R) is not a unit's variance;
    residuals 4/3, -2/3, -2/3, sum of squares 16/9 + 4/9 + 4/9 = 8/3; v = 3/2 * (8/3) / 9 = 4/9, sqrt 2/3."""
    half = T975[2] * 2 / 3
    expected = [0.0, round(100 * (2 / 3 + half), 4)]
    assert_interval(small_sample.korn_graubard([2, 0, 0], [1, 1, 1]), expected)


def test_no_units_or_one_image_give_no_interval_and_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert small_sample.korn_graubard([0, 0, 0], [0, 0, 0]) is None
        assert small_sample.korn_graubard([], []) is None
        assert small_sample.korn_graubard([3, 0], [5, 0]) is None  # one image with units
        assert small_sample.korn_graubard([1], [1]) is None


# --- column_intervals ----------------------------------------------------------------------------


def test_each_column_has_its_interval_and_its_image_count():
    """Columns a, b, overall over three images; a lives on images 0 and 1, b on 1 and 2."""
    hits = np.array([[1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 2.0, 2.0]])
    totals = np.array([[2.0, 0.0, 2.0], [1.0, 1.0, 2.0], [0.0, 3.0, 3.0]])
    result = small_sample.column_intervals(hits, totals, ["a", "b", "overall"])
    # a: hits 1, 1 of 2, 1: R = 2/3, residuals -1/3, 1/3, v = 2 * 2/9 / 9 = 4/81, n_eff = (2/9) / (4/81) = 4.5
    n_a = shrunk(4.5, 3, 2)
    # b: hits 0, 2 of 1, 3: R = 1/2, residuals -1/2, 1/2, v = 2 * 1/2 / 16 = 1/16, n_eff = 4
    n_b = shrunk(4.0, 4, 2)
    # overall: hits 1, 1, 2 of 2, 2, 3: R = 4/7; residuals 1 - 8/7 = -1/7 (twice), 2 - 12/7 = 2/7;
    # squares 6/49, v = 3/2 * 6/49 / 49 = 9/2401, n_eff = (12/49) / (9/2401) = 196/3
    n_o = shrunk(196 / 3, 7, 3)
    assert result["per_category"]["a"] == pytest.approx(clopper_pearson_percent(2 / 3 * n_a, n_a), abs=1e-9)
    assert result["per_category"]["b"] == pytest.approx(clopper_pearson_percent(0.5 * n_b, n_b), abs=1e-9)
    assert result["overall"] == pytest.approx(clopper_pearson_percent(4 / 7 * n_o, n_o), abs=1e-9)
    assert list(result["per_category"]) == ["a", "b"]
    assert result["clusters"] == {"overall": 3, "per_category": {"a": 2, "b": 2}}


def test_an_image_count_counts_images_with_units_only():
    hits = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    totals = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 1.0]])
    result = small_sample.column_intervals(hits, totals, ["a", "overall"])
    assert result["clusters"] == {"overall": 3, "per_category": {"a": 1}}
    assert result["per_category"] == {"a": None}


# --- paired_difference_t -------------------------------------------------------------------------


def paired_case():
    """Five images: (A hits/units, B hits/units) = (2/2, 1/1), (1/2, 0/2), (1/1, 1/2), (1/2, -), (-, 1/1)."""
    hits_a, totals_a = [2, 1, 1, 1, 0], [2, 2, 1, 2, 0]
    hits_b, totals_b = [1, 0, 1, 0, 1], [1, 2, 2, 0, 1]
    return hits_a, totals_a, hits_b, totals_b


def test_paired_difference_uses_the_images_both_runs_count():
    """Images 3 and 4 lack units in one run each: G = 3. R_A = 4/5, R_B = 2/5, D = 40 points.

    Linearised residuals (y - R m) / sum m: A: (2 - 8/5)/5 = 0.08, (1 - 8/5)/5 = -0.12, (1 - 4/5)/5 = 0.04;
    B: (1 - 2/5)/5 = 0.12, (0 - 4/5)/5 = -0.16, (1 - 4/5)/5 = 0.04; A - B: -0.04, 0.04, 0.
    SE = 100 * sqrt(3/2 * 0.0032) = 100 * sqrt(0.0048); half-width t_2 * SE.
    """
    result = small_sample.paired_difference_t(*paired_case())
    se = 100 * math.sqrt(0.0048)
    half = T975[2] * se
    assert result["difference"] == pytest.approx(40.0, abs=1e-9)
    assert result["se"] == pytest.approx(round(se, 4), abs=1e-9)
    assert result["interval"] == pytest.approx([round(40 - half, 4), round(40 + half, 4)], abs=1e-9)
    assert result["clusters"] == 3


def test_paired_difference_on_two_images_has_an_interval():
    """Images (2/3, 1/3) and (1/3, 1/3): R_A = 1/2, R_B = 1/3, D = 50/3 points.

    Residuals: A: (2 - 3/2)/6 = 1/12, (1 - 3/2)/6 = -1/12; B: 0, 0; SE = 100 * sqrt(2 * 2/144) = 100/6.
    """
    result = small_sample.paired_difference_t([2, 1], [3, 3], [1, 1], [3, 3])
    se = 100 / 6
    half = T975[1] * se
    difference = 100 * (1 / 2 - 1 / 3)
    assert result == {
        "difference": round(difference, 4),
        "se": pytest.approx(round(se, 4), abs=1e-9),
        "interval": pytest.approx([round(difference - half, 4), round(difference + half, 4)], abs=1e-9),
        "clusters": 2,
    }


def test_paired_difference_on_one_image_or_none():
    one = small_sample.paired_difference_t([2, 1], [3, 0], [1, 1], [3, 3])  # image 2 has no A units
    assert one == {"difference": round(100 / 3, 4), "interval": None, "se": None, "clusters": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        none = small_sample.paired_difference_t([1, 0], [1, 0], [0, 1], [0, 1])
    assert none == {"difference": None, "interval": None, "se": None, "clusters": 0}


# --- min_detectable_difference -------------------------------------------------------------------


def test_minimum_detectable_difference_from_the_standard_error():
    """(t_{0.975} + t_{0.8}) * SE on G - 1 degrees of freedom, in points to one decimal."""
    for se, groups in [(10.0, 4), (7.5, 2), (3.0, 25)]:
        expected = (stats.t.ppf(0.975, groups - 1) + stats.t.ppf(0.8, groups - 1)) * se
        assert small_sample.min_detectable_difference(se, 8.0, (0.5, 0.4), groups) == round(expected, 1)
    # any positive number of units will do when the SE is known
    assert small_sample.min_detectable_difference(10.0, 1.0, (0.5, 0.4), 4) == round(
        (T975[3] + stats.t.ppf(0.8, 3)) * 10.0, 1
    )


def test_runs_that_agree_everywhere_fall_back_to_the_binomial_standard_error():
    """SE 0 on 5 images of 20 units: the SE of two independent rates, each kept within [0.5/20, 1 - 0.5/20]."""
    factor = T975[4] + stats.t.ppf(0.8, 4)
    # rates 0.3 and 0.5: sqrt((0.21 + 0.25) / 20)
    assert small_sample.min_detectable_difference(0.0, 20.0, (0.3, 0.5), 5) == round(
        factor * 100 * math.sqrt(0.46 / 20), 1
    )
    # all wrong (or all right) in both runs: the rates are held at 0.025 (0.975): sqrt(2 * 0.025 * 0.975 / 20)
    edge = round(factor * 100 * math.sqrt(2 * 0.025 * 0.975 / 20), 1)
    assert small_sample.min_detectable_difference(0.0, 20.0, (0.0, 0.0), 5) == edge
    assert small_sample.min_detectable_difference(0.0, 20.0, (1.0, 1.0), 5) == edge
    assert small_sample.min_detectable_difference(None, 20.0, (1.0, 1.0), 5) == edge


def test_no_minimum_detectable_difference_without_two_images_or_units():
    assert small_sample.min_detectable_difference(10.0, 8.0, (0.5, 0.4), 1) is None
    assert small_sample.min_detectable_difference(10.0, 0.0, (0.5, 0.4), 4) is None
    assert small_sample.min_detectable_difference(0.0, 0.0, (0.5, 0.4), 4) is None


def test_a_50_percent_level_uses_the_quartiles():
    """Level 0.5: tails of 0.25 in the t quantiles and the beta quantiles (the 5-image case above, n_eff = 24)."""
    n = 24.0 * (stats.t.ppf(0.25, 24) / stats.t.ppf(0.25, 4)) ** 2
    x = 0.04 * n
    expected = [round(100 * stats.beta.ppf(0.25, x, n - x + 1), 4), round(100 * stats.beta.ppf(0.75, x + 1, n - x), 4)]
    assert_interval(small_sample.korn_graubard([1, 0, 0, 0, 0], [5, 5, 5, 5, 5], level=0.5), expected)
    paired = small_sample.paired_difference_t(*paired_case(), level=0.5)
    half = stats.t.ppf(0.75, 2) * 100 * math.sqrt(0.0048)
    assert paired["interval"] == pytest.approx([round(40 - half, 4), round(40 + half, 4)], abs=1e-9)
    mdd = small_sample.min_detectable_difference(10.0, 8.0, (0.5, 0.4), 4, level=0.5)
    assert mdd == round((stats.t.ppf(0.75, 3) + stats.t.ppf(0.8, 3)) * 10.0, 1)
