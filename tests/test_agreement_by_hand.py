"""Judge agreement worked by hand (metrics/agreement.py): kappa, flips, intervals and Kendall's tau-b.

Hand-worked values, never our own code path: Cohen's kappa from its definition on small
tables (and scikit-learn's ``cohen_kappa_score`` as a second, independent reading), the
bootstrap interval by enumerating the three ways of drawing two images, Kendall's tau by
counting concordant pairs (and scipy's ``kendalltau(variant="b")``). Fast, no dataset: the mutation
run of agreement.py uses this file (mutation.toml); tests/test_judge_agreement.py runs it end to end.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from cogbench.reference_eval.metrics import agreement, intervals

Pair = agreement.VerdictPair


def pairs_from(cluster: str, category: str, verdicts: list[tuple[int, int]]) -> list[Pair]:
    return [Pair(cluster, category, a, b) for a, b in verdicts]


def test_kappa_by_hand_on_a_two_by_two_table():
    # 10 items: both 1 four times, both 0 three times, A1/B0 twice, A0/B1 once.
    # p_o = 7/10; A says 1 six times, B five times: p_e = .6 * .5 + .4 * .5 = .5; kappa = (.7 - .5) / .5 = 0.4.
    verdicts = [(1, 1)] * 4 + [(0, 0)] * 3 + [(1, 0)] * 2 + [(0, 1)]
    table = agreement.confusion_table(pairs_from("x", "c", verdicts), ["c"])
    result = agreement.kappa_with_intervals(table, resamples=50)
    assert result["overall"]["kappa"] == 0.4
    assert result["c"]["kappa"] == 0.4
    assert cohen_kappa_score([a for a, _ in verdicts], [b for _, b in verdicts]) == pytest.approx(0.4)
    assert (result["overall"]["items"], result["overall"]["flips"], result["overall"]["flip_share"]) == (10, 3, 30.0)
    assert (result["overall"]["a_higher"], result["overall"]["b_higher"]) == (2, 1)  # A right / B wrong twice


def test_kappa_with_three_verdict_labels_matches_scikit_learn():
    # Official parsing may give 2 (the authors' script sums it): kappa over three labels.
    verdicts = [(0, 0), (1, 1), (2, 2), (2, 1), (1, 0), (0, 0), (1, 1), (2, 2), (0, 1)]
    table = agreement.confusion_table(pairs_from("x", "c", verdicts), ["c"])
    expected = cohen_kappa_score([a for a, _ in verdicts], [b for _, b in verdicts])
    # By hand: p_o = 6/9; rows (A) 3,3,3 and columns (B) 3,4,2: p_e = (9 + 12 + 6) / 81 = 1/3; kappa = (2/3 - 1/3)/(2/3).
    assert expected == pytest.approx(0.5)
    assert agreement.kappa_with_intervals(table, resamples=20)["overall"]["kappa"] == 0.5


def test_kappa_is_undefined_when_both_judges_never_vary():
    table = agreement.confusion_table(pairs_from("x", "c", [(1, 1)] * 5), ["c", "d"])
    result = agreement.kappa_with_intervals(table, resamples=20)
    assert result["overall"]["kappa"] is None and result["overall"]["interval"] is None
    assert result["d"]["items"] == 0 and result["d"]["kappa"] is None and result["d"]["flip_share"] is None


def test_interval_resamples_whole_images_by_enumeration():
    """Two images; a bootstrap draw of two images is XX (1/4), XY (1/2) or YY (1/4).

    X: (1,1), (0,0) -> kappa 1.  YY: n11 = n00 = n10 = n01 = 2 -> p_o = .5 = p_e -> kappa 0.
    XY: n11 = n00 = 2, n10 = n01 = 1 -> p_o = 2/3, p_e = .5 -> kappa 1/3 (also the point estimate).
    With a quarter of the draws at each end, the 2.5% and 97.5% percentiles are 0 and 1.
    """
    pairs = pairs_from("X", "c", [(1, 1), (0, 0)]) + pairs_from("Y", "c", [(1, 0), (0, 0), (1, 1), (0, 1)])
    table = agreement.confusion_table(pairs, ["c"])
    result = agreement.kappa_with_intervals(table, resamples=2000, seed=3, min_images=0)
    assert result["overall"]["kappa"] == pytest.approx(1 / 3, abs=1e-4)
    assert result["overall"]["interval"] == [0.0, 1.0]
    assert result["overall"]["images"] == 2 and result["overall"]["flips"] == 2
    # cogbench itself gives no interval below MIN_IMAGES images, where its coverage was measured under 95%
    assert agreement.kappa_with_intervals(table, resamples=200)["overall"]["interval"] is None


def test_kendall_tau_by_counting_pairs():
    """Scores under A: 10, 20, 30, 40; under B: 15, 35, 25, 45. Of the six pairs of models only (2, 3)
    is ordered differently: tau = (5 - 1) / 6."""

    def table(score: float) -> intervals.ClusterTable:
        return intervals.ClusterTable(
            ["i1", "i2"], ["overall"], np.array([[score], [score]]), np.array([[100.0], [100.0]])
        )

    result = agreement.kendall_tau_with_interval(
        [table(s) for s in (10, 20, 30, 40)], [table(s) for s in (15, 35, 25, 45)], resamples=100, min_images=0
    )
    assert result["tau"] == pytest.approx(4 / 6, abs=1e-4)
    assert result["scores_a"] == [10.0, 20.0, 30.0, 40.0] and result["models"] == 4
    # Every image gives each model the same score, so every resample keeps the ranking: the interval is one point.
    assert result["interval"] == [pytest.approx(4 / 6, abs=1e-4)] * 2


def one_score_table(score: float, images: int = 2) -> intervals.ClusterTable:
    """Every image gives the model ``score`` percent, so every resample keeps its score."""
    names = [f"i{n}" for n in range(images)]
    return intervals.ClusterTable(names, ["overall"], np.full((images, 1), score), np.full((images, 1), 100.0))


def test_kendall_tau_is_tau_b_when_models_tie():
    """A: 10, 10, 20, 30; B: 15, 25, 25, 35. Of the six pairs, four are concordant, none discordant, one tied
    under A alone (models 1, 2) and one under B alone (2, 3): tau-b = 4 / sqrt((6 - 1)(6 - 1)) = 0.8, where
    tau-a would be 4/6 and tau-c 2 * 4 / (4^2 (3 - 1) / 3) = 0.75."""
    scores_a, scores_b = (10, 10, 20, 30), (15, 25, 25, 35)
    assert stats.kendalltau(scores_a, scores_b, variant="b").statistic == pytest.approx(0.8)
    assert stats.kendalltau(scores_a, scores_b, variant="c").statistic == pytest.approx(0.75)
    result = agreement.kendall_tau_with_interval(
        [one_score_table(s) for s in scores_a], [one_score_table(s) for s in scores_b], resamples=50, min_images=2
    )
    assert result["tau"] == 0.8
    assert result["interval"] == [pytest.approx(0.8, abs=1e-9)] * 2  # each resample's tau is tau-b too


def test_intervals_start_at_exactly_the_minimum_image_count():
    """``min_images`` images give an interval, one fewer none, for kappa (per column) and for tau."""
    pairs = pairs_from("X", "c", [(1, 1), (0, 0)]) + pairs_from("Y", "d", [(1, 0), (0, 0), (1, 1), (0, 1)])
    table = agreement.confusion_table(pairs, ["c", "d"])
    at_two = agreement.kappa_with_intervals(table, resamples=200, seed=3, min_images=2)
    assert at_two["overall"]["images"] == 2 and at_two["overall"]["interval"] is not None
    assert at_two["c"]["images"] == 1 and at_two["c"]["interval"] is None  # category c is on one image only
    at_one = agreement.kappa_with_intervals(table, resamples=200, seed=3, min_images=1)
    assert at_one["c"]["interval"] is not None and at_one["d"]["interval"] is not None
    at_three = agreement.kappa_with_intervals(table, resamples=200, seed=3, min_images=3)
    assert at_three["overall"]["interval"] is None
    tables_a = [one_score_table(s, images=3) for s in (10, 20, 30)]
    tables_b = [one_score_table(s, images=3) for s in (30, 20, 10)]
    assert (
        agreement.kendall_tau_with_interval(tables_a, tables_b, resamples=20, min_images=3)["interval"]
        == [pytest.approx(-1.0)] * 2
    )
    assert agreement.kendall_tau_with_interval(tables_a, tables_b, resamples=20, min_images=4)["interval"] is None


def test_one_disagreeing_item_has_kappa_zero_and_kappa_is_rounded_to_four_places():
    # One item, A 1 and B 0: p_o = 0, p_e = 1 * 0 + 0 * 1 = 0, kappa = 0 (scikit-learn agrees).
    single = agreement.kappa_with_intervals(agreement.confusion_table([Pair("x", "c", 1, 0)], ["c"]), resamples=10)
    assert single["overall"]["kappa"] == 0.0 == cohen_kappa_score([1], [0])
    # XY of test_interval_resamples_whole_images_by_enumeration: kappa 1/3 exactly, shown as 0.3333.
    pairs = pairs_from("X", "c", [(1, 1), (0, 0)]) + pairs_from("Y", "c", [(1, 0), (0, 0), (1, 1), (0, 1)])
    result = agreement.kappa_with_intervals(agreement.confusion_table(pairs, ["c"]), resamples=10)
    assert result["overall"]["kappa"] == 0.3333 and result["overall"]["flip_share"] == pytest.approx(
        200 / 6
    )  # 2 of 6, rounded only where printed


def test_a_judge_constant_throughout_is_named_and_an_empty_column_names_none():
    # B says 1 throughout, A varies: B alone is constant (kappa 0: p_o = p_e = 3/5).
    table = agreement.confusion_table(pairs_from("x", "c", [(1, 1), (1, 1), (1, 1), (0, 1), (0, 1)]), ["c", "d"])
    result = agreement.kappa_with_intervals(table, resamples=10)
    assert (result["c"]["constant"], result["c"]["kappa"]) == (["B"], 0.0)
    assert result["d"]["constant"] == [] and result["d"]["items"] == 0
    swapped = agreement.confusion_table(pairs_from("x", "c", [(1, 1), (1, 1), (1, 0)]), ["c"])
    assert agreement.kappa_with_intervals(swapped, resamples=10)["c"]["constant"] == ["A"]
    varied = agreement.confusion_table(pairs_from("x", "c", [(1, 1), (0, 0), (1, 0)]), ["c"])
    assert agreement.kappa_with_intervals(varied, resamples=10)["c"]["constant"] == []


def test_no_verdict_pairs_give_the_labels_0_and_1_and_no_kappa():
    """Every item unjudged by one judge: an empty table over the two verdicts, nothing to compute."""
    table = agreement.confusion_table([], ["c"])
    assert table.labels == [0, 1] and table.counts.shape == (0, 2, 2, 2)


def test_verdict_pairs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Pair("x", "c", 1, 0).a = 0


def test_tau_ranks_the_overall_column_not_a_category():
    """Each model's overall score is its last column; its category column (first) orders them the other way."""

    def table(category: float, overall: float) -> intervals.ClusterTable:
        hits = np.array([[category, overall], [category, overall]])
        return intervals.ClusterTable(["i1", "i2"], ["c", "overall"], hits, np.full((2, 2), 100.0))

    tables = [table(30, 10), table(20, 20), table(10, 30)]
    result = agreement.kendall_tau_with_interval(tables, tables, resamples=10, min_images=0)
    assert result["scores_a"] == [10.0, 20.0, 30.0] and result["tau"] == 1.0


