"""The serial executor: one in-process worker, deterministic, for tests and cheap problems.

A per-evaluation timeout is enforced with ``SIGALRM`` when running in the main thread.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import deque
from typing import Any

from searchlab.core.problem import DeviceInfo, DeviceNeed
from searchlab.core.records import Candidate, FailureMode, Measurement, Result, Status
from searchlab.errors import ConfigError
from searchlab.run.execution._base import Executor, ProblemSource, WorkerInfo
from searchlab.run.execution._cores import idle_first
from searchlab.run.execution._worker import WorkerRuntime, _Timeout, limit_threads


def _raise_timeout(signum: int, frame: object) -> None:
    raise _Timeout()


class SerialExecutor(Executor):
    name = "serial"

    def __init__(self, workers: int = 1, timeout_s: float | None = 600.0, **_: Any) -> None:
        if workers != 1:
            raise ConfigError(f"executor.workers={workers}: the serial executor has exactly one worker")
        if timeout_s is not None and timeout_s <= 0:
            raise ConfigError(f"executor.timeout_s={timeout_s}: must be positive or null")
        self.timeout_s = timeout_s
        self._queue: deque[tuple[Candidate, float]] = deque()
        self._runtime: WorkerRuntime | None = None
        self._workers: list[WorkerInfo] = []
        self._affinity: set[int] = set()  # the caller's cores, while pinned

    def start(self, problem: ProblemSource) -> list[WorkerInfo]:
        from searchlab.recompose import build_problem

        built = build_problem(problem)
        device = DeviceInfo()
        if built.device_need is DeviceNeed.OPENCL:
            from searchlab.core.opencl import default_device

            device = default_device(cores=self._pin())
        self._runtime = WorkerRuntime(built, device)
        self._workers = [WorkerInfo("serial-0", self._runtime.device)]
        return self._workers

    def _pin(self) -> tuple[int, ...]:
        """Measure on one core, with pocl limited to one thread: unpinned pocl on a shared
        2-core machine gave 20-40 % spread, pinned 3-8 %. The core is the least busy one when
        the run starts (the last one on an idle machine; ``_cores``). Pins this process until
        :meth:`close`, which gives the caller its cores back."""
        if not hasattr(os, "sched_getaffinity"):
            return ()
        self._affinity = set(os.sched_getaffinity(0))
        cores = (idle_first(sorted(self._affinity, reverse=True))[0],)
        limit_threads(DeviceInfo(kind="cpu", cores=cores))
        return cores

    @property
    def workers(self) -> list[WorkerInfo]:
        return self._workers

    def free(self) -> int:
        return 0 if self._queue else 1

    def in_flight(self) -> int:
        return len(self._queue)

    def submit(self, candidate: Candidate) -> None:
        self._queue.append((candidate, time.time()))

    def _run(self, candidate: Candidate) -> tuple[Measurement, float, float]:
        assert self._runtime is not None, "start() first"
        use_alarm = self.timeout_s is not None and threading.current_thread() is threading.main_thread()
        if not use_alarm:
            return self._runtime.evaluate(candidate.config)
        previous = signal.signal(signal.SIGALRM, _raise_timeout)
        start = time.time()
        try:
            signal.setitimer(signal.ITIMER_REAL, self.timeout_s or 0.0)
            return self._runtime.evaluate(candidate.config)
        except _Timeout:
            message = f"evaluation exceeded executor.timeout_s={self.timeout_s}"
            return Measurement(Status.TIMEOUT, failure_mode=FailureMode.TIMEOUT, message=message), start, time.time()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def collect(self, timeout: float | None) -> list[Result]:
        if not self._queue:
            return []
        candidate, submitted = self._queue.popleft()
        measurement, start, end = self._run(candidate)
        worker = self._workers[0]
        return [Result(candidate, measurement, worker.name, worker.device.name, submitted, start, end)]

    def call(self, method: str, *args: Any) -> Any:
        assert self._runtime is not None, "start() first"
        return self._runtime.call(method, *args)

    def close(self) -> None:
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None
        if self._affinity:
            os.sched_setaffinity(0, self._affinity)
            self._affinity = set()
