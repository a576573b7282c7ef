"""Statistics that say whether a difference between searchers is real (issue 11, part 4).

Two tools, both seeded or exact, both tested against hand-computed cases:

- **bootstrap confidence bands** for anytime curves: at each point, the percentile
  bootstrap interval of the *mean* best-so-far over runs (seeds). Runs are resampled
  whole, so one resample keeps each run's curve intact (the curve's points are not
  independent). ``BAND_LEVEL`` is printed in every figure that draws a band.
- **paired comparisons** of two searchers on the same (problem instance, seed) pairs:
  Wilcoxon signed-rank test (scipy, two-sided; zero differences dropped, Wilcoxon's
  original convention) with the matched-pairs rank-biserial correlation as the effect
  size (Kerby 2014: ``r = (R+ - R-) / (R+ + R-)`` over the ranks of the non-zero |d|,
  positive when A is better) and Holm's step-down correction over every pair of a table.
  A pair is reported as "A beats B" only when its Holm-adjusted p < ``ALPHA``;
  otherwise "no difference".

Why paired and rank-based: a seed fixes the same replay table and the same random
stream per problem, and searchers' scores are bounded, skewed and tied at the optimum,
so a paired t-test's normality is not credible. Pooling pairs across problems (each
normalised to its own optimum) is what paper 001 §8.2 does for its averaged curves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
BAND_LEVEL = 0.95
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20241  # fixed: a report is reproducible; `bootstrap_band(seed=...)` takes another


def bootstrap_band(curves: np.ndarray, *, level: float = BAND_LEVEL, resamples: int = BOOTSTRAP_RESAMPLES,
                   seed: int = BOOTSTRAP_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean curve over runs (rows) and the percentile-bootstrap ``level`` interval of that mean.

    Each resample draws ``runs`` rows with replacement (multinomial counts, so the work is
    one matrix product); the band is the (1-level)/2 and (1+level)/2 quantiles (numpy's
    linear interpolation) of the resampled means at each point. One run: a zero-width band.
    """
    curves = np.asarray(curves, dtype=float)
    if curves.ndim != 2 or curves.shape[0] == 0:
        raise ValueError(f"bootstrap_band needs a runs x points array, got shape {curves.shape}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level={level}: must be in (0, 1)")
    runs = curves.shape[0]
    mean = curves.mean(axis=0)
    if runs == 1:
        return mean, mean.copy(), mean.copy()
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(runs, np.full(runs, 1.0 / runs), size=resamples) / runs  # resamples x runs
    finite = np.isfinite(curves)
    means = weights @ np.where(finite, curves, 0.0)
    if not finite.all():  # a NaN or inf in a run makes every resample that draws it NaN / inf, as the mean would be
        means = np.where(weights @ (~finite).astype(float) > 0, np.nan, means)
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [tail, 1.0 - tail], axis=0)
    return mean, lo, hi


def average_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """1-based ranks with ties sharing their average rank (scipy's ``rankdata(method="average")``).

    numpy, so that a study report does not import ``scipy.stats`` (seconds on a loaded machine)
    unless a comparison has more than ``EXACT_MAX_PAIRS`` pairs."""
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    starts = np.r_[0, np.flatnonzero(np.diff(ordered) != 0) + 1]
    ends = np.r_[starts[1:], x.size]
    ranks = np.empty(x.size)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def rank_biserial(differences: Sequence[float] | np.ndarray) -> float:
    """Matched-pairs rank-biserial correlation of paired differences (A - B, positive = A better).

    Ranks of |d| over the non-zero differences (average ranks for ties); ``(R+ - R-) / (R+ + R-)``.
    1: A better in every pair that differs; 0: no pair differs, or the ranks balance.
    """
    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    if d.size == 0:
        return 0.0
    ranks = average_ranks(np.abs(d))
    plus, minus = float(ranks[d > 0].sum()), float(ranks[d < 0].sum())
    return (plus - minus) / (plus + minus)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (NaN stays NaN and does not count toward m)."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    valid = np.flatnonzero(np.isfinite(p))
    m = valid.size
    running = 0.0
    for rank, i in enumerate(valid[np.argsort(p[valid], kind="stable")]):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return [float(v) for v in out]


