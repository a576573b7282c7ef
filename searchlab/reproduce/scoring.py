"""The performance score P, computed by the ``autotuning_methodology`` package's own functions.

The stored repeats become the package's arrays through its own ``runner.write_results`` (into a
results description held in memory instead of an ``.npz``), then:

- per space, ``report_experiments.get_aggregation_data`` gives the random-search baseline
  (``RandomSearchCalculatedBaseline``: the exact expected best of random draws), the strategies' curves
  (``StochasticOptimizationAlgorithm``) and the cutoff ranges (``cutoff_point_fevals_time_start_end``);
- **time axis**: ``get_strategies_aggregated_performance`` (the one ``get_strategy_scores`` calls), and P is
  ``np.mean`` and the error ``np.std`` of the aggregated standardised curve, exactly as there (unrounded here;
  the package rounds to 3 decimals);
- **evaluations axis**, which the package scores only in its plots: the same steps with
  ``get_curve_over_fevals`` on the fevals range and ``get_standardised_curves(..., x_type="fevals")``; the
  ranges differ per space, so the aggregate P is the mean over spaces of each space's mean (on the time axis
  that is the same number, every space having ``resolution`` points) and its error is the ``np.std`` of the
  spaces' curves resampled to ``resolution`` points of their own range and averaged.

Per repeat (for the paired tests), each repeat is scored alone by the same functions.

The time axis is randomised twice: the runs (Kernel Tuner charges the real time a strategy spends), and the
scoring itself, whose curve is a ``BaggingRegressor`` of isotonic fits drawing from NumPy's global generator.
``score`` seeds that generator (``seed``, 0 by default) before the package's calls, so the same runs give
the same scores; with the same seed and the same runs, ``get_strategy_scores`` gives the same numbers.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Scores", "score"]


class _Description:
    """Duck-typed ``caching.ResultsDescription``: the package's arrays, kept in memory."""

    def __init__(self, gpu: str, application: str, name: str, display: str, time_keys: list[str],
                 objective: str, minimization: bool) -> None:
        self.device_name, self.application_name = gpu, application
        self.group_name, self.group_display_name = name, display
        self.stochastic = True
        self.objective_time_keys = time_keys
        self.objective_performance_keys = [objective]
        self.minimization = minimization
        self.arrays: dict[str, np.ndarray] = {}

    def set_results(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays

    def get_results(self) -> Any:
        from autotuning_methodology.caching import Results

        return Results([self.arrays[k] for k in ("fevals_results", "objective_time_results",
                                                 "objective_performance_results", "objective_performance_best_results",
                                                 "objective_performance_stds", "objective_time_results_per_key",
                                                 "objective_performance_results_per_key")])

    def has_results(self) -> bool:
        return bool(self.arrays)


Descs = dict[str, dict[str, dict[str, "_Description"]]]  # gpu -> application -> strategy -> description


@dataclass
class Scores:
    """P on each axis: aggregate (``{strategy: (P, error)}``), per space, curves and per-repeat P."""

    aggregate: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)  # axis -> strategy -> (P, e)
    per_space: dict[str, dict[str, dict[str, tuple[float, float]]]] = field(default_factory=dict)  # axis->space->s
    curves: dict[str, dict[str, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]]] = field(
        default_factory=dict)  # axis -> space -> strategy -> (x, P, lower, upper)
    per_repeat: dict[str, dict[str, dict[str, np.ndarray]]] = field(default_factory=dict)  # axis->space->s->P[r]
    aggregate_curves: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)  # axis -> strategy -> curve


def descriptions(groups: list[Any], repeats: dict[str, list[list[dict[str, Any]]]], time_keys: list[str]) -> Descs:
    """``{gpu: {application: {strategy: description}}}`` built by the package's ``write_results``."""
    from autotuning_methodology.runner import write_results

    out: Descs = {}
    for group in groups:
        sp = group.space
        desc = _Description(sp.gpu, sp.application, group.name, group.display_name, time_keys, sp.objective,
                            sp.minimization)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            write_results(repeats[group.key], desc, compressed=False)
        out.setdefault(sp.gpu, {}).setdefault(sp.application, {})[group.name] = desc
    return out


