"""The clustered bootstrap and the paired permutation test of metrics/intervals.py on tiny tables.

Expected values are worked out here independently of the code path: per-image sums by hand, the
resamples by drawing indices one resample at a time (the generator call the docstring promises) and
pooling each draw directly, percentiles of 0..100 by hand, and the permutation p-value by enumerating
every one of the 2^G swaps of the images' A and B results. The units come from hand-written
details.jsonl lines. Light at import (numpy, the module under test) for mutation testing.
"""

from __future__ import annotations

import dataclasses
import itertools
import warnings

import numpy as np
import pytest

from cogbench.reference_eval.metrics import intervals
from cogbench.reference_eval.metrics.intervals import Unit

UNITS = [  # three images; "c" has units in both categories; a unit of unknown category counts in overall only
    Unit("b", "x", 1.0, 2.0),
    Unit("a", "x", 1.0),
    Unit("c", "y", 0.0),
    Unit("c", "x", 1.0),
    Unit("a", "y", 2.0, 3.0),
    Unit("b", None, 1.0),
]


def test_units_are_summed_per_image_and_column():
    table = intervals.cluster_table(UNITS, ["x", "y"])
    assert table.clusters == ["a", "b", "c"] and table.columns == ["x", "y", "overall"]
    # rows a, b, c; columns x, y, overall
    assert table.hits.tolist() == [[1, 2, 3], [1, 0, 2], [1, 0, 1]]
    assert table.totals.tolist() == [[1, 3, 4], [2, 0, 3], [1, 1, 2]]
    # pooled: x 3/4, y 2/4, overall 6/9
    assert table.pooled() == pytest.approx([75.0, 50.0, 600 / 9])


def test_given_images_fix_the_rows_and_may_add_empty_ones():
    table = intervals.cluster_table(UNITS, ["y"], clusters=["c", "z", "a", "b"])
    assert table.clusters == ["c", "z", "a", "b"]
    assert table.hits.tolist() == [[0, 1], [0, 0], [2, 3], [0, 2]]
    assert table.totals.tolist() == [[1, 2], [0, 0], [3, 4], [0, 3]]


def test_pooled_is_nan_where_nothing_counts_and_takes_resample_weights():
    table = intervals.cluster_table(
        [Unit("a", "x", 1.0, 0.5), Unit("b", "x", 0.0, 0.5), Unit("b", None, 1.0)], ["x", "y"]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pooled = table.pooled()
        weighted = table.pooled(np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0], [1.0, 0.0]]))
    # x: 1 of 1 (two half units); y: nothing; overall: 2 of 2
    assert pooled[0] == 100.0 and np.isnan(pooled[1]) and pooled[2] == 100.0
    # rows: image a twice (x: 2 of 1), image b twice (x: 0 of 1, overall 2 of 3), each once, a alone (1 of 0.5)
    assert weighted[:, 0].tolist() == [200.0, 0.0, 100.0, 200.0]
    assert np.isnan(weighted[:, 1]).all()
    assert weighted[:, 2] == pytest.approx([200.0, 200 / 3, 100.0, 200.0])


def test_resample_weights_count_the_draws_of_each_resample():
    draws = np.random.default_rng(1).integers(0, 3, (6, 3))
    expected = [[list(row).count(i) for i in range(3)] for row in draws]
    weights = intervals.resample_weights(3, 6, seed=1)
    assert weights.tolist() == expected
    assert expected[-1][-1] == 0  # the last image is not drawn in the last resample: the table keeps its column


def test_percentile_interval_by_hand():
    """A column of 0, 1/3, ..., 100/3: the 2.5th and 97.5th percentiles are 2.5/3 and 97.5/3 (linear);
    NaN resamples are ignored; a column with one value gives it twice; an empty column gives None."""
    samples = np.full((103, 3), np.nan)
    samples[:101, 0] = np.arange(101) / 3
    samples[5, 1] = 7.0
    assert intervals.percentile_interval(samples) == [[round(2.5 / 3, 4), round(97.5 / 3, 4)], [7.0, 7.0], None]
    assert intervals.percentile_interval(samples[:, :1], level=0.9) == [[round(5 / 3, 4), round(95 / 3, 4)]]
    assert intervals.percentile_interval(samples[:, :1], level=0.5) == [[round(25 / 3, 4), round(75 / 3, 4)]]


