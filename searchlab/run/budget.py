"""What a search counts and when it stops: the budget, the stop reasons, the loop's counters.

Apart from :mod:`searchlab.run.loop` (the one ask/tell loop) so that the progress display, the summary and the
doors that only read a run's counters need not import the loop itself.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from searchlab.core.records import Config, Direction, Measurement, Result, Status, loss
from searchlab.errors import ConfigError
from searchlab.run.broken import SAME_FAILURES


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
    HOST = "host"  # the tool that drives the search (Kernel Tuner, tuning's live replays) said stop


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


class Progress:
    """What shows a run's progress (issue 52, item 3: every hook declared here, with a no-op default, as Optuna's
    ``BaseSampler`` declares its optional ones; nothing looks a hook up by name). The loop calls the display with
    its counters after every result and while evaluations run (:class:`searchlab.run.loop.SearchLoop`); the run
    calls the other hooks (:class:`searchlab.run.lifecycle.Run`). :class:`searchlab.run.progress.ProgressReporter`
    is the command line's; a plain callable given to ``optimize`` is wrapped (:func:`as_progress`)."""

    def __call__(self, state: LoopState, budget: Budget) -> None:
        """The loop's counters: after every result, and at most every second while evaluations run."""

    def resumed(self, done: int, budget: Budget) -> None:
        """A resumed run picks up after ``done`` evaluations recorded earlier (said once, before the search)."""

    def phase(self, name: str, text: Callable[[], str], final: bool = False) -> None:
        """A phase after the search (``confirm``, ``validation``, ``writing``); ``text`` is built only when shown,
        ``final`` is the phase's last line."""

    def close(self) -> None:
        """The run is over: finish the display (a bar's last line)."""


class _Callback(Progress):
    def __init__(self, show: Callable[[LoopState, Budget], None]) -> None:
        self.show = show

    def __call__(self, state: LoopState, budget: Budget) -> None:
        self.show(state, budget)


def as_progress(progress: Progress | Callable[[LoopState, Budget], None] | None) -> Progress | None:
    """A :class:`Progress` (a plain callable gets the no-op hooks), or None."""
    if progress is None or isinstance(progress, Progress):
        return progress
    return _Callback(progress)