def test_flip_share_is_rounded_once_where_printed():
    # 94 items, 54 of them flipped: 100 * 54 / 94 = 57.4468...; printed to one decimal that is 57.4
    # (rounded to 57.45 first and then to one decimal, it read 57.5).
    verdicts = [(1, 0)] * 54 + [(1, 1)] * 40
    result = agreement.kappa_with_intervals(agreement.confusion_table(pairs_from("x", "c", verdicts), ["c"]), 20)
    assert result["overall"]["flip_share"] == pytest.approx(5400 / 94)
    assert f"{result['overall']['flip_share']:.1f}" == "57.4"


@pytest.mark.parametrize("categories", [[], ["c"], ["c", "d", "e"]])
def test_the_table_has_one_count_matrix_per_column_and_overall_counts_every_item(categories):
    """Counts (images, categories + overall, labels, labels): 3 items on 2 images, labels 0 and 1."""
    pairs = [Pair("x", "c", 1, 1), Pair("x", "d", 0, 1), Pair("y", "z", 0, 0)]  # "z" is in no column
    table = agreement.confusion_table(pairs, categories)
    assert table.columns == [*categories, "overall"]
    assert table.counts.shape == (2, len(categories) + 1, 2, 2)
    assert table.counts[:, -1].tolist() == [[[0, 1], [0, 1]], [[1, 0], [0, 0]]]


def test_by_default_an_interval_needs_200_images():
    """docs: kappa's interval is given from 200 images on (coverage measured under 95% below)."""
    pairs = [Pair(f"image{n}", "c", n % 2, n % 3 % 2) for n in range(200)]
    table = agreement.confusion_table(pairs, ["c"])
    assert agreement.kappa_with_intervals(table, resamples=20)["overall"]["interval"] is not None
    fewer = agreement.confusion_table(pairs[:199], ["c"])
    assert agreement.kappa_with_intervals(fewer, resamples=20)["overall"]["interval"] is None


def test_a_confusion_table_is_frozen():
    table = agreement.confusion_table([Pair("x", "c", 1, 1)], ["c"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.labels = [0]


def test_an_image_with_one_item_in_a_column_counts_as_an_image_of_it():
    """images: per column, the images with at least one item there (here one item each)."""
    pairs = [Pair("x", "c", 1, 1), Pair("y", "c", 0, 0), Pair("z", "d", 1, 0)]
    result = agreement.kappa_with_intervals(agreement.confusion_table(pairs, ["c", "d"]), resamples=10)
    assert (result["c"]["images"], result["d"]["images"], result["overall"]["images"]) == (2, 1, 3)
