"""Every study metric against hand-computed cases (definitions: searchlab/study/analysis/metrics.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from searchlab.core.records import Direction
from searchlab.study.analysis import metrics as M

INF = math.inf


def test_best_so_far_keeps_the_running_minimum_and_inf_until_a_success() -> None:
    assert M.best_so_far(np.array([INF, 5, INF, 3, 4, 1])).tolist() == [INF, 5, 5, 3, 3, 1]


def test_extend_carries_the_last_value() -> None:
    assert M.extend(np.array([3.0, 2.0]), 4).tolist() == [3, 2, 2, 2]
    assert M.extend(np.array([3.0, 2.0, 1.0]), 2).tolist() == [3, 2]


def test_fraction_of_peak_is_a_performance_ratio_in_both_directions() -> None:
    # minimised: optimum / value; nothing successful yet: 0
    assert M.fraction_of_peak(np.array([INF, 4.0, 2.0]), 2.0, Direction.MINIMIZE).tolist() == [0.0, 0.5, 1.0]
    # maximised: losses are negated objectives; value / optimum
    assert M.fraction_of_peak(np.array([-5.0, -10.0]), -10.0, Direction.MAXIMIZE).tolist() == [0.5, 1.0]
    # non-positive values have no ratio
    assert np.isnan(M.fraction_of_peak(np.array([-1.0]), 2.0, Direction.MINIMIZE)).all()


def test_percentile_is_linear_and_censored_by_inf() -> None:
    assert M.percentile([1, 2, 3, 4], 30) == pytest.approx(1.9)  # 1 + 0.9 * (2 - 1)
    assert M.percentile([4, 1, 3, 2], 50) == pytest.approx(2.5)
    assert M.percentile([1, 2, INF], 30) == pytest.approx(1.6)  # h = 0.6 between 1 and 2
    assert M.percentile([1, 2, INF], 50) == 2.0  # h = 1 exactly
    assert M.percentile([1, 2, INF], 70) == INF  # h = 1.4 touches the censored run
    assert math.isnan(M.percentile([], 50))


def test_evaluations_to_level_is_one_based_and_inf_when_never_reached() -> None:
    f = np.array([0.0, 0.5, 0.8, 1.0])
    assert M.evaluations_to_level(f, 0.5) == 2
    assert M.evaluations_to_level(f, 0.7) == 3
    assert M.evaluations_to_level(f, 0.95) == 4
    assert M.evaluations_to_level(np.array([0.0, 0.4]), 0.5) == INF


def test_success_rate_counts_runs_at_the_optimum_or_a_level() -> None:
    finals = [1.0, 0.99, 1.0 - 1e-12]
    assert M.success_rate(finals) == pytest.approx(2 / 3)
    assert M.success_rate(finals, 0.95) == 1.0
    assert M.success_rate([0.5, 0.7], 0.7) == 0.5


def test_failure_shares_are_per_mode_over_all_evaluations() -> None:
    assert M.failure_shares(["none", "compile", "compile", "resources"]) == {"compile": 0.5, "resources": 0.25}
    assert M.failure_shares(["none"]) == {}


def test_expected_random_best_small_cases_by_hand() -> None:
    # {1,2,3}: one draw averages 2; two draws: mins of (1,2),(1,3),(2,3) = 1,1,2 -> 4/3
    assert M.expected_random_best([3, 1, 2], 4).tolist() == pytest.approx([2, 4 / 3, 1, 1])
    # a failed member counts as the worst success (3): {1,2,3,3}
    assert M.expected_random_best([3, 1, INF, 2], 2).tolist() == pytest.approx([9 / 4, 10 / 6])


def test_expected_random_best_equals_the_average_over_every_draw_order() -> None:
    values = np.array([5.0, 0.5, 3.0, 2.0, 8.0])
    orders = np.array([np.minimum.accumulate(values[list(p)]) for p in itertools.permutations(range(5))])
    assert M.expected_random_best(values, 5) == pytest.approx(orders.mean(axis=0))


def test_random_normalised_score() -> None:
    s, r = np.array([3.0, 2.0, 1.0]), np.array([4.0, 2.0, 1.0])
    score = M.random_normalised_score(s, r, 1.0)
    assert score[0] == pytest.approx((3 - 4) / (1 - 4))  # 1/3 of the way from random to the optimum
    assert score[1] == 0.0  # as good as random
    assert math.isnan(score[2])  # random already at the optimum: undefined
    assert M.random_normalised_score(np.array([5.0]), np.array([4.0]), 1.0)[0] == pytest.approx(-1 / 3)


def test_best_at_times_steps_at_cumulative_charged_time() -> None:
    out = M.best_at_times(np.array([1.0, 3.0, 6.0]), np.array([5.0, 4.0, 2.0]), np.array([0.5, 1, 2, 3, 10]))
    assert out.tolist() == [INF, 5, 5, 4, 2]


def test_band_is_mean_and_10_90_percentiles() -> None:
    mean, lo, hi = M.band(np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]]))
    assert mean.tolist() == [1.0, 1.0]
    assert lo.tolist() == pytest.approx([0.2, 1.0])
    assert hi.tolist() == pytest.approx([1.8, 1.0])
