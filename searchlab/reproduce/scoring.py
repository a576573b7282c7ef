"""The performance score P, computed by the ``autotuning_methodology`` package's own functions.

The stored repeats become the package's arrays through its own ``runner.write_results`` (into a results
description held in memory instead of an ``.npz``); per space, the random-search baseline
(``RandomSearchCalculatedBaseline``), the cutoff ranges (``cutoff_point_fevals_time_start_end``) and the strategies'
curves (``StochasticOptimizationAlgorithm``) are what ``report_experiments.get_aggregation_data`` makes.

- **Time axis**: what ``get_strategy_scores`` returns, unrounded (it rounds to 3 decimals). Its curve is bagged
  with NumPy's global generator, and ``get_strategy_scores`` passes *every experimental group* (GPU x application
  x strategy) as a strategy, so for each space it draws a curve for every group, and of several groups with one
  strategy name keeps the last. That order is emulated exactly: the generator is seeded (``seed``, 0 by default),
  walked through every group's draws in the package's order, and the curve the package keeps is computed from the
  generator's state at its place (:class:`searchlab.reproduce.fastcurve.SeededCurve`). The others' draws are
  taken without computing their curves (the package computes and discards them). So
  ``np.random.seed(0); get_strategy_scores(DIR/methodology/experiment.json)`` gives these numbers, rounded.
  The kept curves are independent given their states (:mod:`searchlab.reproduce.curvetask`), so ``mapper``
  may compute them in parallel.
- **Evaluations axis**, which the package scores only in its plots: the same steps with ``get_curve_over_fevals``
  on the fevals range; the ranges differ per space, so the aggregate P is the mean over spaces of each space's mean
  and its error the ``np.std`` of the spaces' curves resampled to ``resolution`` points and averaged.

A curve the package cannot compute (its "Not enough overlap" or stopping-point checks) is left out, with the
reason in :attr:`Scores.errors`, never a NaN score.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from searchlab.reproduce.arrays import Description, split_curve

__all__ = ["Scores", "descriptions", "score"]

PLOT_POINTS = 2000  # per-space curves are kept at this many points for figures (scores use every point)


Descs = dict[str, dict[str, dict[str, Description]]]  # gpu -> application -> strategy -> description
Mapper = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]  # curve tasks -> their results, in order


@dataclass(frozen=True)
class Curve:
    """One strategy's curve on one space, thinned to :data:`PLOT_POINTS` for figures: P (standardised) and the
    objective (``raw``) with the package's band, and where the real runs end (a fraction of the range)."""

    x: np.ndarray
    p: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    raw: np.ndarray
    raw_lo: np.ndarray
    raw_hi: np.ndarray
    stop: float


@dataclass
class Scores:
    """P on each axis: aggregate (``{strategy: (P, error)}``), per space, curves, and what could not be scored."""

    aggregate: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    per_space: dict[str, dict[str, dict[str, tuple[float, float]]]] = field(default_factory=dict)
    curves: dict[str, dict[str, dict[str, Curve]]] = field(default_factory=dict)  # axis -> space -> strategy
    aggregate_curves: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    errors: dict[str, dict[str, str]] = field(default_factory=dict)  # axis -> strategy -> why it has no score
    ranges: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # space -> (fevals, time) ranges


def descriptions(groups: Iterable[Any], repeats: dict[str, list[dict[str, Any]]], time_keys: list[str]) -> Descs:
    """``{gpu: {application: {strategy: description}}}`` holding the arrays ``write_results`` would write
    (:func:`searchlab.reproduce.arrays.write_arrays`, bit for bit)."""
    from searchlab.reproduce.arrays import write_arrays

    out: Descs = {}
    for group in groups:
        sp = group.space
        desc = Description(sp.gpu, sp.application, group.name, group.display_name, time_keys, sp.objective,
                            sp.minimization)
        desc.set_results(write_arrays(repeats[group.key], sp.minimization))
        out.setdefault(sp.gpu, {}).setdefault(sp.application, {})[group.name] = desc
    return out


def _thin(x: np.ndarray, *ys: np.ndarray) -> tuple[np.ndarray, ...]:
    if len(x) <= PLOT_POINTS:
        return (x, *ys)
    idx = np.unique(np.linspace(0, len(x) - 1, PLOT_POINTS).round().astype(int))
    return (x[idx], *(y[idx] for y in ys))


def _curve(x: np.ndarray, *ys_and_stop: Any) -> Curve:
    *ys, stop = ys_and_stop
    thin = _thin(x, *ys)
    return Curve(thin[0], thin[1], thin[2], thin[3], thin[4], thin[5], thin[6], float(stop))


