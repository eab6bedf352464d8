"""``metrics.human_agreement`` on hand-worked tables (issue 52 part 2): kappa, Gwet's AC1, PABAK, the constant
judges, and the BCa interval against ``scipy.stats.bootstrap``.

Every value below is worked by hand from the 2x2 table (rows: the people's label wrong/right, columns: the
judge's), with the arithmetic in the comments, and kappa is checked by ``sklearn.metrics.cohen_kappa_score``
too. The same values were also given by irrCAC 0.4.4 (``CAC.gwet``, ``CAC.bp``, ``CAC.conger``), run once from
its unpacked wheel: it is not installed in the test extra because its metadata pins scipy==1.12.0 and
pandas<3, which would downgrade the project's scipy 1.17 and pandas 3.1.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from cogbench.reference_eval.metrics import agreement
from cogbench.reference_eval.metrics import human_agreement as ha


def figures(matrix) -> dict[str, float]:
    return dict(zip(ha.STATISTICS, ha.statistics_from_counts(np.array(matrix, dtype=float)).tolist()))


def rows_of(matrix) -> tuple[list[int], list[int]]:
    people, judge = [], []
    for a in (0, 1):
        for b in (0, 1):
            people += [a] * matrix[a][b]
            judge += [b] * matrix[a][b]
    return people, judge


def test_a_balanced_hand_worked_table():
    # [[5, 3], [2, 40]], n = 50: p_o = 45/50 = 0.9; people right 42/50 = 0.84, judge right 43/50 = 0.86.
    got = figures([[5, 3], [2, 40]])
    # kappa: p_e = 0.84 * 0.86 + 0.16 * 0.14 = 0.7448; (0.9 - 0.7448) / 0.2552 = 0.608150...
    assert got["kappa"] == pytest.approx(0.1552 / 0.2552, abs=1e-12)
    assert got["kappa"] == pytest.approx(cohen_kappa_score(*rows_of([[5, 3], [2, 40]])), abs=1e-12)
    # AC1: pi = (0.84 + 0.86) / 2 = 0.85; p_e = 2 * 0.85 * 0.15 = 0.255; (0.9 - 0.255) / 0.745 = 0.865771...
    assert got["ac1"] == pytest.approx(0.645 / 0.745, abs=1e-12)
    assert got["pabak"] == pytest.approx(0.8, abs=1e-12)  # 2 * 0.9 - 1
    assert (got["raw_agreement"], got["prevalence_human"], got["prevalence_judge"]) == pytest.approx((0.9, 0.84, 0.86))
    # always right: [[0, 8], [0, 42]]: p_o = 0.84; pi = (0.84 + 1) / 2 = 0.92; p_e = 2 * 0.92 * 0.08 = 0.1472;
    # (0.84 - 0.1472) / 0.8528 = 0.812382...
    assert got["always_right_ac1"] == pytest.approx(0.6928 / 0.8528, abs=1e-12)
    # always wrong: [[8, 0], [42, 0]]: p_o = 0.16; pi = 0.42; p_e = 2 * 0.42 * 0.58 = 0.4872; -0.3272 / 0.5128
    assert got["always_wrong_ac1"] == pytest.approx(-0.3272 / 0.5128, abs=1e-12)
    # the judge beats the better constant (always right) by 0.865771 - 0.812383 = 0.053389: under a 0.10 margin
    assert got["ac1_margin"] == pytest.approx(0.645 / 0.745 - 0.6928 / 0.8528, abs=1e-12)


def test_a_skewed_task_where_kappa_collapses_and_the_constant_judge_wins():
    # [[1, 4], [2, 93]], n = 100: p_o = 0.94; people right 0.95, judge right 0.97.
    got = figures([[1, 4], [2, 93]])
    # kappa: p_e = 0.95 * 0.97 + 0.05 * 0.03 = 0.923; (0.94 - 0.923) / 0.077 = 0.220779...: collapsed
    assert got["kappa"] == pytest.approx(0.017 / 0.077, abs=1e-12)
    assert got["kappa"] == pytest.approx(cohen_kappa_score(*rows_of([[1, 4], [2, 93]])), abs=1e-12)
    # AC1: pi = 0.96; p_e = 2 * 0.96 * 0.04 = 0.0768; (0.94 - 0.0768) / 0.9232 = 0.935009...: high
    assert got["ac1"] == pytest.approx(0.8632 / 0.9232, abs=1e-12)
    assert got["pabak"] == pytest.approx(0.88, abs=1e-12)
    # always right: p_o = 0.95; pi = 0.975; p_e = 2 * 0.975 * 0.025 = 0.04875; 0.90125 / 0.95125 = 0.947438...
    assert got["always_right_ac1"] == pytest.approx(0.90125 / 0.95125, abs=1e-12)
    # so the judge's AC1 (0.935) is BELOW the constant judge's (0.947): the margin is negative
    assert got["ac1_margin"] == pytest.approx(0.8632 / 0.9232 - 0.90125 / 0.95125, abs=1e-12)
    assert got["ac1_margin"] < 0


def test_a_mostly_wrong_task_where_always_wrong_is_the_better_constant():
    # [[40, 2], [3, 5]], n = 50: p_o = 45/50 = 0.9; people right 8/50 = 0.16, judge right 7/50 = 0.14.
    got = figures([[40, 2], [3, 5]])
    # AC1: pi = 0.15; p_e = 2 * 0.15 * 0.85 = 0.255; (0.9 - 0.255) / 0.745 = 0.865771...
    assert got["ac1"] == pytest.approx(0.645 / 0.745, abs=1e-12)
    # always wrong: p_o = 0.84; pi = 0.08; p_e = 2 * 0.08 * 0.92 = 0.1472; 0.6928 / 0.8528 = 0.812382...
    assert got["always_wrong_ac1"] == pytest.approx(0.6928 / 0.8528, abs=1e-12)
    # always right: p_o = 0.16; pi = 0.58; p_e = 2 * 0.58 * 0.42 = 0.4872; -0.3272 / 0.5128
    assert got["always_right_ac1"] == pytest.approx(-0.3272 / 0.5128, abs=1e-12)
    # the margin is over the better constant, always wrong here
    assert got["ac1_margin"] == pytest.approx(0.645 / 0.745 - 0.6928 / 0.8528, abs=1e-12)


def test_a_constant_judge_itself_has_kappa_zero_and_no_margin():
    got = figures([[0, 8], [0, 42]])  # the judge said right throughout
    # p_o = 0.84; p_e = 0.84 * 1 + 0.16 * 0 = 0.84: kappa = 0, whatever the people said
    assert got["kappa"] == pytest.approx(0.0, abs=1e-12)
    assert got["ac1"] == pytest.approx(got["always_right_ac1"])
    assert got["ac1_margin"] == pytest.approx(0.0, abs=1e-12)


def test_kappa_is_agreements_kappa_on_random_tables():
    counts = np.random.default_rng(3).integers(0, 9, (500, 2, 2)).astype(float)
    mine = ha.statistics_from_counts(counts)[:, ha.STATISTICS.index("kappa")]
    np.testing.assert_allclose(mine, agreement.kappa_from_counts(counts), rtol=0, atol=1e-12)


def test_a_verdict_of_two_counts_as_right():
    table = ha.table([agreement.VerdictPair("i", "c", 1, 2), agreement.VerdictPair("i", "c", 0, 0)], ["c"])
    assert table.labels == [0, 1]
    assert table.counts.sum(axis=0)[-1].tolist() == [[1, 0], [0, 1]]


def test_bca_is_scipys_bca_on_the_image_indices():
    rng = np.random.default_rng(5)
    images = 40
    counts = rng.integers(0, 3, (images, 1, 2, 2)).astype(float)  # one column
    _, bounds = ha.intervals_of(counts, 999, 7)
    for s, name in enumerate(ha.STATISTICS):

        def statistic(idx, axis=-1, s=s):
            return ha.statistics_from_counts(counts[idx, 0].sum(axis=-3))[..., s]

        expected = stats.bootstrap(
            (np.arange(images),),
            statistic,
            vectorized=True,
            n_resamples=999,
            method="BCa",
            rng=np.random.default_rng(7),
        ).confidence_interval
        assert bounds[0, s].tolist() == pytest.approx([expected.low, expected.high], abs=1e-12), name


def test_no_interval_below_the_measured_counts():
    def pairs(images, per_image, rarer):
        out = []
        for g in range(images):
            for i in range(per_image):
                n = g * per_image + i
                people = 0 if n < rarer else 1
                out.append(agreement.VerdictPair(f"img{g}", "c", people, people if n % 7 else 1 - people))
        return out

    enough = ha.agreement_columns(ha.table(pairs(ha.MIN_IMAGES, 2, ha.MIN_RARER), ["c"]), 200, 0)["overall"]
    assert enough["kappa_interval"] is not None and enough["no_interval"] == ""
    assert (enough["units"], enough["images"]) == (2 * ha.MIN_IMAGES, ha.MIN_IMAGES)
    few_images = ha.agreement_columns(ha.table(pairs(ha.MIN_IMAGES - 1, 2, 20), ["c"]), 200, 0)["overall"]
    assert few_images["kappa_interval"] is None and few_images["ac1_interval"] is None
    assert few_images["no_interval"] == f"fewer than {ha.MIN_IMAGES} images ({ha.MIN_IMAGES - 1})"
    few_rare = ha.agreement_columns(ha.table(pairs(ha.MIN_IMAGES, 2, ha.MIN_RARER - 1), ["c"]), 200, 0)["overall"]
    assert few_rare["kappa_interval"] is None
    assert few_rare["no_interval"] == f"fewer than {ha.MIN_RARER} units of the rarer label ({ha.MIN_RARER - 1})"
