"""The measured DFT table the grammar benchmarks compare searchers on (paper 002 §5).

Paper 002 compares searchers on the *same* numbers, so every plan any run proposes is measured once, under the
package's search protocol (``searchlab.adapters.grammar.SEARCH_PROTOCOL``, the one ``problem=searcher_settings``'s
live ``dft:N`` problems use too), and replayed to every later run; a search is driven ask/tell, one evaluation
at a time, its time read on the table's clock.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from searchlab.core.measure import median_ci
from searchlab.core.records import Config, Measurement, Result

if TYPE_CHECKING:
    from searchlab.adapters.grammar import DftProblem
    from searchlab.searchers import Searcher

CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}


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
