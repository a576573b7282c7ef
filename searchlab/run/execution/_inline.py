"""The inline executor: a host's own evaluation as the loop's one worker (issue 52, item 2).

Kernel Tuner calls a strategy with its cost function, and tuning's live DFT replays measure through a shared
cache: each evaluates one configuration at a time, in this thread, its own way. Rather than a loop of their own,
they hand that evaluation to :func:`searchlab.run.loop.search` as this executor, so the one loop asks, records,
tells and stops for them too. No problem is built, no timer is set (the host enforces its own limits), and an
exception from the evaluation propagates to the caller unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from searchlab.core.problem import DeviceInfo
from searchlab.core.records import Candidate, Measurement, Result
from searchlab.run.execution._base import Executor, ProblemSource, WorkerInfo


class InlineExecutor(Executor):
    """``evaluate(candidate)``: its measurement, or None when the host stopped before measuring it (nothing is
    collected then: :func:`searchlab.run.loop.search` drops the candidate and stops)."""

    name = "inline"

    def __init__(self, evaluate: Callable[[Candidate], Measurement | None]) -> None:
        self.evaluate = evaluate
        self._queued: list[tuple[Candidate, float]] = []
        self._workers = [WorkerInfo("inline-0", DeviceInfo())]

    def start(self, problem: ProblemSource) -> list[WorkerInfo]:
        return self._workers

    @property
    def workers(self) -> list[WorkerInfo]:
        return self._workers

    def free(self) -> int:
        return 0 if self._queued else 1

    def in_flight(self) -> int:
        return len(self._queued)

    def submit(self, candidate: Candidate) -> None:
        self._queued.append((candidate, time.time()))

    def collect(self, timeout: float | None) -> list[Result]:
        if not self._queued:
            return []
        candidate, submitted = self._queued.pop(0)
        start = time.time()
        measurement = self.evaluate(candidate)
        if measurement is None:
            return []
        return [Result(candidate, measurement, self._workers[0].name, "", submitted, start, time.time())]

    def call(self, method: str, *args: Any) -> Any:
        raise NotImplementedError("the inline executor has no problem to call")

    def close(self) -> None:
        self._queued.clear()
