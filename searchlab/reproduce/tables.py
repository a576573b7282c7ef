"""The comparison table: P +- error per strategy and space, per-repeat P with bootstrap intervals, paired tests.

- Each cell is the package's P on that space +- its error (the spread of the curve along the range), then the mean
  per-repeat P with its 95 % bootstrap interval over repeats (:mod:`.repeat_stats`).
- **Not held out.** A cell whose space chose the searcher's shipped defaults (``Searcher.defaults_chosen_on``,
  matched by the space file's content digest, as a study marks it) is marked ``*`` and left out of the pooled
  "all spaces" columns of the per-repeat statistic and of the tests, unless ``include_marked`` (the package's own
  aggregate P always pools every space: it is the reference's number).
- **Paired tests** for every pair of strategies: per-repeat P averaged over the pooled spaces for repeat index r
  gives one pair per r; a two-sided Wilcoxon signed-rank test over the pairs, Holm's correction over the pairs of
  an axis -- the study's own (:mod:`searchlab.study.analysis.stats`: exact up to 60 pairs, deterministic).
  "A ahead" only when p (Holm) < 0.05, else "no difference". A test that cannot be computed says why
  (identical values, too few pairs) instead of printing NaN; and when even the strongest possible result (all
  pairs one way: p = 2 / 2^n exactly) cannot reach 0.05 after Holm, the table says so and how many repeats would.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from searchlab.reproduce.repeat_stats import bootstrap
from searchlab.study.analysis.stats import ALPHA, holm, wilcoxon_pair

__all__ = ["holm", "marks", "pair_tests", "pooled", "repeats_needed"]


def repeats_needed(pairs: int) -> int:
    """The fewest pairs whose strongest exact two-sided Wilcoxon result (2 / 2^n) stays below 0.05 after Holm over
    ``pairs`` comparisons."""
    return math.floor(math.log2(2 * max(pairs, 1) / ALPHA)) + 1


def marks(experiment: Any) -> dict[tuple[str, str], str]:
    """``{(space key, strategy): table name}`` for the cells that are not held out (module docstring)."""
    from searchlab.core.provenance import matches
    from searchlab.reproduce.checks import searchlab_params
    from searchlab.searchers import searcher_class

    out: dict[tuple[str, str], str] = {}
    for group in experiment.groups:
        if group.custom != "searchlab":
            continue
        name, _, _ = searchlab_params(group.hyperparameters, group.key)
        refs = tuple(searcher_class(name).defaults_chosen_on)
        ref = matches(refs, {}, group.space.digest or None)
        if ref is not None:
            out[(group.space.key, group.name)] = ref.name
    return out


def pooled(per_repeat: Mapping[str, Mapping[str, np.ndarray]], name: str, keep: list[str]) -> np.ndarray:
    """Per-repeat P of ``name`` averaged over the spaces ``keep``, by repeat index (the shortest count)."""
    rows = [per_repeat[k][name] for k in keep if name in per_repeat.get(k, {})]
    if not rows:
        return np.array([])
    n = min(len(r) for r in rows)
    out: np.ndarray = np.mean([r[:n] for r in rows], axis=0)
    return out


def _test(x: np.ndarray, y: np.ndarray) -> tuple[float | None, str]:
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    diff = x - y
    if len(diff) < 2:
        return None, f"not tested: {len(diff)} repeat(s) with a finite per-repeat P on both sides"
    if np.allclose(diff, 0):
        return None, "not tested: identical per-repeat P in every repeat"
    return wilcoxon_pair(x, y)[1], ""  # the study's test: exact to 60 pairs, zero differences dropped


def pair_tests(rs: Any, names: list[str], keep: Mapping[str, list[str]]) -> dict[str, list[dict[str, Any]]]:
    """Per axis, a row per pair of strategies (module docstring); ``keep[name]``: the spaces it pools."""
    out: dict[str, list[dict[str, Any]]] = {}
    pairs = list(itertools.combinations(names, 2))
    for axis, per_repeat in rs.per_repeat.items():
        rows: list[dict[str, Any]] = []
        for a, b in pairs:
            spaces = [k for k in keep[a] if k in keep[b]]
            x, y = pooled(per_repeat, a, spaces), pooled(per_repeat, b, spaces)
            n = min(len(x), len(y))
            p, why = _test(x[:n], y[:n]) if spaces else (None, "not tested: no space where both are held out")
            rows.append({"a": a, "b": b, "n": n, "p": p, "why": why, "spaces": len(spaces),
                         "mean_diff": float(np.nanmean(x[:n] - y[:n])) if n and spaces else None})
        tested = [r for r in rows if r["p"] is not None]
        for row, adj in zip(tested, holm([r["p"] for r in tested])):
            row["p_holm"] = adj
            row["verdict"] = "no difference" if adj >= ALPHA else f"{row['a'] if row['mean_diff'] > 0 else row['b']} ahead"
        for row in rows:
            if row["p"] is None:
                row["p_holm"], row["verdict"] = None, row["why"]
            elif row["n"] < repeats_needed(len(tested)):
                row["verdict"] += (f" (with {row['n']} repeats no result can reach p < {ALPHA} after Holm over "
                                   f"{len(tested)} pairs; {repeats_needed(len(tested))} would)")
        out[axis] = rows
    return out


def cell(scores: Any, rs: Any, axis: str, space: str, name: str, mark: str) -> dict[str, Any]:
    """One table cell's numbers: the package's P and error, per-repeat mean and interval, the mark."""
    p = scores.per_space.get(axis, {}).get(space, {}).get(name)
    mean, lo, hi = bootstrap(rs.per_repeat.get(axis, {}).get(space, {}).get(name, np.array([])))
    return {"P": None if p is None else p[0], "error": None if p is None else p[1], "repeat_mean": mean,
            "repeat_lo": lo, "repeat_hi": hi, "mark": mark}