def _ranges(experiment: Any, stats: Any) -> tuple[np.ndarray, np.ndarray]:
    """As ``get_aggregation_data`` sets them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f0, f1, t0, t1 = stats.cutoff_point_fevals_time_start_end(experiment.cutoff_percentile_start,
                                                                  experiment.cutoff_percentile)
    fevals: np.ndarray = np.arange(f0, f1 + 1)
    return fevals, np.linspace(start=t0, stop=t1, num=experiment.resolution)


def run_tasks(tasks: list[dict[str, Any]], quiet: bool = True) -> list[dict[str, Any]]:
    """The default mapper: every curve task in this process, in order (a progress line at least every 10 s)."""
    from searchlab.reproduce.curvetask import run_task
    from searchlab.reproduce.progress import Progress

    progress = Progress(len(tasks), 0, quiet, what="time-axis curves computed")
    progress.start("in this process")
    out = []
    for task in tasks:
        out.append(run_task(task))
        progress.done += 1
        progress.ran += 1
        progress.tick()
    return out


def _time_axis(experiment: Any, stats: dict[str, Any], descs: Descs, out: Scores, seed: int, mapper: Mapper) -> None:
    from sklearn.ensemble._bagging import MAX_INT

    from searchlab.reproduce.fastcurve import FastBaseline, bagging_estimators

    order = [g.name for g in experiment.groups]
    last = {name: i for i, name in enumerate(order)}
    np.random.seed(seed)
    tasks, where = [], []
    for sp in experiment.spaces:
        _, time_range = out.ranges[sp.key]
        st = stats[sp.key]
        random = FastBaseline(st).get_curve(time_range, "time")  # once per space (module docstring)
        for i, name in enumerate(order):
            desc = descs[sp.gpu][sp.application][name]
            if last[name] == i:
                tasks.append({"arrays": desc.arrays, "dist": st.objective_performances_total_sorted,
                              "time_range": time_range, "random": random,
                              "optimum": st.total_performance_absolute_optimum(), "level": experiment.confidence_level,
                              "minimization": sp.minimization, "state": np.random.get_state()})
                where.append((sp.key, name))
            np.random.randint(MAX_INT, size=bagging_estimators(desc.arrays["fevals_results"].shape[1]))
    kept: dict[str, list[np.ndarray]] = {}
    for (key, name), result in zip(where, mapper(tasks)):
        if "error" in result:
            out.errors.setdefault("time", {})[name] = f"{key}: {result['error']}"
            continue
        curve = result["curve"]
        out.curves.setdefault("time", {}).setdefault(key, {})[name] = _curve(
            out.ranges[key][1], curve, result["lo"], result["hi"], result["raw"], result["raw_lo"], result["raw_hi"],
            result["stop"])
        out.per_space.setdefault("time", {}).setdefault(key, {})[name] = (float(np.mean(curve)), float(np.std(curve)))
        kept.setdefault(name, []).append(curve)
    out.aggregate["time"], out.aggregate_curves["time"] = {}, {}
    for name in experiment.strategies:
        if name in out.errors.get("time", {}) or len(kept.get(name, [])) != len(experiment.spaces):
            continue
        performance = np.mean(np.array(kept[name]), axis=0)  # get_strategies_aggregated_performance
        out.aggregate["time"][name] = (float(np.mean(performance)), float(np.std(performance)))
        out.aggregate_curves["time"][name] = performance


def _fevals_axis(experiment: Any, stats: dict[str, Any], descs: Descs, out: Scores) -> None:
    from searchlab.reproduce.fastcurve import FastBaseline, SeededCurve

    fevals_full: dict[str, list[np.ndarray]] = {}
    for sp in experiment.spaces:
        fevals_range, _ = out.ranges[sp.key]
        baseline = FastBaseline(stats[sp.key])
        for name in experiment.strategies:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    parts = SeededCurve(descs[sp.gpu][sp.application][name]).get_curve_over_fevals(
                        fevals_range, dist=stats[sp.key].objective_performances_total_sorted,
                        confidence_level=experiment.confidence_level)
                    stop, raw, raw_lo, raw_hi = split_curve(parts)
                    c, lo, hi = baseline.get_standardised_curves(fevals_range, [raw, raw_lo, raw_hi], x_type="fevals")
            except (ValueError, AssertionError) as exc:
                out.errors.setdefault("fevals", {})[name] = f"{sp.key}: {type(exc).__name__}: {str(exc)[:200]}"
                continue
            out.curves.setdefault("fevals", {}).setdefault(sp.key, {})[name] = _curve(
                fevals_range, c, lo, hi, raw, raw_lo, raw_hi, stop / len(fevals_range))
            out.per_space.setdefault("fevals", {}).setdefault(sp.key, {})[name] = (float(np.mean(c)), float(np.std(c)))
            fevals_full.setdefault(name, []).append(c)
    grid = np.linspace(0.0, 1.0, min(experiment.resolution, 10_000))
    out.aggregate["fevals"], out.aggregate_curves["fevals"] = {}, {}
    for name in experiment.strategies:
        curves = fevals_full.get(name, [])
        if name in out.errors.get("fevals", {}) or len(curves) != len(experiment.spaces):
            continue
        mean_curve = np.mean([np.interp(grid, np.linspace(0.0, 1.0, len(c)), c) for c in curves], axis=0)
        means = [out.per_space["fevals"][sp.key][name][0] for sp in experiment.spaces]
        out.aggregate["fevals"][name] = (float(np.mean(means)), float(np.std(mean_curve)))
        out.aggregate_curves["fevals"][name] = mean_curve


def score(experiment: Any, stats: dict[str, Any], descs: Descs, seed: int = 0, mapper: Mapper | None = None) -> Scores:
    """P per strategy and per space on both axes (module docstring); ``stats`` maps ``space.key`` to the package's
    ``SearchspaceStatistics``."""
    out = Scores()
    for sp in experiment.spaces:
        out.ranges[sp.key] = _ranges(experiment, stats[sp.key])
    _time_axis(experiment, stats, descs, out, seed, mapper or run_tasks)
    _fevals_axis(experiment, stats, descs, out)
    return out
