"""Paired speed-ups, the sequential rule that decides them, and what a run recommends.

The confirm phase (:mod:`searchlab.run.confirm`) and problems that compare on their own datasets
(the Futhark adapter) decide alike, so the rule sits in the core layer (docs/measurement.md,
"Confirm until decided").

Why sequential, and why this interval (issue 35). A fixed handful of rounds with the interval
of the median ratio (with 5 pairs: their range) let one disturbed round decide the verdict, and
simply adding rounds until the interval excludes 1 ("peeking") inflates the error rate far
above 5 %. The rule here is an *anytime-valid confidence sequence* for the median of the paired
ratios: it may be looked at after every round and stopped whenever it decides, and still
covers the true median at every look at once with probability >= 1 - alpha.

The construction is the sign process of the median (Howard & Ramdas 2022, "Sequential
estimation of quantiles with applications to A/B-testing and best-arm identification",
Bernoulli 28(3), §2): for the true median ``m`` of the ratios, ``S_n(m) = #{i <= n: r_i <= m}``
is a Binomial(n, 1/2) process. Its conjugate beta-binomial mixture martingale (Howard, Ramdas,
McAuliffe & Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences",
Ann. Statist. 49(2), §3 and Table 2, with a uniform Beta(1, 1) mixing prior)

    M_n(s) = 2^n * B(s + 1, n - s + 1) / B(1, 1)

has mean 1 under the null, so by Ville's inequality P(exists n: M_n(S_n(m)) >= 1/alpha) <= alpha.
The set of medians not rejected is an interval of order statistics, ``[r_(lo), r_(hi)]``, whose
ranks depend only on n and alpha (:func:`sequence_ranks`). Being a median of per-round
ratios, one disturbed round moves it by at most one rank. With ``comparisons`` candidates
measured against the default, each interval is at ``alpha / comparisons`` (Bonferroni), so the
candidate the data later call best is covered too.

Deviation: the papers' boundaries are stated for i.i.d. draws; interleaved rounds on one
machine are only approximately so (a slow minute hits both members of a pair, which is why we
pair). The simulation test (tests/core/test_sequential.py) checks coverage under i.i.d. and
heavy-tailed (Student t, 2 d.o.f.) round noise and shows that the naive repeated fixed-n
interval does not keep it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from searchlab.core.measure import median_ci
from searchlab.core.records import Direction

ALPHA = 0.05  # the error rate every decision is stated at (all looks together)

# The decisions a sequential comparison ends in (summary.json ``confirm.decision``, docs/measurement.md).
FASTER, SLOWER, EQUIVALENT, UNDECIDED = "faster", "slower", "equivalent", "undecided"


def ratio_interval(ratios: Sequence[float]) -> dict[str, Any]:
    """Median of paired ratios with its fixed-n distribution-free 95 % interval (``median_ci``):
    descriptive only (it is not valid under repeated looks; :func:`sequential_interval` is)."""
    lo, hi = median_ci(ratios)
    return {"speedup": float(statistics.median(ratios)), "ci95": [lo, hi], "pairs": len(ratios)}


@lru_cache(maxsize=4096)
def sequence_ranks(n: int, alpha: float = ALPHA) -> tuple[int, int]:
    """1-based ranks ``(lo, hi)`` of the confidence sequence's ends after ``n`` pairs: the median
    lies in ``[r_(lo), r_(hi)]`` of the sorted ratios; rank 0 is unbounded below, n + 1 above.

    ``lo`` is the smallest count ``s`` with ``M_n(s) < 1/alpha`` and ``hi - 1`` the largest
    (the accepted counts form an interval: ``log M_n`` is convex and symmetric in ``s``)."""
    if n < 1:
        return 0, 1
    bound = -math.log(alpha)
    lgn = math.lgamma(n + 2) - n * math.log(2.0)

    def log_m(s: int) -> float:  # log of 2^n * s! (n - s)! / (n + 1)!
        return math.lgamma(s + 1) + math.lgamma(n - s + 1) - lgn

    lo = next(s for s in range(n + 1) if log_m(s) < bound)  # s = n // 2 is always accepted
    return lo, n - lo + 1


def sequence_interval(values: Sequence[float], alpha: float = ALPHA) -> tuple[float, float]:
    """The confidence sequence of the median at ``len(values)`` observations (ends may be
    infinite: too few rounds to bound that side yet)."""
    xs = sorted(values)
    lo, hi = sequence_ranks(len(xs), alpha)
    return (xs[lo - 1] if lo >= 1 else -math.inf), (xs[hi - 1] if hi <= len(xs) else math.inf)


def sequential_interval(ratios: Sequence[float], comparisons: int = 1, alpha: float = ALPHA) -> dict[str, Any]:
    """The median paired ratio with its anytime-valid interval (``ci95``: 95 % over every look and
    every one of ``comparisons`` candidates). An unbounded end is 0 (below) or inf (above)."""
    lo, hi = sequence_interval(ratios, alpha / max(comparisons, 1))
    return {"speedup": float(statistics.median(ratios)), "ci95": [max(lo, 0.0), hi], "pairs": len(ratios),
            "method": "anytime sign confidence sequence", "alpha": alpha, "comparisons": max(comparisons, 1)}


def decide(interval: Sequence[float], equivalence: float) -> str | None:
    """The decision an interval of a speed-up supports, or None (measure on): faster (above 1),
    slower (below 1), equivalent (inside ``[1 - equivalence, 1 + equivalence]``)."""
    lo, hi = float(interval[0]), float(interval[1])
    if lo > 1.0:
        return FASTER
    if hi < 1.0:
        return SLOWER
    if equivalence > 0 and lo >= 1.0 - equivalence and hi <= 1.0 + equivalence:
        return EQUIVALENT
    return None


def speedup(default: float, other: float, direction: Direction) -> float:
    """How many times better ``other`` is than ``default`` (> 1: better), for either direction."""
    num, den = (default, other) if direction is Direction.MINIMIZE else (other, default)
    return num / den if den > 0 else math.inf


def recommended(comparison: Mapping[str, Any] | None) -> bool:
    """Whether a tuned configuration measurably beats the default: the lower end of the paired
    interval of its speed-up is above 1 (never worse than doing nothing)."""
    return comparison is not None and float(comparison["ci95"][0]) > 1.0


def ratio_digits(*values: float, least: int = 2, most: int = 12) -> int:
    """Decimals to print speed-ups and their bounds with (issue 46 item 2, "honest digits").

    Two decimals, and more while a value other than exactly 1 would print as 1 (``1.00``): a bound
    that excludes 1 (1.0039, decided) then prints as ``1.004`` and one just below (0.9996,
    undecided) as ``0.9996``, so ``1.00`` is only ever an exact 1 and the same printed bound never
    means both decided and undecided."""
    digits = least
    while digits < most and any(math.isfinite(v) and v != 1.0 and f"{v:.{digits}f}" == f"{1.0:.{digits}f}"
                                for v in values):
        digits += 1
    return digits


def show_ratio(value: float, digits: int) -> str:
    """A speed-up (or bound) with ``digits`` decimals; an unbounded end prints as ``inf``."""
    return "inf" if math.isinf(value) else f"{value:.{digits}f}"


UNBOUNDED = "(too few rounds to bound)"


def unbounded(lo: float, hi: float) -> bool:
    """Whether an interval of a speed-up bounds nothing yet: the confidence sequence is unbounded on
    both sides (fewer than 8 rounds, :func:`sequence_ranks`), stored as ``[0, inf]``."""
    return lo <= 0.0 and math.isinf(hi)


def show_interval(lo: float, hi: float, *also: float) -> str:
    """``[lo, hi]`` in the digits :func:`ratio_digits` picks for the bounds (and ``also``: the value
    printed beside them, so all read alike). An interval that bounds nothing yet reads as such
    (issue 54: ``[0.00, inf]`` after 5 rounds), never as numbers."""
    if unbounded(lo, hi):
        return UNBOUNDED
    d = ratio_digits(lo, hi, *also)
    return f"[{show_ratio(lo, d)}, {show_ratio(hi, d)}]"


def show_speedup(speedup_value: float, lo: float, hi: float) -> tuple[str, str]:
    """(``1.500``, ``[1.004, 2.240]``): a speed-up and its interval in one number of decimals."""
    if unbounded(lo, hi):
        return show_ratio(speedup_value, ratio_digits(speedup_value)), UNBOUNDED
    d = ratio_digits(lo, hi, speedup_value)
    return show_ratio(speedup_value, d), f"[{show_ratio(lo, d)}, {show_ratio(hi, d)}]"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st ..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def confirmed_choice(rank: int, k: int) -> str:
    """Which configuration the confirm phase chose, in words that cannot read as "the third
    fastest": its rank among the search's single measurements (the default counted too, so a
    default that was the search's best makes the first candidate the 2nd-best), then what
    re-measuring found. Not "confirmed": whether it beats the default is the decision's to say."""
    which = "the search's best single measurement" if rank == 1 else \
        f"the {ordinal(rank)}-best single measurement of the search"
    return f"{which}, fastest of the {k} re-measured" if k > 1 else f"{which}, re-measured"
