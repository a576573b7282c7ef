"""The statistics the benchmarks report with: a mean's bootstrap interval, a median's order-statistic interval,
Mann-Whitney, quartile summaries with censored runs, and censored tests-to-reach with paired comparisons.

Tests-to-reach a fraction of peak are *censored*: a run that never reaches the level within its budget has
"more than the budget", not infinity and not NaN (``np.percentile`` over a list holding ``inf`` interpolates
``inf - inf`` and gives NaN, which an old bench reported as "not reached" even when most runs reached it).
Every run is censored at the same horizon, so an empirical quantile without interpolation (``inverted_cdf``)
is exact: a number when at least that share of runs reached the level, else "> horizon". Paired comparisons
give censored runs the value ``horizon + 1``: every censored run ranks above every uncensored one, which is
all a rank test needs; the difference is that of *restricted* means, and medians are exact while fewer than
half the runs are censored (else "> horizon", and a ratio of medians becomes a bound).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

from searchlab.core.measure import median_ci


def bootstrap_mean(values: Sequence[float], seed: int = 0, resamples: int = 2000) -> list[float]:
    """[mean, 2.5 %, 97.5 %]: the mean with its 95 % percentile-bootstrap interval (seeded)."""
    data = np.asarray(values, dtype=float)
    means = np.random.default_rng(seed).choice(data, size=(resamples, len(data)), replace=True).mean(axis=1)
    return [float(np.mean(data)), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def median_interval(values: Sequence[float]) -> dict[str, Any]:
    """The median with its distribution-free 95 % interval (order statistics; few values: their range)."""
    lo, hi = median_ci(list(values))
    return {"median": statistics.median(values), "ci95": [lo, hi], "values": list(values)}


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """Two-sided Mann-Whitney U test of two searchers' per-seed values, with the difference of medians."""
    from scipy.stats import mannwhitneyu

    test = mannwhitneyu(a, b, alternative="two-sided")
    return {"median_a": statistics.median(a), "median_b": statistics.median(b),
            "median_difference": statistics.median(a) - statistics.median(b), "p_value": float(test.pvalue),
            "seeds": [len(a), len(b)]}


def summary(values: Sequence[float | None]) -> dict[str, Any]:
    """Median and quartiles; runs that never got there count as +inf (a censored median is None)."""
    data = [math.inf if v is None else float(v) for v in values]
    finite = [v for v in data if math.isfinite(v)]
    pct = np.percentile(data, [25, 75], method="nearest") if data else [math.nan] * 2
    lo, hi = median_ci(data) if data else (math.nan, math.nan)
    return {"median": _num(statistics.median(data)) if data else None, "p25": _num(pct[0]), "p75": _num(pct[1]),
            "median_ci95": [_num(lo), _num(hi)], "reached": len(finite), "runs": len(data)}


