"""Executors: serial (in process) and Ray (one persistent actor per device)."""

from searchlab.execution._base import Executor, ProblemSource, WorkerInfo
from searchlab.execution._serial import SerialExecutor
from searchlab.execution._worker import WorkerRuntime, build_problem

__all__ = [
    "Executor",
    "ProblemSource",
    "RayExecutor",
    "SerialExecutor",
    "WorkerInfo",
    "WorkerRuntime",
    "build_problem",
]


def __getattr__(name: str) -> object:  # Ray is imported only when its executor is used
    if name == "RayExecutor":
        from searchlab.execution import _ray

        return getattr(_ray, name)
    raise AttributeError(name)
