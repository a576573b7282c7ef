"""Every phase respects its printed caps (issue 54, item 1): a measurement that would end past the cap is
not started. The trial's confirm phase printed "elapsed 1:17 (cap 1:00)": caps were checked between
rounds only, and five rounds were always measured first.

Virtual time: each measurement takes a fixed number of virtual seconds on a one-worker executor double, and
the phases read that clock (their module's ``time``), so no test depends on how busy the machine is.
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import searchlab.adapters.futhark._versus as versus
import searchlab.run.budget as budget
import searchlab.run.confirm as confirm
import searchlab.run.loop as loop
from searchlab.core.records import Candidate, Config, Direction, Measurement, Result
from searchlab.core.spaces import IntKnob, KnobSpace
from searchlab.run.confirm import ConfirmConfig, ConfirmPhase, Durations
from searchlab.run.loop import Budget, SearchLoop, StopReason, drive
from searchlab.searchers import RandomSearcher


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def time(self) -> float:
        return self.now


class OneWorker:
    """An executor double: one worker; each measurement takes ``seconds(config)`` of virtual time and
    its objective is ``value(config)``."""

    def __init__(self, clock: Clock, seconds: Any, value: Any) -> None:
        self.clock, self.seconds, self.value = clock, seconds, value
        self.running: tuple[Candidate, float] | None = None
        self.ends: list[float] = []

    def free(self) -> int:
        return 0 if self.running else 1

    def submit(self, candidate: Candidate) -> None:
        self.running = (candidate, self.clock.now)

    def collect(self, timeout: float | None = None) -> list[Result]:
        assert self.running is not None
        candidate, submitted = self.running
        self.running = None
        self.clock.now += self.seconds(candidate.config)
        self.ends.append(self.clock.now)
        return [Result(candidate, Measurement.ok(self.value(candidate.config)), "w0", "cpu", submitted, submitted,
                       self.clock.now)]

    def proposer_cores(self) -> int | None:
        return None


def _searched(seconds: float, configs: Sequence[Config], start: float) -> list[Result]:
    out = []
    for i, c in enumerate(configs):
        out.append(Result(Candidate(i, c, c), Measurement.ok(1.0 + i), "w0", "cpu", start + i * seconds,
                          start + i * seconds, start + (i + 1) * seconds))
    return out


def test_the_confirm_phase_starts_no_measurement_that_would_end_past_its_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(confirm, "time", clock)
    default, *others = [Config({"x": i}) for i in range(4)]
    worker = OneWorker(clock, lambda c: 7.0, lambda c: 10.0 if c == default else 9.0 + (clock.now % 3))
    search = _searched(7.0, [default, *others], clock.now - 40)
    options = ConfirmConfig(k=3, rounds=5, max_rounds=40, max_time_s=60.0)
    phase = ConfirmPhase(worker, [default, *others], [], None, default, options, Direction.MINIMIZE, search=search)  # type: ignore[arg-type]
    started = clock.now
    reason, interrupt = drive(worker, phase)  # type: ignore[arg-type]
    assert interrupt is None and reason is StopReason.EXHAUSTED
    # 7 s each: 8 measurements end at 56 s; a 9th would end at 63 s, past the 60 s cap: not started
    assert len(phase.results) == 8 and max(worker.ends) - started == 56.0
    assert phase.stopped == "max_time_s"
    # before: the five first rounds (20 measurements, 140 s) always ran, then the cap was checked between rounds


def test_a_prediction_is_the_configurations_latest_time_else_the_latest_of_any() -> None:
    a, b = Config({"x": 1}), Config({"x": 2})
    d = Durations([Result(Candidate(0, a, a), Measurement.ok(1.0), t_submit=10.0, t_end=13.0)])
    assert d.predict(a) == 3.0 and d.predict(b) == 3.0
    d.add(Result(Candidate(1, b, b), Measurement.ok(1.0), t_submit=20.0, t_end=21.0))
    assert d.predict(a) == 3.0 and d.predict(b) == 1.0
    assert Durations().predict(a) == 0.0  # nothing known: the first measurement always starts
    d.add(Result(Candidate(2, a, a), Measurement.ok(1.0), t_submit=0.0, t_end=5.0, cache_hit=True))
    assert d.predict(a) == 3.0  # a cache hit measured nothing


def test_the_search_starts_no_evaluation_that_would_end_past_the_wall_time(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(loop, "time", clock)
    monkeypatch.setattr(budget, "time", clock)  # the loop's counters (LoopState.elapsed) read this clock
    space = KnobSpace((IntKnob("x", 0, 99),))
    worker = OneWorker(clock, lambda c: 30.0 if c["x"] % 2 else 10.0, lambda c: float(c["x"]))
    search = SearchLoop(RandomSearcher(space, seed=0), worker, Budget(evaluations=100, wall_time_s=180),  # type: ignore[arg-type]
                        space=space)
    search.state.started = clock.now
    assert search.run() is StopReason.WALL_TIME
    # the longest evaluation so far predicts the next: none ends past 180 s
    assert max(worker.ends) - search.state.started <= 180.0
    assert search.longest_s in (10.0, 30.0) and len(search.state.results) >= 180 // 30


class _Ctx:
    def __init__(self, clock: Clock, seconds: float, max_time_s: float) -> None:
        self.clock, self.seconds = clock, seconds
        self.rounds, self.max_rounds, self.max_time_s, self.equivalence = 5, 40, max_time_s, 0.02
        self.progress = None
        self.ends: list[float] = []

    def call(self, method: str, config: Mapping[str, int], names: list[str], runs: int) -> dict[str, Any]:
        self.clock.now += self.seconds
        self.ends.append(self.clock.now)
        value = 2.0 if config.get("t") else 2.0 + (self.clock.now % 2)  # tuned and untuned alike: undecided
        return {n: {"median": value} for n in names}


def test_the_validation_rounds_start_no_round_that_would_end_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(versus, "time", clock)
    ctx = _Ctx(clock, 4.0, 60.0)  # a round of 3 configurations: 12 s
    started = clock.now
    configs = {"untuned": {"t": 0}, "all-false": {"t": 0, "f": 1}, "tuned": {"t": 1}}
    rounds = versus.validation_rounds(types.SimpleNamespace(), ctx, configs, ["d"], 2)  # type: ignore[arg-type]
    assert max(ctx.ends) - started <= 60.0 and len(rounds["tuned"]) == 5  # 5 rounds end at 60 s; a 6th would pass it
    ctx2 = _Ctx(clock, 9.0, 60.0)  # 27 s a round: the third would end at 81 s, so only two (the first always runs)
    started = clock.now
    rounds = versus.validation_rounds(types.SimpleNamespace(), ctx2, configs, ["d"], 2)  # type: ignore[arg-type]
    assert len(rounds["tuned"]) == 2 and max(ctx2.ends) - started == 54.0
