"""The study's metrics, as small pure functions on numpy arrays (tested against hand-computed cases).

Conventions, defined once:

- **loss** (:func:`searchlab.core.records.loss`): the objective if minimised, its negation if
  maximised; ``+inf`` for a failed evaluation or a sub-problem measurement, which
  therefore never counts as a best.
- **best so far** after ``n`` evaluations: the smallest loss among the first ``n``
  evaluations in recorded order. A run that stopped early (exhausted, target) keeps its
  final best for larger ``n``.
- **fraction of peak** (performance ratio, paper 001 §8.2 "fraction of peak
  performance"): for a minimised objective ``optimum / value``; for a maximised one
  ``value / optimum``; 1.0 at the reference, smaller is worse, and 0.0 while a run has
  no successful evaluation. It needs positive values (run times, throughputs); otherwise
  it is NaN. The *reference* (``optimum``) is chosen per problem instance (see
  ``_aggregate.py``): a replayed table's optimum, else the problem's ``known_optimum``,
  else the best value seen in the study.
- **percentiles**: numpy's default linear interpolation (Hyndman & Fan type 7). For
  "evaluations to reach a level", a run that never reached it counts as ``+inf``
  (censored): a percentile whose interpolation touches ``+inf`` is ``+inf`` ("not
  reached"), so censoring is never hidden by averaging.
- **random-normalised score** (Willemsen, Schoonhoven, Filipovič, Tørring, van
  Nieuwpoort, van Werkhoven, "A methodology for comparing optimization algorithms for
  auto-tuning", FGCS 2024 -- Kernel Tuner's methodology, building on Schoonhoven et al.,
  IEEE TEVC 2022; reference implementation ``autotuning_methodology/baseline.py``):
  ``(S - R) / (opt - R)`` at each budget, where ``S`` is the searcher's mean best-so-far,
  ``R`` the expected best-so-far of random search without replacement at the same budget,
  and ``opt`` the optimum: 0 = as good as random, 1 = the optimum every time, negative =
  worse than random. ``R`` is computed *exactly* from a table (the expected minimum of
  ``n`` draws without replacement, :func:`expected_random_best`, over every member the
  known constraints allow, failures included -- the population ``random`` samples; the
  methodology's calculated baseline instead leaves failures out and approximates by the
  expected rank, see ``_methodology.py`` and docs/study.md), or, without a table,
  estimated by the study's own ``random`` runs. The aggregate score is the mean of the
  curve over the budget (the methodology averages the standardised curve over its range).
  In ``S`` and ``R`` a run with no successful evaluation yet counts the instance's worst
  successful value, so both sides treat failures alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from searchlab.core.records import Direction

LEVELS = (0.5, 0.7, 0.9, 0.95)
CURVE_PERCENTILES = (10.0, 90.0)  # paper 001 Fig. 11: mean with 10th/90th percentiles
LEVEL_PERCENTILES = (30.0, 50.0, 70.0)  # paper 001 Fig. 12: 30th, median, 70th
OPTIMUM_TOLERANCE = 1e-9  # relative: "reached the optimum" is fraction >= 1 - this


def best_so_far(losses: np.ndarray) -> np.ndarray:
    """Running minimum of the losses (``+inf`` until the first success)."""
    losses = np.asarray(losses, dtype=float)
    return np.minimum.accumulate(losses) if losses.size else losses


def extend(curve: np.ndarray, length: int) -> np.ndarray:
    """``curve`` carried forward with its last value to ``length`` points (a run that stopped keeps its best)."""
    curve = np.asarray(curve, dtype=float)
    if curve.size >= length:
        return curve[:length]
    fill = curve[-1] if curve.size else np.inf
    return np.concatenate([curve, np.full(length - curve.size, fill)])


def fraction_of_peak(losses: np.ndarray, reference_loss: float, direction: Direction) -> np.ndarray:
    """Performance ratio of each loss against the reference (module docstring); 0 for ``+inf``."""
    losses = np.asarray(losses, dtype=float)
    sign = 1.0 if Direction(direction) is Direction.MINIMIZE else -1.0
    values, reference = sign * losses, sign * reference_loss
    out = np.zeros_like(losses)
    finite = np.isfinite(losses)
    if not (reference > 0 and math.isfinite(reference)) or np.any(values[finite] <= 0):
        out[finite] = np.nan
        return out
    out[finite] = reference / values[finite] if sign > 0 else values[finite] / reference
    return out


def percentile(values: Sequence[float] | np.ndarray, q: float) -> float:
    """Linear-interpolated percentile where ``+inf`` marks a censored value (module docstring)."""
    data = np.sort(np.asarray(values, dtype=float))
    if data.size == 0:
        return math.nan
    h = (data.size - 1) * q / 100.0
    lo, hi = math.floor(h), math.ceil(h)
    if math.isinf(data[hi]) or math.isinf(data[lo]):
        return math.inf
    return float(data[lo] + (h - lo) * (data[hi] - data[lo]))


def evaluations_to_level(fractions: np.ndarray, level: float) -> float:
    """1-based number of evaluations after which the best-so-far fraction first reaches ``level``; inf if never."""
    hits = np.flatnonzero(np.asarray(fractions, dtype=float) >= level - 1e-12)
    return float(hits[0] + 1) if hits.size else math.inf


def success_rate(final_fractions: Sequence[float] | np.ndarray, level: float = 1.0) -> float:
    """Share of runs whose final fraction reached ``level`` (1.0: the optimum, within OPTIMUM_TOLERANCE)."""
    data = np.asarray(final_fractions, dtype=float)
    if data.size == 0:
        return math.nan
    threshold = level - OPTIMUM_TOLERANCE if level >= 1.0 else level - 1e-12
    return float(np.mean(data >= threshold))


def failure_shares(modes: Sequence[str]) -> dict[str, float]:
    """Share of all evaluations that failed, per failure mode ("none" = success is left out)."""
    total = len(modes)
    if total == 0:
        return {}
    counts: dict[str, int] = {}
    for mode in modes:
        if mode != "none":
            counts[mode] = counts.get(mode, 0) + 1
    return {mode: n / total for mode, n in sorted(counts.items())}


def floor_failures(best: np.ndarray, worst_loss: float) -> np.ndarray:
    """Best-so-far losses with "nothing successful yet" (+inf) replaced by the worst successful loss."""
    best = np.asarray(best, dtype=float)
    return np.where(np.isinf(best), worst_loss, best)


def expected_random_best(losses: Sequence[float] | np.ndarray, budget: int) -> np.ndarray:
    """E[best loss of n draws without replacement from ``losses``] for n = 1..budget (exact).

    With the N losses sorted ascending (d_1 <= ... <= d_N), the best of n draws is above d_i
    exactly when all n draws are among the N - i largest, so E[best] = d_1 + sum_i
    (d_{i+1} - d_i) q_n(i) with q_n(i) = C(N-i, n) / C(N, n), and q_n(i) = q_{n-1}(i) (N-i-n+1) /
    (N-n+1): one vector update per n, not a sum of binomials per member (the report built this
    for every table: a second per study). Failed members (+inf) take the worst successful loss
    (the convention of :func:`floor_failures`). Beyond n = N every member has been drawn.
    """
    data = np.sort(np.asarray(losses, dtype=float))
    finite = data[np.isfinite(data)]
    if finite.size == 0:
        return np.full(budget, math.nan)
    data = np.where(np.isinf(data), finite.max(), data)
    n_all = data.size
    steps = np.diff(data)  # d_{i+1} - d_i for i = 1..N-1
    above = n_all - np.arange(1, n_all, dtype=float)  # N - i: members ranked below the i-th
    q = np.ones(n_all - 1)
    out = np.empty(budget)
    for n in range(1, budget + 1):
        if n >= n_all:
            out[n - 1] = data[0]
            continue
        q *= np.clip(above - (n - 1), 0.0, None) / (n_all - (n - 1))
        out[n - 1] = data[0] + float(steps @ q)
    return out


def random_normalised_score(mean_best: np.ndarray, random_best: np.ndarray, optimum_loss: float) -> np.ndarray:
    """``(S - R) / (opt - R)`` per budget point; NaN where ``R`` already equals the optimum."""
    s, r = np.asarray(mean_best, dtype=float), np.asarray(random_best, dtype=float)
    denominator = optimum_loss - r
    out = np.full(s.shape, np.nan)
    ok = np.isfinite(denominator) & (np.abs(denominator) > 1e-12 * max(1.0, abs(optimum_loss))) & np.isfinite(s)
    out[ok] = (s[ok] - r[ok]) / denominator[ok]
    return out


def best_at_times(cum_time: np.ndarray, best: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Best-so-far loss at each grid time: the best among evaluations finished by then (+inf before the first)."""
    index = np.searchsorted(np.asarray(cum_time, dtype=float), np.asarray(grid, dtype=float), side="right") - 1
    best = np.asarray(best, dtype=float)
    out = np.full(len(grid), np.inf)
    done = index >= 0
    out[done] = best[index[done]]
    return out


def band(curves: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and the 10th/90th percentiles across runs (rows) at each point (paper 001 Fig. 11)."""
    curves = np.asarray(curves, dtype=float)
    lo, hi = (np.percentile(curves, q, axis=0) for q in CURVE_PERCENTILES)
    return curves.mean(axis=0), lo, hi
