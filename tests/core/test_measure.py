"""The shared measurement protocol (searchlab.core.measure)."""

from __future__ import annotations

import itertools

import pytest

from searchlab.core.measure import Batch, MeasurementProtocol, Samples, measure, median_ci
from searchlab.errors import ConfigError


def test_stops_at_min_runs_when_quiet_and_long_enough() -> None:
    calls = itertools.count()
    samples = measure(lambda: (next(calls), 0.1)[1], MeasurementProtocol(min_runs=5, max_runs=50, min_time_s=0.2, warmup=2))
    assert len(samples.values) == 5 and next(calls) == 7  # two warm-ups unrecorded
    assert samples.cv == 0.0 and samples.ci95 == (0.1, 0.1)


def test_repeats_until_min_time() -> None:
    samples = measure(lambda: 0.01, MeasurementProtocol(min_runs=3, max_runs=100, min_time_s=0.2, warmup=0))
    assert len(samples.values) == 20


def test_a_batched_timer_stops_at_min_time_not_at_the_cap() -> None:
    """A run that times 10 executions of 1 ms lasts 10 ms: 50 ms of measuring is 5 runs, not
    the 50 of the cap (issue 22, item 1); every run's per-execution time is the sample."""
    calls = itertools.count()
    samples = measure(lambda: (next(calls), Batch(0.001, 10))[1],
                      MeasurementProtocol(min_runs=3, max_runs=50, min_time_s=0.05, target_rel_ci=0.0, warmup=1))
    assert samples.values == (0.001,) * 5 and next(calls) == 6  # one warm-up batch, unrecorded
    assert samples.measured == 0.05 and samples.median == 0.001


def test_mixed_and_plain_timers_count_measured_time() -> None:
    plain = measure(lambda: 0.01, MeasurementProtocol(min_runs=1, max_runs=100, min_time_s=0.05, target_rel_ci=0.0))
    assert len(plain.values) == 5 and plain.measured == sum(plain.values)
    batches = iter([Batch(0.002, 5), Batch(0.004, 5), Batch(0.002, 5), Batch(0.002, 5)])
    mixed = measure(lambda: next(batches), MeasurementProtocol(min_runs=1, max_runs=4, min_time_s=0.04,
                                                                target_rel_ci=0.0, warmup=0))
    assert mixed.values == (0.002, 0.004, 0.002) and abs(mixed.measured - 0.04) < 1e-12
    with pytest.raises(ValueError, match="executions"):
        measure(lambda: Batch(0.001, 0), MeasurementProtocol(warmup=0))


def test_noisy_runs_hit_the_cap() -> None:
    values = itertools.cycle([1.0, 3.0])
    samples = measure(lambda: next(values), MeasurementProtocol(min_runs=3, max_runs=12, min_time_s=0, target_rel_ci=0.01))
    assert len(samples.values) == 12 and samples.rel_ci > 0.01


def test_median_ci_covers_median_and_is_order_statistics() -> None:
    xs = [float(i) for i in range(1, 101)]
    lo, hi = median_ci(xs)
    assert lo < 50.5 < hi and lo in xs and hi in xs
    assert median_ci([2.0, 1.0]) == (1.0, 2.0)
    assert Samples((1.0, 1.0, 4.0)).sensors()["runs"] == 3.0


@pytest.mark.parametrize("kwargs", [{"min_runs": 0}, {"max_runs": 2, "min_runs": 3}, {"min_time_s": float("nan")},
                                    {"target_rel_ci": -1.0}, {"warmup": -1}])
def test_bad_protocol_is_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError, match="measure."):
        MeasurementProtocol(**kwargs)  # type: ignore[arg-type]


def test_median_ci_uses_exact_binomial_ranks() -> None:
    """The ranks are the exact ones (scipy.stats.binom), symmetric, for n = 3..200: the normal
    approximation it replaced put them one rank too high from n = 9 (issue 35; 0.9475 at n = 21)."""
    from scipy.stats import binom

    for n in range(3, 201):
        valid = [rank for rank in range(1, n + 1) if binom.cdf(rank - 1, n, 0.5) <= 0.025]
        low = max(valid, default=1)
        assert median_ci([float(v) for v in range(n, 0, -1)]) == (float(low), float(n + 1 - low)), n
        if valid:  # exact coverage at least 95 %, equal mass outside on either side
            assert 1 - 2 * binom.cdf(low - 1, n, 0.5) >= 0.95
    assert median_ci([3.0]) == (3.0, 3.0) and median_ci([2.0, 1.0]) == (1.0, 2.0)
