"""The one ask/tell loop's steps (issue 52, item 2): what a host that owns the loop, or calls us one evaluation at a
time, gets from searchlab.run.loop."""

from __future__ import annotations

from typing import Any

import pytest

from searchlab.core.records import Candidate, Config, FailureMode, Measurement, Status
from searchlab.core.spaces import IntKnob, KnobSpace
from searchlab.run.loop import Budget, SearchLoop, StopReason, search
from searchlab.searchers import RandomSearcher, build_searcher

SPACE = KnobSpace((IntKnob("x", 0, 49),))


class Counted(RandomSearcher):
    """A random searcher that counts its closes and remembers the budget it was told."""

    name = "counted"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def _value(candidate: Candidate) -> Measurement:
    return Measurement.ok(float((int(candidate.config["x"]) - 17) ** 2 + 1))


def test_search_drives_a_hosts_evaluation_to_the_budget_and_closes_once() -> None:
    searcher = build_searcher(Counted, SPACE, seed=0)
    assert isinstance(searcher, Counted)
    loop = search(searcher, _value, budget=Budget(evaluations=12))
    assert loop.reason is StopReason.EVALUATIONS and len(loop.state.results) == 12 == len(searcher.history)
    assert searcher.evaluation_budget == 12 and searcher.closed == 1
    loop.close()
    assert searcher.closed == 1  # once, however often it is asked


def test_the_host_stops_before_measuring_and_the_candidate_is_dropped() -> None:
    searcher = build_searcher(Counted, SPACE, seed=1)
    seen: list[int] = []

    def evaluate(candidate: Candidate) -> Measurement | None:
        seen.append(candidate.id)
        return None if len(seen) == 5 else _value(candidate)  # Kernel Tuner's budget ran out before the 5th

    loop = search(searcher, evaluate, horizon=30)
    assert loop.reason is StopReason.HOST and len(loop.state.results) == 4
    assert searcher.evaluation_budget == 30 and list(searcher.pending) == [seen[-1]]  # asked, never told
    assert searcher.closed == 1


def test_an_interrupt_reaches_the_hosts_caller_after_the_searcher_is_closed() -> None:
    searcher = build_searcher(Counted, SPACE, seed=2)

    def evaluate(candidate: Candidate) -> Measurement:
        if candidate.id == 3:
            raise KeyboardInterrupt
        return _value(candidate)

    with pytest.raises(KeyboardInterrupt):
        search(searcher, evaluate)
    assert searcher.closed == 1 and len(searcher.history) == 3


def test_the_steps_a_host_calls_record_then_tell() -> None:
    """propose / finish / observe / abandon, with a recorder: every result recorded before the searcher hears it."""
    searcher = build_searcher(Counted, SPACE, seed=3)
    recorded: list[int] = []

    class Recorder:
        def record(self, result: Any) -> None:
            assert result.id not in {r.id for r in searcher.history}  # not told yet
            recorded.append(result.id)

    loop = SearchLoop(searcher, store=Recorder(), horizon=10)
    first, second = loop.propose(1)[0], loop.propose(1)[0]
    assert set(searcher.pending) == {first.id, second.id} and loop.pending == 2
    loop.finish(_result(first))
    loop.abandon(second, "pruned by the tool")
    observed = loop.observe(Config(x=17), Measurement.ok(1.0))  # a trial the tool ran without asking
    assert observed.id == second.id + 1 and searcher.best is not None and searcher.best.config == Config(x=17)
    assert recorded == [first.id, second.id, observed.id] and not searcher.pending and loop.pending == 0
    assert searcher.history[1].measurement.failure_mode is FailureMode.RUNTIME
    assert [r.status for r in loop.state.results] == [Status.OK, Status.FAILED, Status.OK]


def _result(candidate: Candidate) -> Any:
    from searchlab.core.records import Result

    return Result(candidate, _value(candidate))


def test_without_a_budget_a_host_bounded_loop_never_stops_itself() -> None:
    searcher = build_searcher(Counted, SPACE, seed=4)
    loop = SearchLoop(searcher)
    for _ in range(60):  # more than the space: the searcher ends, not the loop
        batch = loop.propose(1)
        if not batch:
            break
        loop.finish(_result(batch[0]))
    assert loop.stop_reason() is None and len(searcher.history) == 50 and searcher.done
