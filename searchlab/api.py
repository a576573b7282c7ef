"""A library entry point: run a searcher on a problem without Hydra.

>>> outcome = optimize(problem, RandomSearcher(problem.space, seed=0), Budget(evaluations=50))

It drives the same :class:`searchlab.run.lifecycle.Run` as the command line, in memory: no
run directory, so no ``results.db`` (a ``store`` given here records every result), no confirm
phase and no summary. An interrupt (Ctrl-C) ends the search with ``StopReason.INTERRUPTED``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from searchlab.core.problem import Problem
from searchlab.core.records import Result
from searchlab.run.execution import Executor, SerialExecutor
from searchlab.run.lifecycle import Run
from searchlab.run.loop import Budget, LoopState, MeasurementCache, Progress, Recorder, StopReason, as_progress
from searchlab.run.prepare import Prepared
from searchlab.searchers import Searcher


@dataclass(frozen=True)
class Outcome:
    reason: StopReason
    results: tuple[Result, ...]
    best: Result | None
    wall_time_s: float
    devices: tuple[dict[str, Any], ...] = ()  # the workers' devices (an executor the caller started: none)


def optimize(problem: Problem, searcher: Searcher, budget: Budget | None = None, *,
             executor: Executor | None = None, store: Recorder | None = None,
             cache: MeasurementCache | None = None,
             progress: Progress | Callable[[LoopState, Budget], None] | None = None,
             prior: Sequence[Result] = (), started: bool = True) -> Outcome:
    """Run ``searcher`` on ``problem`` (serial executor unless one is given) until the budget ends.

    A given ``executor`` is used as started by the caller, who also closes it; with ``started=False``
    it is started here and closed at the end (the parts of :func:`searchlab.run.prepare.build_parts`)."""
    own = executor is None or not started
    prepared = Prepared(None, budget or Budget(), problem, searcher, executor or SerialExecutor(),
                        progress=as_progress(progress), cache=cache, start_executor=own, recorder=store, prior=tuple(prior))
    run = Run(prepared)
    try:
        run.start()
        reason = run.loop()
    finally:
        run.close()
    assert run.search is not None
    state = run.search.state
    return Outcome(reason, tuple(state.results), state.best, state.elapsed, tuple(run.devices))