def _split(parts: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    _stop, _xr, c, lo, hi, xf, cf, lof, hif = parts
    if xf.ndim > 0:
        c, lo, hi = np.concatenate([c, cf]), np.concatenate([lo, lof]), np.concatenate([hi, hif])
    return c, lo, hi, int(_stop)


def _curve(curve: Any, axis: str, rng: np.ndarray, dist: np.ndarray,
           level: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if axis == "time":
            return _split(curve.get_curve_over_time(rng, dist=dist, confidence_level=level))
        return _split(curve.get_curve_over_fevals(rng, dist=dist, confidence_level=level))


def _one_repeat(curve: Any, r: int) -> Any:
    one = copy.copy(curve)
    one._x_fevals, one._x_time, one._y = curve._x_fevals[:, [r]], curve._x_time[:, [r]], curve._y[:, [r]]
    one._x_time_per_key, one._y_per_key = curve._x_time_per_key[:, :, [r]], curve._y_per_key[:, :, [r]]
    return one


def _time_curves(scores: Scores, agg: dict[str, Any], names: list[str], level: float) -> None:
    """Per space, the time-axis curves in ``get_strategies_aggregated_performance``'s own order (same draws)."""
    for key, (baseline, curves, stats, time_range, _) in agg.items():
        for name, curve in zip(names, curves):
            c, lo, hi, _ = _curve(curve, "time", time_range, stats.objective_performances_total_sorted, level)
            c, lo, hi = baseline.get_standardised_curves(time_range, [c, lo, hi], x_type="time")
            scores.curves.setdefault("time", {}).setdefault(key, {})[name] = (time_range, c, lo, hi)
            scores.per_space.setdefault("time", {}).setdefault(key, {})[name] = (float(np.mean(c)), float(np.std(c)))


def _fevals_curves(scores: Scores, agg: dict[str, Any], names: list[str], level: float) -> None:
    for key, (baseline, curves, stats, _, fevals_range) in agg.items():
        for name, curve in zip(names, curves):
            try:
                c, lo, hi, _ = _curve(curve, "fevals", fevals_range, stats.objective_performances_total_sorted, level)
            except (AssertionError, ValueError):  # the package's own check: runs that end before the range does
                c = lo = hi = np.full(fevals_range.shape, np.nan)
            c, lo, hi = baseline.get_standardised_curves(fevals_range, [c, lo, hi], x_type="fevals")
            scores.curves.setdefault("fevals", {}).setdefault(key, {})[name] = (fevals_range, c, lo, hi)
            scores.per_space.setdefault("fevals", {}).setdefault(key, {})[name] = (float(np.mean(c)),
                                                                                   float(np.std(c)))


def _repeat_scores(scores: Scores, agg: dict[str, Any], names: list[str], level: float) -> None:
    for key, (baseline, curves, stats, time_range, fevals_range) in agg.items():
        dist = stats.objective_performances_total_sorted
        for axis, rng in (("time", time_range), ("fevals", fevals_range)):
            for name, curve in zip(names, curves):
                ps = []
                for r in range(curve._y.shape[1]):
                    try:  # the time axis needs a level (its band is bagged); one run has no band on fevals
                        one, _, _, _ = _curve(_one_repeat(curve, r), axis, rng, dist, level if axis == "time" else None)
                    except (ValueError, AssertionError):  # one run too short for the range ("Not enough overlap",
                        # or the package's "curve shape must match the input fevals_range"): no score for it
                        ps.append(float("nan"))
                        continue
                    ps.append(float(np.mean(baseline.get_standardised_curve(rng, one, x_type=axis))))
                scores.per_repeat.setdefault(axis, {}).setdefault(key, {})[name] = np.array(ps)


def score(experiment: Any, stats: dict[str, Any], descs: Descs, per_repeat: bool = True, seed: int = 0) -> Scores:
    """P per strategy, per space and per repeat, on both axes (see the module docstring)."""
    from autotuning_methodology.report_experiments import (
        get_aggregation_data,
        get_strategies_aggregated_performance,
    )

    np.random.seed(seed)  # the time axis is bagged with NumPy's global generator (BaggingRegressor, no state)
    names = list(experiment.strategies)
    exp = {"experimental_groups_defaults": {"gpus": sorted({s.gpu for s in experiment.spaces},
                                                           key=[s.gpu for s in experiment.spaces].index),
                                            "applications_names": sorted({s.application for s in experiment.spaces},
                                                                         key=[s.application for s in
                                                                              experiment.spaces].index)}}
    ss: dict[str, dict[str, Any]] = {s.gpu: {} for s in experiment.spaces}
    for s in experiment.spaces:
        ss[s.gpu][s.application] = stats[s.key]
    strategies = [{"name": n, "display_name": experiment.display[n]} for n in names]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agg = get_aggregation_data(experiment.path.parent, exp, ss, strategies, descs, experiment.cutoff_percentile,
                                   experiment.cutoff_percentile_start, experiment.confidence_level,
                                   experiment.resolution)
        performance, _, _, _ = get_strategies_aggregated_performance(list(agg.values()), experiment.confidence_level)
    out = Scores()
    out.aggregate["time"] = {n: (float(np.mean(p)), float(np.std(p))) for n, p in zip(names, performance)}
    out.aggregate_curves["time"] = dict(zip(names, performance))
    np.random.seed(seed)  # the same draws again: the per-space curves the aggregate was made of
    _time_curves(out, agg, names, experiment.confidence_level)
    _fevals_curves(out, agg, names, experiment.confidence_level)
    if per_repeat:
        _repeat_scores(out, agg, names, experiment.confidence_level)
    grid = np.linspace(0.0, 1.0, experiment.resolution)
    out.aggregate["fevals"], out.aggregate_curves["fevals"] = {}, {}
    for n in names:
        resampled = [np.interp(grid, np.linspace(0.0, 1.0, len(v[n][1])), v[n][1]) for v in out.curves["fevals"].values()]
        mean_curve = np.mean(resampled, axis=0)
        means = [out.per_space["fevals"][k][n][0] for k in out.per_space["fevals"]]
        out.aggregate["fevals"][n] = (float(np.mean(means)), float(np.std(mean_curve)))
        out.aggregate_curves["fevals"][n] = mean_curve
    return out
