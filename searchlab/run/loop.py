"""The one ask/tell loop (issue 52, item 2): ask with what is pending, evaluate, record, tell, stop, close.

Every door drives a searcher through :class:`SearchLoop`: a run (the command line, ``optimize``, a study's cells,
tuning's replays) on an executor with :meth:`SearchLoop.run`; a tool that owns the loop itself (Optuna's sampler
callbacks, Ray Tune's ``suggest``/``on_trial_complete``) through its steps, :meth:`SearchLoop.propose` and
:meth:`SearchLoop.finish` (:class:`searchlab.integrations.Driver`); a tool that calls us with one evaluation at a
time (Kernel Tuner's cost function, tuning's live DFT plans) as the loop's one worker (:func:`search`, an
:class:`searchlab.run.execution.InlineExecutor`). So the order below, the budget, the stop reasons and the
searcher's ``close`` hold on every path, as Nevergrad's ``ask``/``tell`` own the bookkeeping for every caller.

Order per finished evaluation: commit to the store, then the cache, then tell the searcher, so a crash at any
point loses no finished evaluation (DESIGN.md, "Store"). Known-infeasible candidates (known constraints) and
cache hits are never sent to a worker. ``budget.evaluations`` counts *measurements* (device runs, table
look-ups) and cache hits, which keeps runs comparable whatever the cache holds; known-infeasible proposals are
recorded but not counted, as Kernel Tuner does not count configurations its restrictions exclude, so a searcher
that proposes many of them is not compared on fewer real measurements. They are bounded separately
(``budget.max_infeasible_proposals``), which stops a searcher that proposes nothing else (docs/measurement.md,
"Budgets").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from searchlab.core.records import Candidate, Config, Direction, FailureMode, Measurement, Result, Status
from searchlab.core.spaces import Space
from searchlab.core.threads import limit_pools
from searchlab.run.broken import SameFailures
from searchlab.run.budget import (
    Budget,
    LoopState,
    MeasurementCache,
    Progress,
    Recorder,
    StopReason,
    as_progress,
    is_known_infeasible,
)
from searchlab.run.execution import Executor
from searchlab.searchers import Searcher

__all__ = ["Budget", "LoopState", "MeasurementCache", "Phase", "Progress", "Recorder", "SearchLoop", "StopReason",
           "as_progress", "drive", "is_known_infeasible", "search"]

HEARTBEAT_S = 1.0  # the most often the loop shows progress while it waits for evaluations


class SearchLoop:
    """Drives one searcher until the budget (or the host) says stop; module docstring.

    ``executor``: where candidates are evaluated by :meth:`run` (None: a host calls :meth:`propose` and
    :meth:`finish` itself). ``budget``: when to stop (None: the host decides; ``horizon`` is then the
    evaluation count the searcher is told to span, :meth:`Searcher.set_budget`). ``space``: the problem's, whose
    known constraints settle a candidate without a worker (None: every candidate goes to the evaluator).
    ``resumed``: a resumed run's records, replayed into the searcher and counted; ``prior``: results the caller
    told the searcher already, counted. ``until``: the host's own stop (true once it stops: :attr:`StopReason.HOST`)."""

    def __init__(self, searcher: Searcher, executor: Executor | None = None, budget: Budget | None = None, *,
                 space: Space | None = None, store: Recorder | None = None, cache: MeasurementCache | None = None,
                 progress: Progress | Callable[[LoopState, Budget], None] | None = None, prior: Sequence[Result] = (),
                 resumed: Sequence[Result] = (), same_failures: bool = False,
                 horizon: int | None = None, until: Callable[[], bool] | None = None) -> None:
        self.searcher, self.executor, self.budget = searcher, executor, budget
        # a program's own failures stop early (run.broken), never a replay's recorded ones
        self.same = SameFailures(budget.max_same_failures if same_failures and budget is not None else None)
        for result in resumed:  # a resumed run's records: the searcher hears them again, in recorded order
            searcher.replay(result)
        # budget-dependent schedules span the run (Searcher.set_budget)
        searcher.set_budget(budget.evaluations if budget is not None else horizon)
        self.space, self.store, self.cache, self.until = space, store, cache, until
        self.progress = as_progress(progress)
        self.state = LoopState(searcher.direction)
        for result in (*resumed, *prior):
            self.state.add(result)
            self.same.observe(result)
        self.in_flight: dict[int, Candidate] = {}
        self.interrupt: KeyboardInterrupt | None = None  # what stopped the run (Ctrl-C, a signal)
        self._beat = time.time()  # the last progress call made while waiting (SearchLoop._heartbeat)
        self._closed = False
        self.reason: StopReason | None = None  # why :meth:`run` ended
        self.longest_s = 0.0  # this session's longest evaluation: what the next one is predicted to take

    # -- the steps: what every door does, in this order ------------------------------------------
    def stop_reason(self) -> StopReason | None:
        """Why the search should stop now (None: go on). Progress is shown here too, while the last evaluations
        run after a stop (issue 54: 15 s of silence)."""
        self._heartbeat()
        if self.until is not None and self.until():
            return StopReason.HOST
        b, s = self.budget, self.state
        if b is None:
            return None
        if b.evaluations is not None and s.done >= b.evaluations:
            return StopReason.EVALUATIONS
        if b.wall_time_s is not None and s.elapsed + self.longest_s >= b.wall_time_s:
            return StopReason.WALL_TIME  # no evaluation is started that would end past the cap (issue 54)
        if b.charged_time_s is not None and s.charged_s >= b.charged_time_s:
            return StopReason.CHARGED_TIME
        if b.target is not None and s.best is not None and s.best.objective is not None:
            sign = 1 if self.searcher.direction is Direction.MINIMIZE else -1
            if sign * s.best.objective <= sign * b.target:
                return StopReason.TARGET
        if b.max_failure_rate is not None and s.done >= b.failure_rate_after and s.failures / s.done > b.max_failure_rate:
            return StopReason.FAILURE_RATE
        if b.max_infeasible_proposals is not None and s.infeasible >= b.max_infeasible_proposals:
            return StopReason.INFEASIBLE_PROPOSALS
        if self.same.tripped:
            return StopReason.SAME_FAILURES
        return None

    def propose(self, room: int = 1) -> list[Candidate]:
        """Ask the searcher (which sees what is pending) for up to ``room`` candidates within the budget; those
        known infeasible or cached are settled at once (recorded and told); the rest are returned, in flight,
        for the caller to evaluate and :meth:`finish`. Empty: the searcher has nothing now, or the loop stops."""
        return self._propose(room)[0] if self.stop_reason() is None else []

    def _propose(self, room: int) -> tuple[list[Candidate], bool]:
        """(candidates to evaluate, whether the searcher gave any)."""
        if self.budget is not None and self.budget.evaluations is not None:
            room = min(room, self.budget.evaluations - self.state.done - len(self.in_flight))
        if room <= 0:
            return [], False
        out, asked = [], False
        for candidate in self.searcher.ask(room):
            asked = True
            if not self._settled(candidate):
                self.in_flight[candidate.id] = candidate
                out.append(candidate)
        return out, asked

    def _settled(self, candidate: Candidate) -> bool:
        now = time.time()
        reason = self.space.check(candidate.config) if self.space is not None else None
        if reason is not None:
            self.finish(Result(candidate, Measurement.infeasible(reason), t_submit=now, t_start=now, t_end=now))
            return True
        cached = self.cache.get(candidate.config) if self.cache is not None else None
        if cached is not None:
            self.finish(Result(candidate, cached, "cache", "", now, now, now, cache_hit=True))
            return True
        return False

    def finish(self, result: Result) -> None:
        """A finished evaluation: record (committed), cache, then tell: the order that makes crashes lossless."""
        if self.store is not None:
            self.store.record(result)
        if self.cache is not None and not result.cache_hit and result.status in (Status.OK, Status.FAILED):
            self.cache.put(result.config, result.measurement)
        self.in_flight.pop(result.id, None)
        if result.t_submit >= self.state.started:
            self.longest_s = max(self.longest_s, result.t_end - result.t_submit)
        self.searcher.tell(result)
        self._counted(result)

    def observe(self, config: Config, measurement: Measurement) -> Result:
        """A result the host measured without asking (a resumed study's trial, an enqueued one): recorded under the
        searcher's next candidate id, then replayed into it (its proposal: the configuration through the searcher's
        view, :meth:`Searcher.replay`). Returns the result as the searcher holds it."""
        result = Result(Candidate(self.searcher.next_id, config, Config({})), measurement)
        if self.store is not None:
            self.store.record(result)
        self.searcher.replay(result)
        told = self.searcher.history[-1]
        self._counted(told)
        return told

    def abandon(self, candidate: Candidate, why: str) -> None:
        """A candidate the host will never evaluate (a pruned or dropped trial): told as a failure."""
        if candidate.id in self.searcher.pending:
            self.finish(Result(candidate, Measurement.failed(FailureMode.RUNTIME, why)))

    def _counted(self, result: Result) -> None:
        self.state.add(result)
        self.same.observe(result)
        if self.progress is not None and self.budget is not None:
            self.progress(self.state, self.budget)

    def close(self) -> None:
        """End the search: the searcher releases what it holds (:meth:`Searcher.close`); once."""
        if not self._closed:
            self._closed = True
            self.searcher.close()

    # -- on an executor: the Phase protocol (see drive) ------------------------------------------
    @property
    def pending(self) -> int:
        return len(self.in_flight)

    def fill(self) -> bool:
        """Ask for as many candidates as there are free workers and submit them; False if none came."""
        self._heartbeat()
        assert self.executor is not None, "SearchLoop.run needs an executor"
        asked = False
        while (free := self.executor.free()) > 0 and self.stop_reason() is None:
            candidates, given = self._propose(free)
            if not given:
                break
            asked = True
            for candidate in candidates:
                self.executor.submit(candidate)
        return asked

    def _heartbeat(self) -> None:
        """Show progress while evaluations run, not only when one finishes: one evaluation may take
        longer than the display's interval (a new block size is a new pocl build; issue 46 item 2).
        At most every HEARTBEAT_S, so a caller's own progress callback is not flooded."""
        now = time.time()
        if self.progress is not None and self.budget is not None and self.in_flight and now - self._beat >= HEARTBEAT_S:
            self._beat = now
            self.progress(self.state, self.budget)

    def idle_reason(self) -> StopReason:
        return StopReason.EXHAUSTED if self.searcher.done else StopReason.STALLED

    def run(self, pools: bool = True) -> StopReason:
        """Drive the search on the executor until it stops; the searcher is closed whatever ended it (a
        strategy's thread must not outlive it). ``pools``: cap this process's thread pools at the searcher's
        share of cores (docs/threads.md); a host tool's process (Kernel Tuner's) keeps its own."""
        assert self.executor is not None, "SearchLoop.run needs an executor"
        if pools:
            limit_pools(self.executor.proposer_cores())
        try:
            self.reason, self.interrupt = drive(self.executor, self)
        finally:
            self.close()
        return self.reason


