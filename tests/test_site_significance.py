"""Holm's correction and the significance groups of `report --site`, against hand-worked cases (issue 43)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cogbench.reference_eval.site.leaderboard import ranked_metric
from cogbench.reference_eval.site.significance import holm, significance_groups


def test_holm_by_hand():
    """p = .01, .04, .03 over m = 3 pairs: sorted .01 x 3 = .03; .03 x 2 = .06; .04 x 1 = .04, raised to .06."""
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    # uncorrected, all three are below .05; after Holm only the first is
    assert [p < 0.05 for p in holm([0.01, 0.04, 0.03])] == [True, False, False]
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([0.6, 0.9]) == pytest.approx([1.0, 1.0])  # .6 x 2 = 1.2, capped at 1; .9 raised to 1
    assert holm([]) == []


def test_three_runs_two_that_differ_and_one_that_does_not():
    """A (80) and B (70) differ; C (75) differs from neither: groups {A, C} (a, led by A) and {B, C} (b).
    A shows a, B shows b, C shows ab: C cannot be told apart from either, A and B can."""
    letters = significance_groups([80.0, 70.0, 75.0], {(0, 1): True, (0, 2): False, (1, 2): False})
    assert letters == ["a", "b", "ab"]


def test_no_pair_differs_one_group_every_pair_differs_one_group_each():
    assert significance_groups([1.0, 3.0, 2.0], {(0, 1): False, (0, 2): False, (1, 2): False}) == ["a", "a", "a"]
    # every pair differs: one group per run, lettered from the best
    assert significance_groups([1.0, 3.0, 2.0], {(0, 1): True, (0, 2): True, (1, 2): True}) == ["c", "a", "b"]


def test_four_runs_in_a_chain():
    """Values 4 > 3 > 2 > 1; only neighbours cannot be told apart: groups {4,3}, {3,2}, {2,1}."""
    differs = {(0, 1): False, (0, 2): True, (0, 3): True, (1, 2): False, (1, 3): True, (2, 3): False}
    assert significance_groups([4.0, 3.0, 2.0, 1.0], differs) == ["a", "ab", "bc", "c"]


def _row(column: str, p: float, difference: float = 0.0, mdd: float | None = None) -> dict:
    """One column of ``compare.compare_runs``' rows for a metric (categories first, overall last)."""
    return {"column": column, "difference": difference, "interval": None, "p_value": p, "min_detectable": mdd}


def test_the_groups_come_from_the_overall_p_values_never_a_categorys():
    """Runs 80, 70, 75. Overall: A-B p .001, A-C and B-C .4; Holm over 3 pairs: .003, .8, .8: only A-B differ,
    so A a, B b, C ab. The first category's p-values are all .9 (nothing differs there): read by mistake,
    every run would be in one group."""
    runs = [SimpleNamespace(metrics={"acc": {"overall": value, "per_category": {}}}) for value in (80.0, 70.0, 75.0)]
    overall = {(0, 1): 0.001, (0, 2): 0.4, (1, 2): 0.4}
    tests = {
        pair: {"metrics": {"acc": [_row("Attributes", 0.9), _row("Relationships", 0.9), _row("overall", p, mdd=3.0)]}}
        for pair, p in overall.items()
    }
    ranked = ranked_metric(runs, [0, 1, 2], "acc", tests, alpha=0.05)
    assert ranked["letters"] == {0: "a", 1: "b", 2: "ab"}
    assert [(p["a"], p["b"], p["p"], p["differs"]) for p in ranked["pairs"]] == [
        (0, 1, 0.001, True),
        (0, 2, 0.4, False),
        (1, 2, 0.4, False),
    ]
    assert [p["p_holm"] for p in ranked["pairs"]] == pytest.approx([0.003, 0.8, 0.8])
    assert ranked["mdd"] == [3.0, 3.0]


def test_past_26_groups_the_letters_are_numbered():
    """28 runs, every pair differs: 28 groups of one, lettered a..z from the best, then [27] and [28]."""
    values = [float(28 - i) for i in range(28)]
    differs = {(i, j): True for i in range(28) for j in range(i + 1, 28)}
    assert significance_groups(values, differs) == [*"abcdefghijklmnopqrstuvwxyz", "[27]", "[28]"]


def test_groups_led_by_equal_values_are_lettered_by_their_first_run():
    """Runs 1, 2, 2, every pair differs: the two runs of 2 lead, the earlier (run 1) gets a, run 2 b, run 0 c."""
    differs = {(0, 1): True, (0, 2): True, (1, 2): True}
    assert significance_groups([1.0, 2.0, 2.0], differs) == ["c", "a", "b"]


def test_holm_by_hand_over_two_and_four_pairs():
    """m = 2: .01 x 2 = .02; .02 x 1 = .02. m = 4: .01 x 4 = .04; .02 x 3 = .06; .03 x 2 = .06; .04 x 1 = .04,
    raised to .06."""
    assert holm([0.02, 0.01]) == pytest.approx([0.02, 0.02])
    assert holm([0.04, 0.03, 0.02, 0.01]) == pytest.approx([0.06, 0.06, 0.06, 0.04])


def test_a_run_already_in_a_group_makes_no_group_of_its_own():
    """Run 0 cannot be told apart from runs 1, 2 and 3, run 4 from run 5; every other pair differs. The groups are
    {0, 1}, {0, 2}, {0, 3} and {4, 5}, led by 6, 5, 4 and 3: a, b, c, d. Run 5 is in {4, 5} only: a group {5}
    alone would not be maximal (found after {4, 5}, it must be left out, not lettered e)."""
    same = {(0, 1), (0, 2), (0, 3), (4, 5)}
    differs = {(i, j): (i, j) not in same for i in range(6) for j in range(i + 1, 6)}
    assert significance_groups([1.0, 6.0, 5.0, 4.0, 3.0, 2.0], differs) == ["abc", "a", "b", "c", "d", "d"]


def test_groups_led_by_one_run_are_lettered_by_their_other_runs_in_order():
    """Run 1 (the best, 9) cannot be told apart from runs 0, 2 and 3, which all differ from each other: groups
    {0, 1}, {1, 2}, {1, 3}, all led by run 1. Compared by their runs in order, [0, 1] < [1, 2] < [1, 3]: a, b, c
    (by the groups themselves, not by the order the clique search finds them in)."""
    same = {(0, 1), (1, 2), (1, 3)}
    differs = {(i, j): (i, j) not in same for i in range(4) for j in range(i + 1, 4)}
    assert significance_groups([1.0, 9.0, 1.0, 1.0], differs) == ["a", "abc", "b", "c"]