@dataclass(frozen=True)
class Comparison:
    """One paired comparison of searchers ``a`` and ``b`` on one metric (higher is better)."""

    scope: str  # a problem, or "(all problems)"
    metric: str  # auc | final
    a: str
    b: str
    pairs: int  # (instance, seed) pairs where both have a value
    a_better: int
    b_better: int
    ties: int
    mean_difference: float  # mean of (a - b)
    statistic: float  # Wilcoxon's W (scipy: the smaller of R+ and R-); NaN when no pair differs
    p_value: float  # two-sided, before correction
    p_holm: float  # Holm-adjusted over the table (scope x metric)
    effect: float  # matched-pairs rank-biserial correlation, positive = a better

    @property
    def verdict(self) -> str:
        if not (self.p_holm < ALPHA):
            return "no difference"
        return f"{self.a} beats {self.b}" if self.effect > 0 else f"{self.b} beats {self.a}"

    def as_row(self) -> dict[str, object]:
        return {"scope": self.scope, "metric": self.metric, "a": self.a, "b": self.b, "pairs": self.pairs,
                "a_better": self.a_better, "b_better": self.b_better, "ties": self.ties,
                "mean_difference": self.mean_difference, "wilcoxon_W": self.statistic, "p_value": self.p_value,
                "p_holm": self.p_holm, "rank_biserial": self.effect, "verdict": self.verdict}


EXACT_MAX_PAIRS = 60  # above: the normal approximation


def _exact_two_sided(ranks: np.ndarray, r_plus: float) -> float:
    """Two-sided p of R+ under the null (each non-zero difference's sign a fair coin), exact given the
    (possibly tied, so half-integer) ranks: the distribution of the sum of doubled ranks, by dynamic
    programming -- what scipy does by enumerating permutations, deterministic and in O(n^3)."""
    doubled = np.rint(2 * ranks).astype(int)
    dist = np.zeros(int(doubled.sum()) + 1)
    dist[0] = 1.0
    for r in doubled:
        shifted = np.zeros_like(dist)
        shifted[r:] = dist[:-r] if r else dist
        dist = 0.5 * (dist + shifted)
    t = round(2 * r_plus)
    return float(min(1.0, 2.0 * min(dist[: t + 1].sum(), dist[t:].sum())))


def wilcoxon_pair(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """(W, two-sided p) of the Wilcoxon signed-rank test on paired values; (NaN, 1.0) when no pair differs.

    Zero differences are dropped (Wilcoxon's convention, scipy's ``zero_method="wilcox"``);
    W = min(R+, R-) as scipy reports it. Up to ``EXACT_MAX_PAIRS`` non-zero differences the p-value
    is exact, ties included (scipy's ``method="auto"`` falls back to a *random* permutation test
    with ties, which would make a report irreproducible and took seconds); above, scipy's normal
    approximation with its tie correction.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d = d[d != 0]
    if d.size == 0:
        return math.nan, 1.0
    ranks = average_ranks(np.abs(d))
    r_plus = float(ranks[d > 0].sum())
    statistic = min(r_plus, float(ranks.sum()) - r_plus)
    if d.size <= EXACT_MAX_PAIRS:
        return statistic, _exact_two_sided(ranks, r_plus)
    from scipy.stats import wilcoxon

    result = wilcoxon(d, zero_method="wilcox", alternative="two-sided", method="approx", correction=False)
    return statistic, float(result.pvalue)


def compare_all(scope: str, metric: str, values: Mapping[str, Mapping[tuple[object, ...], float]]) -> list[Comparison]:
    """Every pair of searchers (label order) on the keys both have a finite value for; Holm over the pairs.

    ``values[searcher][(instance, seed)]`` is the metric of that run (higher is better).
    """
    labels = sorted(values)
    raw: list[tuple[str, str, np.ndarray, float, float]] = []
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            keys = [k for k in values[a] if k in values[b]
                    and math.isfinite(values[a][k]) and math.isfinite(values[b][k])]
            d = np.array([values[a][k] - values[b][k] for k in sorted(keys, key=repr)], dtype=float)
            w, p = wilcoxon_pair(d, np.zeros_like(d)) if d.size else (math.nan, math.nan)
            raw.append((a, b, d, w, p))
    adjusted = holm([p for *_, p in raw])
    return [Comparison(scope, metric, a, b, int(d.size), int((d > 0).sum()), int((d < 0).sum()),
                       int((d == 0).sum()), float(d.mean()) if d.size else math.nan, w, p, padj,
                       rank_biserial(d))
            for (a, b, d, w, p), padj in zip(raw, adjusted)]
