"""The agreement statistics of ``searcher=transfer`` (issue 38): Kendall's tau with the
Fieller-Hartley-Pearson interval, and RGPE's ranking-loss weights."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from searchlab.searchers._transfer.agreement import kendall_interval, ranking_weights


def test_interval_is_fishers_z_with_fhp_variance() -> None:
    prior, measured = [8, 7, 6, 5, 4, 3, 2, 1], [5, 6, 8, 7, 1, 2, 3, 4]
    got = kendall_interval(prior, measured)
    assert got is not None
    tau = kendalltau(prior, measured).statistic
    half = 1.959963984540054 * math.sqrt(0.437 / (8 - 4))  # Bonett & Wright (2000), Eq. 3
    assert got == pytest.approx((tau, math.tanh(math.atanh(tau) - half), math.tanh(math.atanh(tau) + half)))


def test_no_evidence_below_five_points_or_without_order() -> None:
    assert kendall_interval([1, 2, 3, 4], [1, 2, 3, 4]) is None
    assert kendall_interval([1, 1, 1, 1, 1], [1, 2, 3, 4, 5]) is None


def test_a_reversed_table_lies_below_zero_a_weak_one_does_not() -> None:
    reversed_ = kendall_interval([5, 4, 3, 2, 1, 0], [0, 1, 2, 3, 4, 5])
    weak = kendall_interval([8, 7, 6, 5, 4, 3, 2, 1], [4, 3, 2, 1, 8, 7, 6, 5])  # Spearman -0.52
    assert reversed_ is not None and reversed_[2] < 0
    assert weak is not None and weak[1] < 0 < weak[2]


def test_interval_covers_about_95_percent_for_normal_data() -> None:
    """Bivariate normal, rho 0.5 (tau = 2/pi asin 0.5 = 1/3), n = 12: the stated 95 %, within simulation error."""
    rng = np.random.default_rng(0)
    truth, hits, runs = 2 / math.pi * math.asin(0.5), 0, 2000
    for _ in range(runs):
        x = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=12)
        got = kendall_interval(list(x[:, 0]), list(x[:, 1]))
        assert got is not None
        hits += got[1] <= truth <= got[2]
    assert 0.93 <= hits / runs <= 0.985


def test_weights_favour_the_table_with_fewest_misordered_pairs() -> None:
    measured = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.5])
    good, noisy, reversed_ = measured, np.array([4.0, 5.0, 3.0, 1.0, 2.0, 0.5]), measured[::-1].copy()
    w = ranking_weights(np.vstack([good, noisy, reversed_]), measured, [True, True, True], seed=0)
    assert w.sum() == pytest.approx(1.0) and w[0] > w[1] > w[2] == 0
    dropped = ranking_weights(np.vstack([good, noisy, reversed_]), measured, [False, True, True], seed=0)
    assert dropped[0] == 0 and dropped.sum() == pytest.approx(1.0)
    assert not ranking_weights(np.vstack([good]), measured, [False], seed=0).any()
