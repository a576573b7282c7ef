"""What several benchmarks share: data paths, the measured DFT table and its ask/tell drive, small statistics,
and running the product's own command lines. The one module a benchmark may import besides the harness.

The DFT table (:class:`Table`): paper 002 compares searchers on the *same* numbers, so every plan any run
proposes is measured once, under the package's search protocol (``searchlab.adapters.grammar.SEARCH_PROTOCOL``,
the one ``problem=searcher_settings``'s live ``dft:N`` problems use too), and replayed to every later run.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from searchlab.core.measure import median_ci
from searchlab.core.records import Config, Measurement, Result

if TYPE_CHECKING:
    from searchlab.adapters.grammar import DftProblem
    from searchlab.searchers import Searcher

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
SHARED_DATA = REPO.parent / "shared" / "data"
KT_DATA = SHARED_DATA / "kernel_tuner"  # the four convolution tables (Kernel Tuner caches) every table bench uses
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}


def kt_tables() -> list[Path]:
    """The shared Kernel Tuner caches, sorted (convolution on A100, A4000, MI250X, W6600)."""
    return sorted(KT_DATA.glob("*.json.gz"))


# -- the product's command lines ------------------------------------------------------------------------------


def searchlab_cli(args: Sequence[str], *, module: str = "searchlab", cwd: Path = REPO, timeout: float | None = None,
                  env: dict[str, str] | None = None, check: bool = True) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m searchlab ARGS`` (or another module) in a fresh interpreter, as a user runs it: the
    completed process and its wall seconds. A failure is one line naming the command (``check``)."""
    command = [sys.executable, "-m", module, *args]
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - started
    if check and proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise SystemExit(f"{' '.join(command[1:])}: exit {proc.returncode}: {' / '.join(tail)}")
    return proc, seconds


def busy_core(core: int | None) -> subprocess.Popen[bytes]:
    """``yes > /dev/null``, pinned to ``core`` (None: wherever the scheduler puts it): a one-core load."""
    pin = ["taskset", "-c", str(core)] if core is not None else []
    return subprocess.Popen([*pin, "yes"], stdout=subprocess.DEVNULL)


def last_core() -> int:
    return sorted(os.sched_getaffinity(0))[-1]


# -- statistics -----------------------------------------------------------------------------------------------


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


# -- the measured DFT table -----------------------------------------------------------------------------------


def dft_problem(n: int, context: str = "strided", scalar_codelets: bool = True,
                max_runs: int | None = None) -> DftProblem:
    """``problem=dft`` of size ``n`` under the search protocol (``max_runs``: its cap changed), set up (C
    library built, plans checkable)."""
    from dataclasses import replace

    from searchlab.adapters.grammar import SEARCH_BATCH_S, SEARCH_PROTOCOL, DftProblem

    protocol = SEARCH_PROTOCOL if max_runs is None else replace(SEARCH_PROTOCOL, max_runs=max_runs)
    problem = DftProblem(size=n, subproblem_context=context, measure=protocol, batch_s=SEARCH_BATCH_S,
                         scalar_codelets=scalar_codelets)
    problem.setup(problem.device)
    return problem


class Table:
    """Word -> its one measurement, measured on first request; sub-problem rows are keyed by context too
    (their value depends on it), full-size rows may be shared. The cost of a row (plan + check against
    numpy.fft + timed runs) is read on ``clock``: ``wall`` (paper 002 counts wall-clock search time; run
    under ``cpuslot --exclusive``) or ``cpu`` (this thread's CPU time, robust to a loaded machine)."""

    def __init__(self, problem: DftProblem, clock: str = "wall") -> None:
        self.problem, self.clock = problem, CLOCKS[clock]
        self.rows: dict[str, tuple[Measurement, float]] = {}
        self.timing_s = self.wall_s = 0.0

    def __call__(self, config: Config) -> tuple[Measurement, float]:
        """The measurement and what it cost on the table's clock."""
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
    """One search on a table: best so far and search time after each evaluation."""

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


def drive(searcher: Searcher, table: Table, budget: int, stop: Callable[[Trace], bool] | None = None) -> Trace:
    """Ask/tell one evaluation at a time; time = evaluation + ask/tell time, both on the table's clock (a
    replayed row costs what it cost when measured)."""
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


def confirm_plans(problem: DftProblem, words: dict[str, str], reference: str, rounds: int) -> dict[str, Any]:
    """Re-measure each plan interleaved with the reference plan: per round, every plan once in a rotated
    order; ratio to the reference per round, median and 95 % interval."""
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
