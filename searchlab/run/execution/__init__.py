"""Executors: serial (in process), Ray (one persistent actor per device) and auto (either, by the problem)."""

from searchlab.recompose import build_problem
from searchlab.run.execution._auto import AutoExecutor, needs_ray
from searchlab.run.execution._base import Executor, ProblemSource, WorkerInfo
from searchlab.run.execution._inline import InlineExecutor
from searchlab.run.execution._serial import SerialExecutor
from searchlab.run.execution._worker import WorkerRuntime, limit_threads

__all__ = [
    "AutoExecutor",
    "Executor",
    "InlineExecutor",
    "ProblemSource",
    "RayExecutor",
    "SerialExecutor",
    "WorkerInfo",
    "WorkerRuntime",
    "build_problem",
    "limit_threads",
    "needs_ray",
]


def __getattr__(name: str) -> object:  # Ray is imported only when its executor is used
    if name == "RayExecutor":
        from searchlab.run.execution import _ray

        return getattr(_ray, name)
    raise AttributeError(name)
