"""The statistics of bench/probabilistic.py (bench/common/stats.py): censored tests-to-reach (the old bench's percentile
over lists holding inf gave NaN, reported as "not reached"), random search's expected tests,
and paired comparisons that call a difference only outside the noise."""

from __future__ import annotations

import math

import numpy as np

from bench.common import stats

censored_quantiles, expected_random_tests, paired = stats.censored_quantiles, stats.expected_random_tests, stats.paired
uninformative_levels, reach = stats.uninformative_levels, stats.tests_to_reach


def test_censored_quantiles_are_numbers_where_enough_runs_reached_the_level() -> None:
    tests = [3.0, 5.0, 8.0, math.inf, math.inf]
    with np.errstate(invalid="ignore"):
        old = np.percentile(tests, 50)
    assert np.isnan(old)  # the old bench's bug: NaN although 3 of 5 runs got there
    assert censored_quantiles(tests, (0.3, 0.5, 0.7), 50) == [5.0, 8.0, "> 50"]
    assert reach([0.0, 0.4, 0.6, 0.9], 0.5) == 3.0 and reach([0.1], 0.5) == math.inf


def test_expected_random_tests_and_uninformative_levels() -> None:
    assert expected_random_tests(1, 9) == 5.0 and expected_random_tests(0, 9) == math.inf
    # 10 configurations, 6 at >= half of peak: (10 + 1) / (6 + 1) = 1.57 tests: uninformative
    flags = uninformative_levels([1.0, 0.95, 0.6, 0.6, 0.55, 0.5, 0.2, 0.0, 0.0, 0.1], (0.5, 0.9))
    assert flags["0.50"] == {"good": 6, "expected_random_tests": 1.57, "uninformative": True}
    assert flags["0.90"]["good"] == 2 and flags["0.90"]["uninformative"] is False


def test_paired_comparison_calls_differences_only_outside_the_noise() -> None:
    rng = np.random.default_rng(1)
    base = rng.random(40)
    same = paired(base + rng.normal(0, 0.01, 40), base, higher_is_better=True)
    assert same["verdict"].startswith("no difference") and same["diff_ci95"][0] <= 0 <= same["diff_ci95"][1]
    better = paired(base + 0.2, base, higher_is_better=True)
    assert better["verdict"] == "A better" and better["wilcoxon_p"] < 1e-6 and better["diff_ci95"][0] > 0.19
    fewer = paired([5.0] * 20, [10.0] * 10 + [math.inf] * 10, higher_is_better=False, horizon=50)
    assert fewer["verdict"] == "A better" and fewer["b_median"] == 10.0 and fewer["ratio_b_over_a"] == 2.0
    assert fewer["b_reached"] == 0.5 and fewer["b_restricted_mean"] == 30.5 and fewer["ratio_bound"] == "exact"
    never = paired([5.0] * 20, [10.0] * 5 + [math.inf] * 15, higher_is_better=False, horizon=50)
    assert never["b_median"] == "> 50" and never["ratio_bound"] == "lower bound" and never["ratio_b_over_a"] == 10.2
    assert never["verdict"] == "A better" and never["diff_ci95"][1] < 0
