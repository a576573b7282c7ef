"""What the package's P leaves out: how much it moves from repeat to repeat (issue 51, item 4).

The package's "error" next to P is the spread of the standardised curve along the cutoff range, not a sampling
interval: at 5-10 repeats, independent runs of the same strategy differ by more than it. So beside it stands a
statistic over repeats: **per-repeat P**, each repeat's own best-so-far curve standardised by the same baseline and
averaged over the same range, with a 95 % percentile-bootstrap interval of its mean over repeats (the study's bootstrap).

A repeat's curve is exact, not bagged: on the evaluations axis, its best value after each number of evaluations of
the range; on the time axis, its best value found within each time of a grid of ``min(resolution, 1000)`` points
over the range (the package's own curve is a median over repeats smoothed by bagged isotonic fits). Before a
repeat's first valid result its best is the space's worst value; past its last result it keeps its last best.
The mean over repeats of per-repeat P is not the package's P (a median curve's mean); both are reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["RepeatScores", "bootstrap", "repeat_scores"]

GRID = 1000


@dataclass
class RepeatScores:
    per_repeat: dict[str, dict[str, dict[str, np.ndarray]]] = field(default_factory=dict)  # axis -> space -> name -> P[r]


def _best(desc: Any, worst: float) -> np.ndarray:
    """Best-so-far per evaluation and repeat (the package's array), the worst value before the first valid one."""
    best = np.array(desc.arrays["objective_performance_best_results"], dtype=float)
    fevals = np.array(desc.arrays["fevals_results"], dtype=float)
    for r in range(best.shape[1]):
        column, done = best[:, r], ~np.isnan(fevals[:, r])
        valid = np.nonzero(~np.isnan(column))[0]
        if len(valid) == 0:
            column[:] = worst
            continue
        column[:valid[0]] = worst
        filled = np.maximum.accumulate(np.where(np.isnan(column), 0, np.arange(len(column))))
        column[:] = column[filled]
        column[~done] = column[done][-1] if done.any() else worst
    return best


def _over_fevals(best: np.ndarray, fevals_range: np.ndarray) -> np.ndarray:
    idx = np.clip(fevals_range.astype(int) - 1, 0, best.shape[0] - 1)
    return best[idx, :]


def _over_time(best: np.ndarray, times: np.ndarray, grid: np.ndarray, worst: float) -> np.ndarray:
    out = np.full((len(grid), best.shape[1]), worst)
    for r in range(best.shape[1]):
        t = times[:, r]
        ok = ~np.isnan(t)
        if not ok.any():
            continue
        at = np.searchsorted(t[ok], grid, side="right") - 1  # the last evaluation done by each grid time
        values = best[ok, r]
        out[:, r] = np.where(at >= 0, values[np.clip(at, 0, None)], worst)
    return out


def repeat_scores(experiment: Any, stats: dict[str, Any], descs: Any, ranges: dict[str, Any]) -> RepeatScores:
    from searchlab.reproduce.fastcurve import FastBaseline

    out = RepeatScores()
    for sp in experiment.spaces:
        st = stats[sp.key]
        dist = st.objective_performances_total_sorted
        worst = float(dist[-1] if sp.minimization else dist[0])
        baseline = FastBaseline(st)
        fevals_range, time_range = ranges[sp.key]
        grid = np.linspace(time_range[0], time_range[-1], min(len(time_range), GRID))
        base_f = baseline.get_curve(fevals_range, "fevals")
        base_t = baseline.get_curve(grid, "time")
        optimum = st.total_performance_absolute_optimum()
        for name in experiment.strategies:
            desc = descs[sp.gpu][sp.application][name]
            best = _best(desc, worst)
            times = np.array(desc.arrays["objective_time_results"], dtype=float)
            for axis, curves, base in (("fevals", _over_fevals(best, fevals_range), base_f),
                                       ("time", _over_time(best, times, grid, worst), base_t)):
                with np.errstate(divide="ignore", invalid="ignore"):
                    std = (curves - base[:, None]) / (optimum - base[:, None])
                out.per_repeat.setdefault(axis, {}).setdefault(sp.key, {})[name] = np.mean(std, axis=0)
    return out


def bootstrap(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the study's percentile bootstrap of the mean over ``values`` (repeats resampled whole,
    2000 resamples, its fixed seed; :func:`searchlab.study.analysis.stats.bootstrap_band`)."""
    from searchlab.study.analysis.stats import bootstrap_band

    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return float("nan"), float("nan"), float("nan")
    mean, lo, hi = bootstrap_band(values[:, None], level=level)
    return float(mean[0]), float(lo[0]), float(hi[0])
