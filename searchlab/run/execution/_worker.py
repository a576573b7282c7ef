"""What runs inside a worker: build the problem once, evaluate with exceptions typed.

Exceptions cross the worker boundary once, here, and become a ``FAILED`` measurement
with a failure mode; nothing above this layer sees a problem's exception.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Mapping
from typing import Any

from searchlab.core.problem import DeviceInfo, Problem
from searchlab.core.records import Config, FailureMode, Measurement, Status
from searchlab.errors import EvaluationError
from searchlab.recompose import build_problem  # re-exported: the worker builds its problem with it


class _Timeout(BaseException):
    """Raised by SIGALRM in the serial executor (a BaseException so problems don't eat it)."""


def limit_threads(device: DeviceInfo) -> None:
    """Pin the process and cap pocl's threads; must run before pyopencl is imported."""
    if device.cores:
        os.environ["POCL_CPU_MAX_CU_COUNT"] = str(len(device.cores))
        os.environ["POCL_MAX_PTHREAD_COUNT"] = str(len(device.cores))
        os.environ.setdefault("OMP_NUM_THREADS", str(len(device.cores)))
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, device.cores)


class WorkerRuntime:
    """One problem instance bound to one device."""

    def __init__(self, source: Problem | Mapping[str, Any], device: DeviceInfo) -> None:
        self.problem = build_problem(source)
        self.problem.setup(device)
        self.device = self.problem.device

    def evaluate(self, config: Config) -> tuple[Measurement, float, float]:
        start = time.time()
        try:
            measurement = self.problem.evaluate(config)
        except _Timeout:
            raise
        except EvaluationError as exc:
            mode = exc.mode if isinstance(exc.mode, FailureMode) else FailureMode(str(exc.mode))
            measurement = Measurement(Status.FAILED, failure_mode=mode, message=exc.message)
        except Exception as exc:
            measurement = Measurement(
                Status.FAILED,
                failure_mode=FailureMode.RUNTIME,
                message=f"{type(exc).__name__}: {exc}",
                extra={"traceback": traceback.format_exc(limit=8)},
            )
        if not isinstance(measurement, Measurement):
            measurement = Measurement.failed(
                FailureMode.RUNTIME, f"evaluate returned {type(measurement).__name__}, not a Measurement"
            )
        return measurement, start, time.time()

    def call(self, method: str, *args: Any) -> Any:
        return getattr(self.problem, method)(*args)

    def close(self) -> None:
        self.problem.teardown()
