"""Intervals for the methodology's own P: a bootstrap over repeats (bench/reproduce.py, issue 45 "auto ahead").

Why: the package's "error" next to P is the standard deviation of the standardised curve over the cutoff range
(how much P varies *along* the range), not a sampling interval; and its curve is the *median* over repeats
(``StochasticOptimizationAlgorithm.get_curve_over_fevals``: ``np.nanmedian``), so the mean of per-repeat
scores is a different statistic from P. Here each space's repeats are resampled with replacement and P is
recomputed by the package's own functions (``get_curve_over_fevals`` / ``get_curve_over_time``, then
``get_standardised_curve``), exactly as ``searchlab.reproduce.scoring`` computes it on all repeats. The
aggregate P is the mean over spaces (on the time axis the package's aggregate is the same number: every space
has ``resolution`` points). Strategies are resampled independently (their repeats are not paired), and the
held-out ``auto`` row takes, on each space, the strategy whose settings were chosen on the other tables.
"""

from __future__ import annotations

import copy
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np


def _resampled(curve: Any, idx: np.ndarray) -> Any:
    one = copy.copy(curve)
    one._x_fevals, one._x_time, one._y = curve._x_fevals[:, idx], curve._x_time[:, idx], curve._y[:, idx]
    one._x_time_per_key, one._y_per_key = curve._x_time_per_key[:, :, idx], curve._y_per_key[:, :, idx]
    return one


def _space_draws(args: tuple[Any, list[str], str, int, float, int]) -> dict[str, np.ndarray]:
    """B bootstrap values of P on one space for every strategy (a process of its own: the time axis is slow)."""
    from searchlab.reproduce.scoring import _curve

    (baseline, curves, stats, time_range, fevals_range), names, axis, draws, level, seed = args
    rng = np.random.default_rng(seed)
    np.random.seed(seed)  # the time axis bags with NumPy's global generator
    x = time_range if axis == "time" else fevals_range
    dist = stats.objective_performances_total_sorted
    out: dict[str, np.ndarray] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, curve in zip(names, curves):
            n = curve._y.shape[1]
            values = np.full(draws, np.nan)
            for b in range(draws):
                try:
                    c, _, _, _ = _curve(_resampled(curve, rng.integers(0, n, n)), axis, x, dist,
                                        level if axis == "time" else None)
                    values[b] = float(np.mean(baseline.get_standardised_curve(x, c, x_type=axis)))
                except (ValueError, AssertionError):  # the package's own refusal for this resample
                    continue
            out[name] = values
    return out


def aggregation(experiment: Any, stats: dict[str, Any], descs: Any) -> dict[str, Any]:
    """The package's ``get_aggregation_data`` for the experiment, as ``searchlab.reproduce.scoring.score`` calls it."""
    from autotuning_methodology.report_experiments import get_aggregation_data

    gpus = list(dict.fromkeys(s.gpu for s in experiment.spaces))
    apps = list(dict.fromkeys(s.application for s in experiment.spaces))
    ss: dict[str, dict[str, Any]] = {g: {} for g in gpus}
    for s in experiment.spaces:
        ss[s.gpu][s.application] = stats[s.key]
    strategies = [{"name": n, "display_name": experiment.display[n]} for n in experiment.strategies]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dict(get_aggregation_data(experiment.path.parent,
                                         {"experimental_groups_defaults": {"gpus": gpus, "applications_names": apps}},
                                         ss, strategies, descs, experiment.cutoff_percentile,
                                         experiment.cutoff_percentile_start, experiment.confidence_level,
                                         experiment.resolution))


def bootstrap_P(experiment: Any, agg: dict[str, Any], draws: dict[str, int], workers: int = 2
                ) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """axis -> space key -> strategy -> ``draws[axis]`` bootstrap values of P (seeded: 1000 + the space's index)."""
    names = list(experiment.strategies)
    keys = list(agg)
    out: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    for axis in ("fevals", "time"):
        jobs = [(agg[k], names, axis, draws[axis], experiment.confidence_level, 1000 + i) for i, k in enumerate(keys)]
        with ProcessPoolExecutor(workers) as pool:
            out[axis] = dict(zip(keys, pool.map(_space_draws, jobs)))
    return out


def _p_two_sided(diff: np.ndarray) -> float:
    ok = diff[np.isfinite(diff)]
    return float(min(1.0, 2 * min(np.mean(ok <= 0), np.mean(ok >= 0)))) if len(ok) else 1.0


def held_out_bootstrap(draws: dict[str, dict[str, dict[str, np.ndarray]]], held_out: dict[str, str],
                       kt: list[str]) -> dict[str, Any]:
    """Per axis: the held-out auto's P and every Kernel Tuner strategy's, each with a 95 % bootstrap interval,
    and auto minus each with its interval and a two-sided bootstrap p-value, Holm-corrected over ``kt``."""
    from searchlab.reproduce.tables import holm

    out: dict[str, Any] = {}
    for axis, per_space in draws.items():
        keys = list(per_space)
        auto = np.nanmean([per_space[k][held_out[k.split("+")[0]]] for k in keys], axis=0)
        rows: dict[str, Any] = {}
        for s in kt:
            theirs = np.nanmean([per_space[k][s] for k in keys], axis=0)
            rows[s] = {"P_95": _interval(theirs), "auto_minus_95": _interval(auto - theirs),
                       "p": _p_two_sided(auto - theirs)}
        for s, adj in zip(kt, holm([rows[s]["p"] for s in kt])):
            lo, hi = rows[s]["auto_minus_95"][1:]
            rows[s]["p_holm"] = adj
            rows[s]["verdict"] = ("auto ahead" if lo > 0 and adj < 0.05 else
                                  "auto behind" if hi < 0 and adj < 0.05 else "no difference")
        out[axis] = {"draws": len(auto), "auto_held_out_P_95": _interval(auto), "vs": rows}
    return out


def agreement(ours: dict[str, dict[str, dict[str, np.ndarray]]], theirs: dict[str, dict[str, dict[str, np.ndarray]]]
              ) -> dict[str, Any]:
    """Our runs against the reference's (different runs of the same file): per axis and strategy, each side's P
    over all spaces with its bootstrap interval, the difference's interval and a Holm-corrected p-value; they
    agree unless the difference is significant (its interval excludes 0 and the adjusted p < 0.05)."""
    from searchlab.reproduce.tables import holm

    out: dict[str, Any] = {}
    for axis in ours:
        keys = list(ours[axis])
        names = list(ours[axis][keys[0]])
        rows: dict[str, Any] = {}
        for n in names:
            a = np.nanmean([ours[axis][k][n] for k in keys], axis=0)
            b = np.nanmean([theirs[axis][k][n] for k in keys], axis=0)
            rows[n] = {"ours_95": _interval(a), "reference_95": _interval(b), "diff_95": _interval(a - b),
                       "p": _p_two_sided(a - b)}
        for n, adj in zip(names, holm([rows[n]["p"] for n in names])):
            lo, hi = rows[n]["diff_95"][1:]
            rows[n]["p_holm"] = adj
            rows[n]["agree"] = not ((lo > 0 or hi < 0) and adj < 0.05)
        out[axis] = rows
    return out


def _interval(values: np.ndarray) -> list[float]:
    v = values[np.isfinite(values)]
    if not len(v):
        return [float("nan")] * 3
    return [float(np.median(v)), float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))]