def search(searcher: Searcher, evaluate: Callable[[Candidate], Measurement | None], *, budget: Budget | None = None,
           horizon: int | None = None, until: Callable[[], bool] | None = None) -> SearchLoop:
    """The loop in this process with ``evaluate`` as its one worker (a host's evaluation, one at a time: Kernel
    Tuner's cost function, a live DFT plan). ``evaluate`` returns None when the host stopped before measuring:
    the candidate is dropped (it stays pending in the searcher) and the search ends with :attr:`StopReason.HOST`.
    Returns the finished loop: ``state`` holds every result, ``reason`` why it ended. Ctrl-C is re-raised once
    the searcher is closed (the host's caller decides what an interrupt means)."""
    from searchlab.run.execution import InlineExecutor

    stopped = False

    def stop() -> bool:
        return stopped or (until is not None and until())

    loop = SearchLoop(searcher, None, budget, horizon=horizon, until=stop)

    def step(candidate: Candidate) -> Measurement | None:
        nonlocal stopped
        measurement = evaluate(candidate)
        if measurement is None:
            stopped = True
            loop.in_flight.pop(candidate.id, None)
        return measurement

    loop.executor = InlineExecutor(step)
    loop.run(pools=False)
    if loop.interrupt is not None:
        raise loop.interrupt
    return loop


