"""The performance score of Kernel Tuner's methodology (Willemsen et al. 2024), reimplemented.

Willemsen, Schoonhoven, Filipovič, Tørring, van Nieuwpoort, van Werkhoven, "A
methodology for comparing optimization algorithms for auto-tuning", FGCS 2024 (§4),
as implemented by the PyPI package ``autotuning-methodology`` 1.1.0. On one search
space (a table) with N *valid* configurations, sorted from worst to best:

1. **cutoff** (``SearchspaceStatistics.cutoff_point``): the target value is
   ``opt + (median - opt) * (1 - p)`` (p = ``CUTOFF`` = 0.95; ``START`` = 0.01 for the
   start); ``i`` is the first worst-to-best position whose value reaches the target
   (stepped back by one where that value is already the optimum) and the budget is
   ``ceil(i / (N + 1 - i))`` evaluations: the number of draws after which random search's
   expected rank reaches position ``i``;
2. **random baseline** (``RandomSearchCalculatedBaseline``, ``include_nan=False``): after
   M draws, the value at worst-to-best position ``min(N - 1, round(M (N + 1) / (M + 1)))``
   (the expected rank of the best of M draws, paper eq. 6). Invalid configurations are
   *not* in this distribution: the baseline is random search that never draws a failure.
   Their PCHIP smoothing is the identity on an integer range, so it is left out;
3. **searcher curve** over evaluations (``StochasticOptimizationAlgorithm.get_curve_over_fevals``):
   at each evaluation, each run's best-so-far value is located in the ascending valid
   distribution (``searchsorted`` left) and the curve is the value at the rounded
   *median* position over runs (runs with no valid result yet are ignored; evaluations
   where no run has one are dropped);
4. **score**: ``(curve - baseline) / (opt - baseline)`` at each evaluation of the range
   ``start..cutoff``, averaged over the range (``get_strategy_scores``: ``np.mean``).

Deviations (docs/study.md lists them with the test that checks the rest to 1e-6):
the package's reported score uses the *time* axis (isotonic regression with a bagging
ensemble, itself randomised); we use the evaluations axis, which its figures also offer.
A range starting at 0 evaluations starts at 1 here (the package's searcher curve has
no value at 0 and fails there). When start and end are closer than 2 evaluations the
package widens the range with ``min(cutoff_point(1.0)[0], end + 2)``, which compares an
objective *value* with a number of evaluations; we widen to ``min(N, end + 2)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CUTOFF = 0.95  # the package's default statistics_settings.cutoff_percentile
START = 0.01  # ... and cutoff_percentile_start


@dataclass(frozen=True)
class ScoreRange:
    start: int  # first evaluation count of the range (>= 1)
    end: int  # last (inclusive): random search's expected best reaches the cutoff here
    target: float  # objective value at the cutoff
    clipped_from: int | None = None  # the methodology's own end, where the runs' budget cut the range short

    def text(self) -> str:
        """``2-100``, or ``2-100 (clipped from 2-1050)`` where the runs' budget cut the range short."""
        own = f"{self.start}-{self.end}"
        return own if self.clipped_from is None else f"{own} (clipped from {self.start}-{self.clipped_from})"


def _valid_sorted(values: np.ndarray) -> np.ndarray:
    data = np.asarray(values, dtype=float)
    data = np.sort(data[np.isfinite(data)])
    if data.size < 2:
        raise ValueError(f"the methodology needs at least 2 valid configurations, got {data.size}")
    return data


def cutoff_point(values: np.ndarray, minimize: bool, percentile: float) -> tuple[float, int]:
    """(objective value at the cutoff, evaluations to reach it): ``SearchspaceStatistics.cutoff_point``."""
    ascending = _valid_sorted(values)
    optimum = float(ascending[0] if minimize else ascending[-1])
    target = optimum + (float(np.median(ascending)) - optimum) * (1.0 - percentile)
    worst_first = ascending[::-1] if minimize else ascending
    reached = worst_first <= target if minimize else worst_first >= target
    i = int(np.argmax(reached))
    if percentile != 1.0 and worst_first[i] == optimum:
        if i == 0:
            raise ValueError(f"the optimum is reached directly ({worst_first[i]}): no cutoff range")
        i -= 1
    n = worst_first.size
    return target, math.ceil(i / (n + 1 - i))