def direct_bootstrap(table, resamples: int, seed: int, column: int, other=None):
    """Draw images one resample at a time and pool each draw: [2.5th, 97.5th] percentiles, rounded as reported."""
    values = []
    for draw in np.random.default_rng(seed).integers(0, len(table.clusters), (resamples, len(table.clusters))):
        value = 100 * table.hits[draw, column].sum() / table.totals[draw, column].sum()
        if other is not None:
            value -= 100 * other.hits[draw, column].sum() / other.totals[draw, column].sum()
        values.append(value)
    values = np.array(values)
    values = values[~np.isnan(values)]
    return [round(float(np.percentile(values, q)), 4) for q in (2.5, 97.5)]


def test_bootstrap_intervals_match_drawing_images_one_resample_at_a_time():
    table = intervals.cluster_table(UNITS, ["x", "y", "empty"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # draws without any unit of y pool to NaN (0/0) in the direct loop
        result = intervals.bootstrap_intervals(table, 300, seed=9)
        expected = {name: direct_bootstrap(table, 300, 9, k) for k, name in enumerate(["x", "y"])}
        overall = direct_bootstrap(table, 300, 9, -1)
        defaults = direct_bootstrap(table, 2000, 0, -1)
    assert result == {"overall": overall, "per_category": {**expected, "empty": None}}
    assert intervals.bootstrap_intervals(table)["overall"] == defaults  # 2000 resamples, seed 0


def test_bootstrap_intervals_without_images():
    table = intervals.cluster_table([], ["x", "y"])
    assert intervals.bootstrap_intervals(table, 50) == {"overall": None, "per_category": {"x": None, "y": None}}


# --- the paired comparison ----------------------------------------------------------------------


def exact_permutation_p(a, b) -> float:
    """Two-sided p of pooled(A) - pooled(B) over all 2^G swaps of each image's (hits, units) between A and B."""
    a, b = np.array(a), np.array(b)  # (G, 2): hits, units per image
    swaps = np.array(list(itertools.product([False, True], repeat=len(a))))[:, :, None]  # row 0: no swap
    first, second = np.where(swaps, b, a).sum(axis=1), np.where(swaps, a, b).sum(axis=1)
    null = np.abs(first[:, 0] / first[:, 1] - second[:, 0] / second[:, 1])
    return float(np.mean(null >= null[0] - 1e-12))


def table_of(pairs):
    """A table with one category "x" from (hits, units) per image, images i0, i1, ...; category "y" empty."""
    return intervals.cluster_table([Unit(f"i{i}", "x", h, t) for i, (h, t) in enumerate(pairs)], ["x", "y"])


A = [(2.0, 2.0), (1.0, 3.0), (3.0, 3.0), (0.0, 1.0)]
B = [(1.0, 2.0), (1.0, 3.0), (0.0, 2.0), (1.0, 1.0)]


def test_paired_difference_by_hand_and_by_enumerating_every_swap():
    """A pools 6 of 9, B 3 of 8: A - B = 100 (2/3 - 3/8) = 29.1667 points; p over the 16 swaps of 4 images."""
    table_a, table_b = table_of(A), table_of(B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = intervals.paired_difference(table_a, table_b, 400, seed=2)
        interval = direct_bootstrap(table_a, 400, 2, 0, other=table_b)
        defaults = intervals.paired_difference(table_a, table_b)[0]["interval"]
        default_interval = direct_bootstrap(table_a, 2000, 0, 0, other=table_b)
    x, y, overall = rows
    assert x == {
        "column": "x",
        "a": round(200 / 3, 4),
        "b": 37.5,
        "difference": round(100 * (2 / 3 - 3 / 8), 4),
        "interval": interval,
        "p_value": pytest.approx(exact_permutation_p(A, B), abs=1e-6),
    }
    assert 0.1 < x["p_value"] < 1
    assert y == {"column": "y", "a": None, "b": None, "difference": None, "interval": None, "p_value": None}
    assert overall["difference"] == x["difference"] and overall["p_value"] == x["p_value"]
    assert defaults == default_interval  # 2000 resamples, seed 0


def test_two_images_are_enough_to_permute_one_is_not():
    """A: 2/2, 2/2; B: 0/2, 1/2: A - B = 75 points; swapping one image gives -25 or 25, both -75: p = 2/4."""
    pairs_a, pairs_b = [(2.0, 2.0), (2.0, 2.0)], [(0.0, 2.0), (1.0, 2.0)]
    two = intervals.paired_difference(table_of(pairs_a), table_of(pairs_b), 50)
    assert two[0]["difference"] == 75.0 and two[0]["p_value"] == exact_permutation_p(pairs_a, pairs_b) == 0.5
    one = intervals.paired_difference(table_of(pairs_a[:1]), table_of(pairs_b[:1]), 50)
    assert one[0]["difference"] == 100.0 and one[0]["p_value"] is None


def test_identical_hits_on_different_units_are_not_identical_runs():
    """Same hits, B with twice the units: A - B = 50 points, only the identity and the full swap reach it: p = 2/8."""
    pairs_a, pairs_b = [(1.0, 1.0)] * 3, [(1.0, 2.0)] * 3
    row = intervals.paired_difference(table_of(pairs_a), table_of(pairs_b), 50)[0]
    assert row["difference"] == 50.0 and row["p_value"] == exact_permutation_p(pairs_a, pairs_b) == 0.25
    same = intervals.paired_difference(table_of(pairs_a), table_of(pairs_a), 50)[0]
    assert same["difference"] == 0.0 and same["p_value"] == 1.0 and same["interval"] == [0.0, 0.0]


def test_many_images_get_a_monte_carlo_p_from_9999_swaps():
    """14 images have 16384 swaps, more than the 9999 drawn by default: p = 2 (k + 1) / 10000 for a count k,
    close to the exact p over all swaps."""
    rng = np.random.default_rng(3)
    pairs_a = [(float(h), 3.0) for h in rng.integers(0, 4, 14)]
    pairs_b = [(float(h), 3.0) for h in rng.integers(0, 4, 14)]
    p = intervals.paired_difference(table_of(pairs_a), table_of(pairs_b), 10)[0]["p_value"]
    assert p * 5000 == pytest.approx(round(p * 5000), abs=1e-6)
    assert p == pytest.approx(exact_permutation_p(pairs_a, pairs_b), abs=0.02)
    assert 0.05 < p < 0.95


def test_paired_tables_must_match():
    table = table_of(A)
    other_images = intervals.cluster_table([Unit(f"j{i}", "x", h, t) for i, (h, t) in enumerate(A)], ["x", "y"])
    other_columns = intervals.cluster_table([Unit(f"i{i}", "x", h, t) for i, (h, t) in enumerate(A)], ["x", "z"])
    for first, second in itertools.permutations([table, other_images, other_columns], 2):
        with pytest.raises(ValueError, match="same images and columns"):
            intervals.paired_difference(first, second, 10)


def test_a_p_value_from_the_middle_of_the_swap_distribution():
    """Images of different sizes, A 4 of 10 and B 7 of 12: the observed difference is neither the largest nor
    the smallest over the 32 swaps; the exact two-sided p is 24/32."""
    pairs_a = [(0.0, 4.0), (1.0, 1.0), (2.0, 2.0), (1.0, 1.0), (0.0, 2.0)]
    pairs_b = [(2.0, 4.0), (1.0, 1.0), (1.0, 1.0), (0.0, 2.0), (3.0, 4.0)]
    row = intervals.paired_difference(table_of(pairs_a), table_of(pairs_b), 10)[0]
    assert row["difference"] == round(100 * (4 / 10 - 7 / 12), 4)
    assert row["p_value"] == exact_permutation_p(pairs_a, pairs_b) == 0.75


def test_units_and_tables_cannot_be_changed_after_counting():
    unit = Unit("a", "x", 1.0)
    table = intervals.cluster_table([unit], ["x"])
    for thing, field in ((unit, "hits"), (table, "clusters")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(thing, field, None)
    assert len({unit, Unit("a", "x", 1.0)}) == 1  # hashable, equal by value


def test_p_values_are_reported_to_six_decimals():
    """Eight images: the exact p over the 256 swaps is 27/128 = 0.2109375, reported as 0.210938."""
    pairs_a = [(0.0, 1.0), (1.0, 3.0), (2.0, 2.0), (3.0, 3.0), (1.0, 3.0), (0.0, 1.0), (2.0, 3.0), (0.0, 1.0)]
    pairs_b = [(2.0, 2.0), (1.0, 1.0), (1.0, 1.0), (2.0, 3.0), (1.0, 2.0), (2.0, 2.0), (3.0, 3.0), (1.0, 3.0)]
    assert exact_permutation_p(pairs_a, pairs_b) == 27 / 128
    assert intervals.paired_difference(table_of(pairs_a), table_of(pairs_b), 10)[0]["p_value"] == 0.210938
