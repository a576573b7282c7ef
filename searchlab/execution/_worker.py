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
from searchlab.errors import ConfigError, EvaluationError
from searchlab.records import Config, FailureMode, Measurement, Status


def build_problem(source: Problem | Mapping[str, Any]) -> Problem:
    """A problem from an object or a config mapping whose ``_target_`` is a registered problem.

    Built by calling the registered class with the config's plain values, never through
    Hydra's recursive ``instantiate``: a nested ``_target_`` is data here (the grammar
    problem resolves its own objective), so no config can make us call another callable
    (docs/security.md). A missing mandatory value (``???``) is named in one line.
    """
    if isinstance(source, Problem):
        return source
    from omegaconf import OmegaConf

    from searchlab.errors import SearchlabError
    from searchlab.recompose import registered_class

    node = source if OmegaConf.is_config(source) else OmegaConf.create(dict(source))
    prefix = f"{node._get_full_key(None)}." if OmegaConf.is_config(node) and node._get_full_key(None) else ""  # type: ignore[union-attr]
    missing = sorted(str(k).removeprefix(prefix) for k in OmegaConf.missing_keys(node))  # type: ignore[arg-type]
    target = node.get("_target_")  # type: ignore[union-attr]
    if missing:
        raise ConfigError(f"problem.{missing[0]}: no value given (problem {target!r} needs problem.{missing[0]}=...)")
    cls = registered_class("problem", target, "problem")
    data = OmegaConf.to_container(node, resolve=True)
    assert isinstance(data, dict)
    kwargs = {str(k): v for k, v in data.items() if not str(k).startswith("_")}
    try:
        problem = cls(**kwargs)
    except SearchlabError:
        raise
    except Exception as exc:  # an option the class does not take, or a value it cannot use
        reason = " ".join(str(exc).split())[:500]  # one line, whatever the library's message looks like
        raise ConfigError(f"problem {target!r} could not be built: {type(exc).__name__}: {reason}") from None
    if not isinstance(problem, Problem):
        raise ConfigError(f"problem target {target!r} is not a searchlab Problem")
    return problem


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
