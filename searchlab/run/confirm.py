"""The confirm phase: re-measure the best k configurations beside the default until decided.

A search keeps the configuration whose *one* measurement was best, and the minimum of many
noisy measurements is biased low (the winner's curse): the reported best is often a lucky
draw. Like a careful benchmark report, the run ends by re-measuring the best ``k``
configurations and the problem's default (``Problem.default_config``), interleaved round-robin
with the order rotated every round (so a slow phase of the machine hits every candidate alike),
on the run's own workers. Each measurement is the median of several timed runs (the problem's
measurement protocol, searchlab.core.measure).

Confirm until decided (issue 35; docs/measurement.md, "Confirm phase"): after ``confirm.rounds``
rounds, and after every round from then on, each candidate's speed-up over the default, paired
by round, gets an anytime-valid 95 % confidence sequence (searchlab.core.speedup: the sign
process of the median with a beta-binomial mixture, Howard et al. 2021; Howard & Ramdas 2022),
so looking after every round keeps the error rate. The phase stops when the best candidate's
interval

- lies above 1 (**faster**: recommended) or below 1 (**slower**: keep the default);
- lies inside ``1 ± confirm.equivalence`` (**equivalent**: a decided "no difference");
- or when ``confirm.max_rounds`` or ``confirm.max_time_s`` is reached first (**undecided**:
  the verdict names the interval and what to do next).

A problem without a default measures its candidates for ``confirm.rounds`` rounds (nothing to
decide). Confirmation measurements are recorded in ``results.db`` (negative candidate ids and
``meta.phase = "confirm"``), never told to the searcher and never charged to the budget. A
resumed run whose phase was interrupted re-measures only the (round, configuration) pairs it
has no record of, and goes on deciding.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from searchlab.core.records import Candidate, Config, Direction, Result
from searchlab.errors import ConfigError
from searchlab.run.confirm_report import (
    PHASE,
    confirm_report,
    decision,
    entry,
    is_confirmation,
    noise_report,
    paired_speedup,
    progress_text,
    search_ranks,
    top_k,
)
from searchlab.run.execution import Executor
from searchlab.run.loop import StopReason, drive

__all__ = ["ConfirmConfig", "confirm_after_search", "is_confirmation", "noise_report", "paired_speedup",
           "plan", "run_confirm", "top_k"]


@dataclass
class ConfirmConfig:
    """The confirm phase's options (``confirm.*``); ``k=0`` or ``rounds=0`` disables it.

    ``rounds``: rounds measured before the first look (and the rounds of a problem without a
    default); ``max_rounds`` / ``max_time_s``: the caps after which an undecided comparison
    stays undecided; ``equivalence``: the half-width of the band around a speed-up of 1 inside
    which the interval decides "no difference" (0: never). The phase runs for problems whose
    measurements are noisy (``Problem.noisy``); ``force=true`` runs it for any problem.
    """

    k: int = 3
    rounds: int = 5
    max_rounds: int = 40
    max_time_s: float = 60.0
    equivalence: float = 0.02
    force: bool = False

    def __post_init__(self) -> None:
        for name in ("k", "rounds", "max_rounds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"confirm.{name}={value!r}: must be an integer >= 0, e.g. confirm.{name}=5")
        for name, top in (("max_time_s", math.inf), ("equivalence", 0.5)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= top \
                    or not math.isfinite(value):
                raise ConfigError(f"confirm.{name}={value!r}: must be a finite number in [0, {top}], "
                                  f"e.g. confirm.{name}={0.02 if name == 'equivalence' else 60}")
        if self.max_rounds < self.rounds:
            raise ConfigError(f"confirm.max_rounds={self.max_rounds}: must be >= confirm.rounds ({self.rounds})")

    def enabled(self, noisy: bool) -> bool:
        return self.k > 0 and self.rounds > 0 and (noisy or self.force)


class Recorder(Protocol):
    def record(self, result: Result) -> None: ...


# A progress display's hook for phases after the search (searchlab.run.progress.ProgressReporter.phase):
# (phase name, the line, built only when shown).
PhaseProgress = Callable[[str, Callable[[], str]], None]


def plan(configs: Sequence[Config], rounds: Iterable[int], done: Iterable[Result]) -> list[tuple[int, Config]]:
    """(round, configuration) pairs still to measure, round-robin: every configuration in one
    round before the next, each round's order rotated by one (no configuration is always
    measured first). Pairs with a record (an interrupted phase) are skipped."""
    have = {(int(r.candidate.meta.get("round", -1)), r.config.key) for r in done}
    todo = []
    for n in rounds:
        shift = n % max(len(configs), 1)
        todo += [(n, c) for c in [*configs[shift:], *configs[:shift]] if (n, c.key) not in have]
    return todo


def confirm_configs(search: Sequence[Result], direction: Direction, k: int, default: Config | None) -> list[Config]:
    """What the phase measures: the default (when the problem has one), then the best ``k`` others."""
    top = [r.config for r in top_k(search, direction, k, default.key if default is not None else None)]
    return [default, *top] if default is not None else top


class Durations:
    """How long measuring a configuration takes, to stop *before* a cap (issue 54, item 1: the phase
    printed "elapsed 1:17 (cap 1:00)": caps were checked between rounds, and a round under load took
    longer than the cap). The prediction for a configuration is its latest measurement's time, from
    submission to result (the search's measurement of it, then this phase's own); for one never
    measured, the latest of any. Nothing known yet: 0 (the first measurement always starts)."""

    def __init__(self, results: Sequence[Result] = ()) -> None:
        self.by_key: dict[str, float] = {}
        self.latest = 0.0
        for r in sorted(results, key=lambda r: r.t_end):
            self.add(r)

    def add(self, result: Result) -> None:
        if result.cache_hit or result.t_submit <= 0 or result.t_end < result.t_submit:
            return
        seconds = result.t_end - result.t_submit
        self.by_key[result.config.key] = self.latest = seconds

    def predict(self, config: Config) -> float:
        return self.by_key.get(config.key, self.latest)


class ConfirmPhase:
    """The rounds as a :class:`searchlab.run.loop.Phase`: submitted round-robin as workers free up,
    each result recorded (never told to the searcher, never charged to the budget); a new round
    is planned while the sequential rule has not decided and no cap is reached."""

    def __init__(self, executor: Executor, configs: Sequence[Config], prior: Sequence[Result],
                 store: Recorder | None, default: Config | None, options: ConfirmConfig, direction: Direction,
                 progress: PhaseProgress | None = None, search: Sequence[Result] = ()) -> None:
        self.executor, self.store, self.default, self.progress = executor, store, default, progress
        self.durations = Durations([*search, *prior])
        self.configs, self.options, self.direction = list(configs), options, direction
        self.results = list(prior)
        self.next_id = min([r.id for r in prior] + [0]) - 1
        self.in_flight: dict[int, Candidate] = {}
        self.started = time.time()
        self.stopped = ""  # why no further round was planned (summary.json confirm.stopped)
        last = max([int(r.candidate.meta.get("round", -1)) for r in prior] + [options.rounds - 1])
        self.planned = last + 1
        self.todo = plan(self.configs, range(self.planned), prior)

    @property
    def pending(self) -> int:
        return len(self.in_flight)

    def _more(self) -> bool:
        """Plan one more round unless decided or capped (records why it stopped)."""
        if self.default is None or len(self.configs) < 2:
            self.stopped = "rounds"
            return False
        if decision(self.results, self.configs[1:], self.default, self.direction, self.options.equivalence):
            self.stopped = "decided"
        elif self.planned >= self.options.max_rounds:
            self.stopped = "max_rounds"
        elif time.time() - self.started >= self.options.max_time_s:
            self.stopped = "max_time_s"
        else:
            self.todo = plan(self.configs, [self.planned], self.results)
            self.planned += 1
            return True
        return False

    def show(self) -> None:
        """Progress: called while rounds run (drive calls ``fill`` between collects), rate-limited by the display."""
        if self.progress is not None:
            self.progress(PHASE, lambda: progress_text(self.results, self.configs, self.default, self.direction,
                                                       self.planned, self.options.max_rounds,
                                                       time.time() - self.started, self.options.max_time_s))

    def fill(self) -> bool:
        self.show()
        asked = False
        if not self.todo and not self.in_flight and not self.stopped:
            self._more()
        while self.todo and self.executor.free() > 0:
            round_, config = self.todo[0]
            if time.time() - self.started + self.durations.predict(config) > self.options.max_time_s:
                self.todo.clear()  # it would end past the cap: stop before, not after (issue 54, item 1)
                self.stopped = self.stopped or "max_time_s"
                break
            self.todo.pop(0)
            meta: dict[str, Any] = {"phase": PHASE, "round": round_}
            if self.default is not None and config.key == self.default.key:
                meta["default"] = True
            candidate = Candidate(self.next_id, config, config, meta)
            self.next_id -= 1
            self.in_flight[candidate.id] = candidate
            self.executor.submit(candidate)
            asked = True
        return asked

    def stop_reason(self) -> StopReason | None:
        self.show()  # also while the last measurements run after the phase stopped planning (never silent)
        return StopReason.EXHAUSTED if self.stopped and not self.todo else None

    def idle_reason(self) -> StopReason:
        return StopReason.EXHAUSTED

    def finish(self, result: Result) -> None:
        if self.store is not None:
            self.store.record(result)
        self.in_flight.pop(result.id, None)
        self.results.append(result)
        self.durations.add(result)
        self.show()


def run_confirm(executor: Executor, search: Sequence[Result], prior: Sequence[Result], direction: Direction,
                options: ConfirmConfig, store: Recorder | None = None,
                default: Config | None = None, progress: PhaseProgress | None = None) -> tuple[list[Result], bool, str]:
    """Measure until decided on ``executor``; returns (every confirmation result, completed, why it
    stopped). ``prior``: confirmation results already recorded (resume). An interrupt (Ctrl-C,
    SIGTERM) is re-raised once every collected measurement is recorded (issue 47, case 4: it used to
    end the phase as if decided, and the run exited 0 as ``finished``); a resume re-runs the phase
    and measures only the (round, configuration) pairs without a record."""
    configs = confirm_configs(search, direction, options.k, default)
    phase = ConfirmPhase(executor, configs, prior, store, default, options, direction, progress, search)
    reason, interrupt = drive(executor, phase)
    if interrupt is not None:
        raise interrupt
    return phase.results, reason is not StopReason.INTERRUPTED, phase.stopped or "interrupted"


def confirm_after_search(executor: Executor, search: Sequence[Result], prior: Sequence[Result],
                         direction: Direction, options: ConfirmConfig, noisy: bool,
                         store: Recorder | None = None, default: Config | None = None,
                         progress: PhaseProgress | None = None) -> Mapping[str, Any] | None:
    """The app's one call: run the phase if enabled, return the ``confirm`` summary section.

    Exact (not noisy) problems run no phase; one with a default gets it measured once, if the
    search did not, and an exact comparison (:func:`exact_versus_default`)."""
    if not options.enabled(noisy):
        if default is None or noisy or options.k == 0 or options.rounds == 0:
            return None
        return exact_versus_default(executor, [*search, *prior], direction, default, store)
    started = time.time()
    confirmations, complete, stopped = run_confirm(executor, search, prior, direction, options, store, default,
                                                   progress)
    report = confirm_report(search, confirmations, direction, options.k, complete, default,
                            equivalence=options.equivalence, stopped=stopped)
    return {**report, "max_rounds": options.max_rounds, "max_time_s": options.max_time_s,
            "wall_time_s": time.time() - started}


def exact_versus_default(executor: Executor, search: Sequence[Result], direction: Direction,
                         default: Config, store: Recorder | None) -> dict[str, Any]:
    """A deterministic problem's best against its default: one measurement each is exact, so the
    interval is the point (a ratio of 1 is "no gain")."""
    started = time.time()
    measured = [r for r in search if r.config.key == default.key and r.ok]
    complete = True
    if not measured:
        done, complete, _ = run_confirm(executor, [], [], direction, ConfirmConfig(k=0, rounds=1), store, default)
        measured = [r for r in done if r.ok]
    top = top_k(search, direction, 1, default.key)
    ranks = search_ranks(search, direction)
    report: dict[str, Any] = {"k": 1, "rounds": 0, "complete": complete, "candidates": [], "best": None,
                              "search_best_confirmed": False, "exact": True, "decision": None, "stopped": "exact",
                              "default": {"config": dict(default), **entry(measured[:1]),
                                          "search_rank": ranks.get(default.key)}, "versus_default": None}
    if top:
        best = top[0]
        report["best"] = {"rank": ranks[best.config.key], "config": dict(best.config),
                          "search_objective": best.objective, **entry([best])}
        if measured:
            c = paired_speedup([replace_round(best)], [replace_round(measured[0])], direction, "tuning (exact)",
                               exact=True)
            report["versus_default"] = c
            ratio = c["speedup"] if c else 1.0
            report["decision"] = "faster" if ratio > 1 else ("slower" if ratio < 1 else None)  # exact: no band
    return {**report, "wall_time_s": time.time() - started}


def replace_round(result: Result, round_: int = 0) -> Result:
    """``result`` as confirmation round ``round_`` (pairs a search measurement with the default's)."""
    meta = {**result.candidate.meta, "round": round_}
    return replace(result, candidate=replace(result.candidate, meta=meta))