def _num(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


CENSORED = "not reached"


def tests_to_reach(curve: Sequence[float], fraction: float) -> float:
    """First test (1-based) whose best-so-far is at least ``fraction`` of peak; inf: never."""
    for i, q in enumerate(curve):
        if q >= fraction - 1e-12:
            return float(i + 1)
    return math.inf


def censored_quantiles(values: Sequence[float], qs: Sequence[float], horizon: int) -> list[float | str]:
    """Empirical quantiles of tests-to-reach; ``"> horizon"`` where the quantile is censored."""
    arr = np.asarray(values, dtype=float)
    out: list[float | str] = []
    for q in qs:
        v = float(np.quantile(arr, q, method="inverted_cdf"))
        out.append(v if math.isfinite(v) else f"> {horizon}")
    return out


def expected_random_tests(levels_reached: int, configurations: int) -> float:
    """Expected draws without replacement until the first of ``levels_reached`` good
    configurations among ``configurations``: ``(N + 1) / (K + 1)`` (inf if none is good)."""
    if levels_reached <= 0:
        return math.inf
    return (configurations + 1) / (levels_reached + 1)


def uninformative_levels(qualities: Sequence[float], fractions: Sequence[float], limit: float = 3.0) -> dict[str, Any]:
    """Per fraction of peak: the expected tests random search needs on this table (``qualities``:
    each testable configuration's fraction of peak, 0 for failures) and whether that is within
    ``limit`` tests — a level so easy that no searcher can show anything there."""
    q = np.asarray(qualities, dtype=float)
    out = {}
    for f in fractions:
        k = int(np.sum(q >= f - 1e-12))
        e = expected_random_tests(k, len(q))
        out[f"{f:.2f}"] = {"good": k, "expected_random_tests": None if not math.isfinite(e) else round(e, 2),
                           "uninformative": bool(e <= limit)}
    return out


def _bootstrap(stat: Any, a: np.ndarray, b: np.ndarray, rng: np.random.Generator, n: int) -> tuple[float, float]:
    idx = rng.integers(0, len(a), size=(n, len(a)))
    values = np.array([stat(a[i], b[i]) for i in idx])
    values = values[np.isfinite(values)]
    if len(values) < n * 0.5:  # most resamples undefined (censored): no interval
        return (math.nan, math.nan)
    lo, hi = np.quantile(values, [0.025, 0.975])
    return float(lo), float(hi)


def paired(a: Sequence[float], b: Sequence[float], *, higher_is_better: bool, horizon: int | None = None,
           seed: int = 0, resamples: int = 4000) -> dict[str, Any]:
    """A vs B over the same (table, seed) pairs, with 95 % paired-bootstrap intervals and the
    two-sided Wilcoxon signed-rank p-value (zero differences dropped, scipy's default).

    Plain values: the means and their difference A - B. Censored tests-to-reach
    (``horizon``): the *restricted mean* (a run that never reached counts ``horizon + 1``; a
    lower bound of the true mean, defined however many runs are censored) and its
    difference carry the verdict; the medians ("> horizon" when censored) and the ratio of
    medians B / A (how many times the tests B needs) are reported with ``ratio_bound``:
    ``exact``, ``lower bound`` (B's median censored: B needs at least that ratio),
    ``upper bound`` or ``undefined``; its interval is that of the same bounded statistic.
    The verdict names a winner only when the interval excludes 0 and p < 0.05."""
    from scipy.stats import wilcoxon

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"pairs": len(x)}
    if horizon is not None:  # censored: the rank-valid, restricted stand-in
        x, y = np.minimum(x, horizon + 1), np.minimum(y, horizon + 1)
        ma, mb = (float(np.quantile(v, 0.5, method="inverted_cdf")) for v in (x, y))
        bound = {(False, False): "exact", (False, True): "lower bound", (True, False): "upper bound"}.get(
            (ma > horizon, mb > horizon), "undefined")

        def ratio(p: np.ndarray, q: np.ndarray) -> float:
            return float(np.quantile(q, 0.5, method="inverted_cdf") / np.quantile(p, 0.5, method="inverted_cdf"))

        out.update(a_median=_fmt(ma, horizon), b_median=_fmt(mb, horizon),
                   a_reached=float(np.mean(x <= horizon)), b_reached=float(np.mean(y <= horizon)),
                   a_restricted_mean=round(float(x.mean()), 3), b_restricted_mean=round(float(y.mean()), 3),
                   ratio_b_over_a=None if bound == "undefined" else round(mb / ma, 3), ratio_bound=bound,
                   ratio_ci95=[_round(v) for v in _bootstrap(ratio, x, y, rng, resamples)]
                   if bound != "undefined" else [None, None])
    else:
        out.update(a=float(x.mean()), b=float(y.mean()))
    out["diff"] = float(x.mean() - y.mean())
    lo, hi = _bootstrap(lambda p, q: p.mean() - q.mean(), x, y, rng, resamples)
    nonzero = int(np.sum(x != y))
    out["nonzero_pairs"] = nonzero
    out["wilcoxon_p"] = float(wilcoxon(x, y).pvalue) if nonzero >= 1 else 1.0
    sign = 1 if higher_is_better else -1
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0 <= hi:
        out["verdict"] = "no difference (interval holds 0)"
    elif out["wilcoxon_p"] >= 0.05:
        out["verdict"] = "no difference (p >= 0.05)"
    else:
        out["verdict"] = "A better" if sign * lo > 0 else "B better"
    out["diff_ci95"] = [_round(lo), _round(hi)]
    return out


def _round(v: float) -> float | None:
    return None if not math.isfinite(v) else round(v, 4)


def _fmt(v: float, horizon: int) -> float | str:
    return round(v, 3) if math.isfinite(v) and v <= horizon else f"> {horizon}"
