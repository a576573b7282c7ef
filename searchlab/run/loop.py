"""The search loop: keep every worker busy, record, then tell; stop on budget.

Order per finished evaluation: commit to the store, then the cache, then tell the
searcher, so a crash at any point loses no finished evaluation (DESIGN.md, "Store").
Known-infeasible candidates (known constraints) and cache hits are never sent to a
worker. ``budget.evaluations`` counts *measurements* (device runs, table look-ups) and
cache hits, which keeps runs comparable whatever the cache holds; known-infeasible
proposals are recorded but not counted, as Kernel Tuner does not count configurations its
restrictions exclude, so a searcher that proposes many of them is not compared on fewer
real measurements. They are bounded separately (``budget.max_infeasible_proposals``), which
stops a searcher that proposes nothing else (docs/measurement.md, "Budgets").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from searchlab.core.records import Candidate, Config, Direction, Measurement, Result, Status, loss
from searchlab.core.spaces import Space
from searchlab.core.threads import limit_pools
from searchlab.errors import ConfigError
from searchlab.run.broken import SAME_FAILURES, SameFailures
from searchlab.run.execution import Executor
from searchlab.searchers import Searcher


@dataclass(frozen=True)
class Budget:
    """When to stop. ``None`` disables a bound; at least one bound must be set."""

    evaluations: int | None = 100
    wall_time_s: float | None = None
    target: float | None = None  # stop once the best objective is this good
    charged_time_s: float | None = None  # recorded compile + run time (replayed tables)
    max_failure_rate: float | None = None  # stop when failures exceed this share ...
    failure_rate_after: int = 20  # ... once this many evaluations are done
    max_infeasible_proposals: int | None = 10_000  # known-infeasible proposals (not measured, not counted above)
    max_same_failures: int | None = SAME_FAILURES  # the same failure this many times in a row, before any success

    def __post_init__(self) -> None:
        if self.evaluations is not None and (isinstance(self.evaluations, bool) or self.evaluations < 1):
            raise ConfigError(f"budget.evaluations={self.evaluations}: must be a positive integer or null")
        for name in ("wall_time_s", "charged_time_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ConfigError(f"budget.{name}={value}: must be positive or null")
        if self.max_failure_rate is not None and not 0 < self.max_failure_rate <= 1:
            raise ConfigError(f"budget.max_failure_rate={self.max_failure_rate}: must be in (0, 1] or null")
        if self.max_infeasible_proposals is not None and (
                isinstance(self.max_infeasible_proposals, bool) or self.max_infeasible_proposals < 1):
            raise ConfigError(f"budget.max_infeasible_proposals={self.max_infeasible_proposals}: "
                              "must be a positive integer or null")
        if self.max_same_failures is not None and (isinstance(self.max_same_failures, bool)
                                                   or self.max_same_failures < 1):
            raise ConfigError(f"budget.max_same_failures={self.max_same_failures}: must be a positive integer or null")
        if self.failure_rate_after < 1:
            raise ConfigError(f"budget.failure_rate_after={self.failure_rate_after}: must be >= 1")
        if self.evaluations is None and self.wall_time_s is None and self.charged_time_s is None:
            raise ConfigError("budget: set at least one of evaluations, wall_time_s or charged_time_s")


class StopReason(StrEnum):
    EVALUATIONS = "evaluations"
    WALL_TIME = "wall_time"
    CHARGED_TIME = "charged_time"
    TARGET = "target"
    FAILURE_RATE = "failure_rate"
    INFEASIBLE_PROPOSALS = "infeasible_proposals"  # budget.max_infeasible_proposals reached
    EXHAUSTED = "exhausted"  # the searcher has nothing more to propose
    STALLED = "stalled"  # the searcher proposed nothing with nothing in flight
    SAME_FAILURES = "same_failures"  # the program failed the same way K times before anything worked (run.broken)
    INTERRUPTED = "interrupted"


class Recorder(Protocol):
    def record(self, result: Result) -> None: ...


class MeasurementCache(Protocol):
    def get(self, config: Config) -> Measurement | None: ...

    def put(self, config: Config, measurement: Measurement) -> None: ...


@dataclass
class LoopState:
    """Counters the loop keeps; also what progress displays."""

    direction: Direction
    results: list[Result] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    charged_s: float = 0.0
    failures: int = 0  # measured failures (known-infeasible proposals are not measured)
    infeasible: int = 0  # known-infeasible proposals: recorded, not counted by budget.evaluations
    best: Result | None = None
    best_loss: float = math.inf  # loss(best.measurement): found once, not per result

    def add(self, result: Result) -> None:
        self.results.append(result)
        self.charged_s += result.measurement.charged
        if is_known_infeasible(result):
            self.infeasible += 1
        elif not result.ok:
            self.failures += 1
        value = loss(result.measurement, self.direction)
        if value < self.best_loss:
            self.best, self.best_loss = result, value

    @property
    def done(self) -> int:
        """Evaluations that count toward ``budget.evaluations``: measurements and cache hits."""
        return len(self.results) - self.infeasible

    @property
    def elapsed(self) -> float:
        return time.time() - self.started


def is_known_infeasible(result: Result) -> bool:
    """A proposal the space's known constraints rejected: recorded, never measured."""
    return result.status is Status.INFEASIBLE and not result.cache_hit