def score_range(values: np.ndarray, minimize: bool, cutoff: float = CUTOFF, start: float = START) -> ScoreRange:
    """The evaluations the score averages over (``cutoff_point_fevals_time_start_end``, fevals part)."""
    n = _valid_sorted(values).size
    _, first = cutoff_point(values, minimize, start)
    target, last = cutoff_point(values, minimize, cutoff)
    if last - first < 2:  # the package's safety margin (its upper bound is a bug; module docstring)
        if first == 0:
            last = min(n, last + 2)
        else:
            last, first = min(n, last + 1), first - 1
    return ScoreRange(max(1, first), max(last, max(1, first) + 1), target)


def random_curve(values: np.ndarray, minimize: bool, evaluations: np.ndarray) -> np.ndarray:
    """The calculated random-search baseline at each evaluation count (paper eq. 6, rank approximation)."""
    ascending = _valid_sorted(values)
    worst_first = ascending[::-1] if minimize else ascending
    n = worst_first.size
    index = [min(n - 1, round(m * (n + 1) / (m + 1))) for m in np.asarray(evaluations, dtype=int)]
    return worst_first[index]


def searcher_curve(values: np.ndarray, best: np.ndarray, evaluations: np.ndarray) -> np.ndarray:
    """Median-rank curve of runs (rows of ``best``: best-so-far objective per evaluation, NaN before the first
    valid result) at each evaluation count, as the package computes it on the evaluations axis.

    Runs shorter than the range carry their last value (the package keeps the real part and
    repeats the last value for a range beyond every run).
    """
    ascending = _valid_sorted(values)
    best = np.asarray(best, dtype=float)
    columns = np.asarray(evaluations, dtype=int) - 1
    if columns.min() < 0:
        raise ValueError("evaluation counts start at 1")
    columns = np.minimum(columns, best.shape[1] - 1)
    at = best[:, columns]
    positions = np.where(np.isnan(at), np.nan, np.searchsorted(ascending, np.nan_to_num(at, nan=0.0), side="left"))
    positions[positions >= ascending.size] = np.nan
    curve = np.full(columns.size, np.nan)
    some = ~np.isnan(positions).all(axis=0)
    if not some.any():
        raise ValueError("no run has a valid result in the score's range")
    with np.errstate(all="ignore"):
        medians = np.nanmedian(positions[:, some], axis=0)
    curve[some] = ascending[np.round(medians).astype(int)]
    # evaluations where no run has a valid result are dropped by the package and padded back with the
    # next available value; only leading ones can occur (best-so-far never loses a value)
    first = int(np.argmax(some))
    curve[:first] = curve[first]
    return curve


def clip(rng: ScoreRange, budget: int | None) -> ScoreRange:
    """The range cut at the runs' budget, never run past it unnoticed (issue 45): a range ending beyond the budget
    would score evaluations no run made (the package carries each run's last best there). Refused, naming the
    budget needed, when the budget ends before the range has two evaluations."""
    if budget is None or budget >= rng.end:
        return rng
    if budget < rng.start + 1:
        raise ValueError(f"the runs' budget of {budget} evaluations ends before the score's range "
                         f"{rng.start}-{rng.end} has two evaluations: run at least {rng.end} evaluations")
    return ScoreRange(rng.start, int(budget), rng.target, clipped_from=rng.end)


def methodology_score(values: np.ndarray, minimize: bool, best: np.ndarray, *, cutoff: float = CUTOFF,
                      start: float = START, budget: int | None = None) -> tuple[float, np.ndarray, ScoreRange]:
    """(score, standardised curve, range) of one searcher's runs on one table (module docstring).

    ``values``: the table's objective per configuration (NaN / inf for invalid ones);
    ``best``: runs x evaluations best-so-far objective values (NaN before a run's first valid one);
    ``budget``: the runs' budget; a range ending past it is clipped to it (:func:`clip`; ``rng.clipped_from``).
    """
    ascending = _valid_sorted(values)
    optimum = float(ascending[0] if minimize else ascending[-1])
    rng = clip(score_range(values, minimize, cutoff, start), budget)
    evaluations = np.arange(rng.start, rng.end + 1)
    baseline = random_curve(values, minimize, evaluations)
    division = optimum - baseline
    if np.any(division == 0.0):
        raise ValueError("the random baseline reaches the optimum inside the range: the score divides by zero")
    curve = (searcher_curve(values, best, evaluations) - baseline) / division
    return float(np.mean(curve)), curve, rng
