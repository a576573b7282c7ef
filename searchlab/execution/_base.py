"""The executor interface: workers that own devices and evaluate candidates.

An executor never retries an evaluation behind the searcher's back: a timeout or a dead
worker becomes a TIMEOUT or CRASHED result, and the searcher decides what to do.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

from searchlab.core.problem import DeviceInfo, Problem
from searchlab.records import Candidate, Result

ProblemSource = Union[Problem, Mapping[str, Any]]  # an object, or a Hydra config with _target_


@dataclass(frozen=True)
class WorkerInfo:
    name: str
    device: DeviceInfo
    node: str = ""  # Ray's node id of the worker's process ("" outside Ray)


def current_node() -> str:
    """Ray's node id of this process, "" when it is not part of a Ray cluster (issue 24).

    Ray is never imported for this: a process that has not imported it is not in a cluster.
    """
    import sys

    if "ray" not in sys.modules:
        return ""
    import ray

    return str(ray.get_runtime_context().get_node_id()) if ray.is_initialized() else ""


class Executor(ABC):
    """Evaluates candidates on workers; results come back through :meth:`collect`."""

    name: str = "executor"

    @abstractmethod
    def start(self, problem: ProblemSource) -> list[WorkerInfo]:
        """Start the workers and build the problem once in each."""

    @property
    @abstractmethod
    def workers(self) -> list[WorkerInfo]:
        """The running workers."""

    @abstractmethod
    def free(self) -> int:
        """How many more candidates can be submitted right now."""

    @abstractmethod
    def in_flight(self) -> int:
        """Candidates submitted and not yet collected."""

    @abstractmethod
    def submit(self, candidate: Candidate) -> None:
        """Start evaluating ``candidate`` on a free worker."""

    @abstractmethod
    def collect(self, timeout: float | None) -> list[Result]:
        """Finished results (at least one unless ``timeout`` passes or nothing is in flight)."""

    @abstractmethod
    def call(self, method: str, *args: Any) -> Any:
        """Run ``problem.method(*args)`` on a worker (for run-end validation)."""

    def node_of(self, worker: str) -> str:
        """The node ``worker`` runs on, recorded with each evaluation (``evaluations.node``):
        in process, this process's node (a replay task's, in a study on a cluster)."""
        return current_node()

    def proposer_cores(self) -> int | None:
        """Cores left to the searcher in this process while the workers evaluate (the thread
        policy caps its pools at them, docs/threads.md); None: no limit beyond the process's own."""
        return None

    @abstractmethod
    def close(self) -> None:
        """Stop the workers (and Ray, if this executor started it)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
