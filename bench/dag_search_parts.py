"""Pieces of bench/dag_search.py: the measured table, one search run, interleaved
re-measurement, summaries and the figure."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from searchlab.adapters.grammar import DftProblem
from searchlab.core.measure import median_ci
from searchlab.core.records import Config, Measurement, Result
from searchlab.searchers import McSearcher, RandomSearcher, Searcher, TagSearcher, UctSearcher

CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}


class Table:
    """Word -> its one measurement, measured on first request; sub-problem rows are keyed
    by context too (their value depends on it), full-size rows may be shared. The cost of a
    row (plan + check against numpy.fft + timed runs) is read on ``clock``: ``wall`` (issue
    26: paper 002 counts wall-clock search time; run under ``cpuslot --exclusive``) or
    ``cpu`` (this thread's CPU time, robust to a loaded machine)."""

    def __init__(self, problem: DftProblem, clock: str = "wall") -> None:
        self.problem, self.clock = problem, CLOCKS[clock]
        self.rows: dict[str, tuple[Measurement, float]] = {}
        self.timing_s = self.wall_s = 0.0

    def __call__(self, config: Config) -> tuple[Measurement, float]:
        """The measurement and the CPU time it cost (thread time: plan, check, timed runs)."""
        word = str(config["word"])
        key = word if word.startswith(self.problem.graph.root + "(") else f"{self.problem.context}:{word}"
        if key not in self.rows:
            start, wall = self.clock(), time.perf_counter()
            m = self.problem.evaluate(config)
            self.rows[key] = (m, self.clock() - start)
            self.timing_s += self.rows[key][1]
            self.wall_s += time.perf_counter() - wall
        return self.rows[key]


@dataclass
class Trace:
    best: list[float] = field(default_factory=list)
    time_s: list[float] = field(default_factory=list)
    sub: list[bool] = field(default_factory=list)
    best_word: str = ""
    overhead_s: float = 0.0

    def first(self, target: float) -> int | None:
        return next((i for i, b in enumerate(self.best) if b >= target), None)

    def best_at(self, seconds: float) -> float:
        within = [b for b, t in zip(self.best, self.time_s) if t <= seconds]
        return within[-1] if within else 0.0

    def curve(self) -> dict[str, list[float]]:
        step = max(1, len(self.best) // 50)
        return {"best": self.best[::step], "time_s": self.time_s[::step]}


def run(searcher: Searcher, table: Table, budget: int, stop: Callable[[Trace], bool] | None = None) -> Trace:
    """Ask/tell one evaluation at a time; time = evaluation + ask/tell time, both on the
    table's clock (a replayed row costs what it cost when measured)."""
    trace, spent, best = Trace(), 0.0, 0.0
    clock = table.clock
    while len(trace.best) < budget:
        start = clock()
        batch = searcher.ask(1)
        overhead = clock() - start
        if not batch:
            break
        measurement, seconds = table(batch[0].config)
        start = clock()
        searcher.tell(Result(batch[0], measurement))
        overhead += clock() - start
        trace.overhead_s += overhead
        spent += overhead + seconds
        if measurement.objective is not None and not measurement.is_subproblem and measurement.objective > best:
            best, trace.best_word = measurement.objective, str(batch[0].config["word"])
        trace.best.append(best)
        trace.time_s.append(spent)
        trace.sub.append(measurement.is_subproblem)
        if stop is not None and stop(trace):
            break
    return trace


class _Factory:
    def __init__(self, cls: type[Searcher], **options: Any) -> None:
        self.cls, self.options = cls, options

    def __call__(self, problem: DftProblem, seed: int) -> Searcher:
        return self.cls(problem.space, direction=problem.direction, seed=seed, **self.options)

    def with_(self, **options: Any) -> _Factory:
        return _Factory(self.cls, **(self.options | options))


SEARCHERS: dict[str, _Factory] = {
    "tag": _Factory(TagSearcher), "mc": _Factory(McSearcher), "uct": _Factory(UctSearcher),
    "random": _Factory(RandomSearcher), "tag_canonical": _Factory(TagSearcher, arcs="canonical"),
}


def summary(values: Sequence[float | None]) -> dict[str, Any]:
    """Median and quartiles; runs that never got there count as +inf (a censored median is None)."""
    data = [math.inf if v is None else float(v) for v in values]
    finite = [v for v in data if math.isfinite(v)]
    pct = np.percentile(data, [25, 75], method="nearest") if data else [math.nan] * 2
    lo, hi = median_ci(data) if data else (math.nan, math.nan)
    return {"median": _num(statistics.median(data)) if data else None, "p25": _num(pct[0]), "p75": _num(pct[1]),
            "median_ci95": [_num(lo), _num(hi)], "reached": len(finite), "runs": len(data)}


def compare(a: list[float], b: list[float]) -> dict[str, Any]:
    """Two-sided Mann-Whitney U test of two searchers' per-seed values (rank-based, no
    normality assumed), with the difference of medians."""
    from scipy.stats import mannwhitneyu

    test = mannwhitneyu(a, b, alternative="two-sided")
    return {"median_a": statistics.median(a), "median_b": statistics.median(b),
            "median_difference": statistics.median(a) - statistics.median(b), "p_value": float(test.pvalue),
            "seeds": [len(a), len(b)]}


def comparisons(searchers: dict[str, Any], dp_time_key: str = "best_at_dp_time") -> dict[str, Any]:
    """TAG against every other searcher: best at the end and at DP's time (÷ DP's best)."""
    out: dict[str, Any] = {}
    if "tag" not in searchers:
        return out
    for name, other in searchers.items():
        if name == "tag":
            continue
        for key in ("final_best", dp_time_key):
            out[f"tag_vs_{name}:{key}"] = compare([r[key] for r in searchers["tag"]["runs"]],
                                                   [r[key] for r in other["runs"]])
    return out


def _num(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def confirm(problem: DftProblem, words: dict[str, str], reference: str, rounds: int) -> dict[str, Any]:
    """Re-measure each plan interleaved with the reference plan: per round, every plan once
    in a rotated order; ratio to the reference per round, median and 95 % interval."""
    names = [n for n, w in words.items() if w]
    values: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for n in names[r % len(names):] + names[: r % len(names)]:
            m = problem.evaluate(Config(word=words[n]))
            values[n].append(float(m.objective or 0.0))
    out: dict[str, Any] = {}
    for n in names:
        ratios = [a / b for a, b in zip(values[n], values[reference])]
        out[n] = {"word": words[n], "describe": problem.describe_config(Config(word=words[n])),
                  "mflops_median": statistics.median(values[n]), "over_reference_median": statistics.median(ratios),
                  "over_reference_ci95": list(median_ci(ratios))}
    out["reference"] = reference
    return out


def _band(ax: Any, x: list[int], stats: list[dict[str, Any]], color: str | None, label: str) -> None:
    def get(key: str) -> list[float]:
        return [np.nan if s[key] is None else s[key] for s in stats]

    ax.plot(x, get("median"), "o-", color=color, label=label)
    ax.fill_between(x, get("p25"), get("p75"), color=color, alpha=0.2)


def plot(results: dict[str, Any], path: Path) -> None:
    """Evaluations and time to DP's best; best at DP's time and at the end / DP's;
    Mflop/s of DP, best searcher plan and FFTW (Fig. 8(c))."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = results["sizes"]
    t = [int(np.log2(s["n"])) for s in sizes]
    ctx = next(iter(sizes[0]["dp"])) if sizes else "strided"
    fig, axes = plt.subplots(1, 5, figsize=(24, 4.5))
    axes[0].plot(t, [s["dp"][ctx]["evaluations"] for s in sizes], "k-s", label=f"DP ({ctx}, whole run)")
    axes[1].plot(t, [s["dp"][ctx]["time_s"] for s in sizes], "k-s", label=f"DP ({ctx}, whole run)")
    for k, name in enumerate(results["searchers"]):
        color = f"C{k}"
        xs = [tt for tt, s in zip(t, sizes) if name in s["searchers"]]
        for ax, key in zip(axes, ("evals_to_dp", "time_to_dp_s", "best_at_dp_time_over_dp", "final_best_over_dp")):
            _band(ax, xs, [s["searchers"][name][key] for s in sizes if name in s["searchers"]], color, name)
    for c in (sizes[0]["dp"] if sizes else {}):
        axes[4].plot(t, [s["confirm"].get(f"dp_{c}", {}).get("mflops_median", np.nan) for s in sizes], "s-",
                     label=f"DP {c} (re-measured)")
    axes[4].plot(t, [max((v["mflops_median"] for k, v in s["confirm"].items() if isinstance(v, dict)), default=np.nan)
                     for s in sizes], "o-", label="best re-measured plan (any searcher or DP)")
    for flag in ("measure", "patient"):
        pts = [(tt, f["mflops"]) for tt, s in zip(t, sizes) for f in s["fftw"] if f["flag"] == flag]
        if pts:
            axes[4].plot(*zip(*pts), "^--", label=f"FFTW 3 {flag.upper()}")
    titles = ["evaluations to reach DP's best (-tol)", "search time to reach it (s)", "best at DP's time / DP",
              "best at the end / DP", "pseudo-Mflop/s (thread CPU time)"]
    for ax, title in zip(axes, titles):
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("log2 n (3000: 11.55)")
        ax.legend(fontsize=7)
    for ax in axes[:2]:
        ax.set_yscale("log")
    for ax in axes[2:4]:
        ax.axhline(1.0, color="k", lw=1)
    fig.suptitle(f"C DFT library, measured table, {results['seeds']} seeds, median and p25-p75 "
                 "(shared 2-core machine)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


__all__ = ["SEARCHERS", "Table", "Trace", "comparisons", "confirm", "plot", "run", "summary"]
