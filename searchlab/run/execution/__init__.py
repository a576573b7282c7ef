"""Executors: serial (in process) and Ray (one persistent actor per device)."""

from searchlab.recompose import build_problem
from searchlab.run.execution._base import Executor, ProblemSource, WorkerInfo
from searchlab.run.execution._serial import SerialExecutor
from searchlab.run.execution._worker import WorkerRuntime

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
        from searchlab.run.execution import _ray

        return getattr(_ray, name)
    raise AttributeError(name)