Progress = Callable[[LoopState, Budget], None]
HEARTBEAT_S = 1.0  # the most often the loop shows progress while it waits for evaluations


class SearchLoop:
    """Drives one searcher on one executor until the budget says stop."""

    def __init__(self, searcher: Searcher, executor: Executor, budget: Budget, *, space: Space,
                 store: Recorder | None = None, cache: MeasurementCache | None = None,
                 progress: Progress | None = None, prior: Sequence[Result] = (), same_failures: bool = False) -> None:
        self.searcher, self.executor, self.budget = searcher, executor, budget
        # a program's own failures stop early (run.broken), never a replay's recorded ones
        self.same = SameFailures(budget.max_same_failures if same_failures else None)
        searcher.set_budget(budget.evaluations)  # budget-dependent schedules span the run (Searcher.set_budget)
        self.space, self.store, self.cache, self.progress = space, store, cache, progress
        self.state = LoopState(searcher.direction)
        for result in prior:
            self.state.add(result)
            self.same.observe(result)
        self.in_flight: dict[int, Candidate] = {}
        self.interrupt: KeyboardInterrupt | None = None  # what stopped the run (Ctrl-C, a signal)
        self._beat = time.time()  # the last progress call made while waiting (SearchLoop._heartbeat)
        self.longest_s = 0.0  # this session's longest evaluation: what the next one is predicted to take

    def _stop_reason(self) -> StopReason | None:
        b, s = self.budget, self.state
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

    def _finish(self, result: Result) -> None:
        """Record (committed), cache, then tell: the order that makes crashes lossless."""
        if self.store is not None:
            self.store.record(result)
        if self.cache is not None and not result.cache_hit and result.status in (Status.OK, Status.FAILED):
            self.cache.put(result.config, result.measurement)
        self.in_flight.pop(result.id, None)
        if result.t_submit >= self.state.started:
            self.longest_s = max(self.longest_s, result.t_end - result.t_submit)
        self.searcher.tell(result)
        self.state.add(result)
        self.same.observe(result)
        if self.progress is not None:
            self.progress(self.state, self.budget)

    def _dispatch(self, candidate: Candidate) -> None:
        now = time.time()
        reason = self.space.check(candidate.config)
        if reason is not None:
            self._finish(Result(candidate, Measurement.infeasible(reason), t_submit=now, t_start=now, t_end=now))
            return
        cached = self.cache.get(candidate.config) if self.cache is not None else None
        if cached is not None:
            self._finish(Result(candidate, cached, "cache", "", now, now, now, cache_hit=True))
            return
        self.in_flight[candidate.id] = candidate
        self.executor.submit(candidate)

    def _fill(self) -> bool:
        """Ask for as many candidates as there are free workers; False if none came."""
        asked = False
        while (free := self.executor.free()) > 0 and self._stop_reason() is None:
            room = free
            if self.budget.evaluations is not None:
                room = min(room, self.budget.evaluations - self.state.done - len(self.in_flight))
            if room <= 0:
                break
            candidates = self.searcher.ask(room)
            if not candidates:
                break
            asked = True
            for candidate in candidates:
                self._dispatch(candidate)
        return asked

    # -- the Phase protocol (see drive) ---------------------------------------------------------
    @property
    def pending(self) -> int:
        return len(self.in_flight)

    def fill(self) -> bool:
        self._heartbeat()
        return self._fill()

    def _heartbeat(self) -> None:
        """Show progress while evaluations run, not only when one finishes: one evaluation may take
        longer than the display's interval (a new block size is a new pocl build; issue 46 item 2).
        At most every HEARTBEAT_S, so a caller's own progress callback is not flooded."""
        now = time.time()
        if self.progress is not None and self.in_flight and now - self._beat >= HEARTBEAT_S:
            self._beat = now
            self.progress(self.state, self.budget)

    def stop_reason(self) -> StopReason | None:
        self._heartbeat()  # also while the last evaluations run after a stop (issue 54: 15 s of silence)
        return self._stop_reason()

    def idle_reason(self) -> StopReason:
        return StopReason.EXHAUSTED if self.searcher.done else StopReason.STALLED

    def finish(self, result: Result) -> None:
        self._finish(result)

    def run(self) -> StopReason:
        limit_pools(self.executor.proposer_cores())  # the searcher's share of cores (docs/threads.md)
        try:
            reason, self.interrupt = drive(self.executor, self)
        finally:
            self.searcher.close()  # whatever ended the search: a strategy's thread must not outlive it
        return reason


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
