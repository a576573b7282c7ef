"""The package's time-axis curve, computed with the same estimators and draws, in less memory and time.

``StochasticOptimizationAlgorithm.get_curve_over_time`` fits a ``BaggingRegressor`` of isotonic regressions
(``max(repeats, 3)`` estimators) and predicts every estimator on the whole time range twice (once for the mean,
once for the interval), holding an ``estimators x resolution`` array: at the 10^6 points of
compare_hypertuners_metastrategy.json that is 800 MB and 9 s per curve, a third of it copying. :class:`SeededCurve`
overrides only that one step, ``_get_prediction_interval_bagging``:

- the ensemble is fitted by scikit-learn exactly as there, but drawing its estimators' seeds from a given
  ``RandomState`` (the global generator's state at the point where the package's fit would draw them), so the
  estimators are the same and the curve can be computed in another process, in any order;
- predictions are made in chunks of the time range, each estimator once per chunk, with the arithmetic of
  scikit-learn's ``IsotonicRegression.predict`` (clip, ``np.interp``) without its per-call checks; the mean is
  summed in the estimators' order and divided as ``BaggingRegressor.predict`` does (``sum(...) / n_estimators``),
  and the interval takes the same ranks of each point's sorted predictions as the package's
  ``get_confidence_interval``,
  so every number is the package's, bit for bit (tests/reproduce/test_reproduce_fastcurve.py checks it on real runs
  against the package's own function).
"""

from __future__ import annotations

from math import ceil, floor, sqrt
from statistics import NormalDist
from typing import Any

import numpy as np
from autotuning_methodology.baseline import RandomSearchCalculatedBaseline
from autotuning_methodology.curves import StochasticOptimizationAlgorithm

__all__ = ["CHUNK", "FastBaseline", "SeededCurve", "bagging_estimators"]

CHUNK = 16384


def bagging_estimators(repeats: int) -> int:
    """How many estimators (and so how many seeds drawn from NumPy's global generator) the package's fit uses."""
    return max(repeats, 3)


def _ranks(n: int, confidence_level: float) -> tuple[int, int]:
    """``get_confidence_interval``'s ranks of the median's interval among ``n`` sorted values."""
    z = NormalDist().inv_cdf((1 + confidence_level) / 2.0)
    nq = n * 0.5
    base = z * sqrt(nq * (1 - 0.5))
    return max(floor(nq - base), 0), min(ceil(nq + base) + 1, n - 1)


def _predict(estimator: Any, x: np.ndarray) -> np.ndarray:
    """``IsotonicRegression.predict`` of a 1-D float64 ``x``, as scikit-learn computes it for ``out_of_bounds="clip"``:
    clip to the fitted range, then ``interp1d``'s linear call, which is ``np.interp`` for float64 data (and a
    constant for a single threshold), cast back to ``x``'s dtype."""
    t = np.clip(x, estimator.X_min_, estimator.X_max_)
    y = estimator.y_thresholds_
    out: np.ndarray = y.repeat(t.shape) if len(y) == 1 else np.interp(t, estimator.X_thresholds_, y)
    return out.astype(t.dtype)


class FastBaseline(RandomSearchCalculatedBaseline):  # type: ignore[misc]  # the package is untyped
    """The package's calculated random-search baseline, its draws made with NumPy instead of a Python loop over
    every point of the range (3 s at 10^6 points): ``dist[min(N - 1, round(M (N + 1) / (M + 1)))]`` with the same
    float division and round-half-to-even, then the package's own smoothing, unchanged."""

    def _get_random_curve(self, fevals_range: np.ndarray, smoothing: bool = True) -> np.ndarray:
        from scipy.interpolate import PchipInterpolator

        dist = self._redwhite_index_dist
        n = dist.shape[0]
        ks = np.asarray(fevals_range)
        draws: np.ndarray = dist[np.minimum(n - 1, np.rint(ks * (n + 1) / (ks + 1)).astype(np.int64))]
        if not smoothing or len(fevals_range) <= 2:
            return draws
        if len(fevals_range) != len(np.unique(fevals_range)):
            first = np.concatenate([[True], np.where(np.ediff1d(fevals_range) > 0, True, False)])
            x, y = fevals_range[first], draws[first]
        else:
            x, y = fevals_range, draws
        if len(x) < 2 or len(y) < 2:
            return draws
        smooth: np.ndarray = PchipInterpolator(x, y)(np.linspace(fevals_range[0], fevals_range[-1], len(fevals_range)))
        return smooth


class SeededCurve(StochasticOptimizationAlgorithm):  # type: ignore[misc]  # the package is untyped
    """The package's curve of one results description; ``state`` seeds its bagging (None: the global generator)."""

    def __init__(self, results_description: Any, state: Any = None) -> None:
        super().__init__(results_description)
        self._state = state

    def _get_prediction_interval_bagging(self, x_1d: np.ndarray, y_1d: np.ndarray, x_test_1d: np.ndarray,
                                         confidence_level: float, num_repeats: int) -> np.ndarray:
        from sklearn.ensemble import BaggingRegressor

        x = x_1d.reshape(-1, 1)
        y = y_1d
        n_estimators = bagging_estimators(num_repeats)
        random_state = None
        if self._state is not None:
            random_state = np.random.RandomState()
            random_state.set_state(self._state)
        model = self.get_isotonic_regressor(y_min=y.min(), y_max=y.max())
        fitted = BaggingRegressor(model, n_estimators=n_estimators, max_samples=1 / np.sqrt(n_estimators),
                                  bootstrap=True, random_state=random_state).fit(x, y)
        n = x_test_1d.shape[0]
        lower_rank, upper_rank = _ranks(n_estimators, confidence_level)
        out = np.empty((n, 3))
        for start in range(0, n, CHUNK):
            chunk = x_test_1d[start:start + CHUNK].reshape(-1, 1)
            each = np.empty((n_estimators, chunk.shape[0]))
            for i, (estimator, features) in enumerate(zip(fitted.estimators_, fitted.estimators_features_)):
                each[i] = _predict(estimator, chunk[:, features].reshape(-1))
            total: Any = 0
            for row in each:  # the order and arithmetic of sum(generator) in _parallel_predict_regression
                total = total + row
            out[start:start + chunk.shape[0], 2] = total / n_estimators
            ranked = np.sort(each, axis=0)  # each point's predictions in order (faster here than partitioning)
            out[start:start + chunk.shape[0], 0] = ranked[lower_rank]
            out[start:start + chunk.shape[0], 1] = ranked[upper_rank]
        return out
