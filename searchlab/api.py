"""A library entry point: run a searcher on a problem without Hydra.

>>> outcome = optimize(problem, RandomSearcher(problem.space, seed=0), Budget(evaluations=50))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from searchlab.core.problem import Problem
from searchlab.execution import Executor, SerialExecutor
from searchlab.loop import Budget, MeasurementCache, Progress, Recorder, SearchLoop, StopReason
from searchlab.records import Result
from searchlab.searchers import Searcher


@dataclass(frozen=True)
class Outcome:
    reason: StopReason
    results: tuple[Result, ...]
    best: Result | None
    wall_time_s: float


def optimize(problem: Problem, searcher: Searcher, budget: Budget | None = None, *,
             executor: Executor | None = None, store: Recorder | None = None,
             cache: MeasurementCache | None = None, progress: Progress | None = None,
             prior: Sequence[Result] = ()) -> Outcome:
    """Run ``searcher`` on ``problem`` (serial executor unless one is given) until the budget ends."""
    own = executor is None
    executor = executor or SerialExecutor()
    if own:
        executor.start(problem)
    try:
        loop = SearchLoop(searcher, executor, budget or Budget(), space=problem.space, store=store,
                          cache=cache, progress=progress, prior=prior)
        reason = loop.run()
    finally:
        if own:
            executor.close()
    return Outcome(reason, tuple(loop.state.results), loop.state.best, loop.state.elapsed)