class Phase(Protocol):
    """One phase of a run on an executor: the search (:class:`SearchLoop`) or the confirm phase
    (:mod:`searchlab.run.confirm`). :func:`drive` keeps its workers busy until it stops."""

    @property
    def pending(self) -> int: ...  # submitted, not yet collected

    def fill(self) -> bool: ...  # submit (or settle) what there is room for; False if nothing came

    def stop_reason(self) -> StopReason | None: ...

    def idle_reason(self) -> StopReason: ...  # why it ends with nothing pending and nothing more to do

    def finish(self, result: Result) -> None: ...


def drive(executor: Executor, phase: Phase, timeout: float = 0.25) -> tuple[StopReason, KeyboardInterrupt | None]:
    """Fill free workers, collect, hand each result to the phase; until it stops.

    Ctrl-C, or SIGTERM via searchlab.core.signals, ends it with INTERRUPTED (in-flight work is
    abandoned; every result already collected was handed over first)."""
    try:
        while True:
            reason = phase.stop_reason()
            asked = False
            if reason is None:
                asked = phase.fill()
                reason = phase.stop_reason()
            if not phase.pending:
                if reason is not None:
                    return reason, None
                if asked:  # everything asked was settled without a worker (cache, infeasible)
                    continue
                return phase.idle_reason(), None
            for result in executor.collect(timeout=timeout):
                phase.finish(result)
    except KeyboardInterrupt as exc:
        return StopReason.INTERRUPTED, exc
