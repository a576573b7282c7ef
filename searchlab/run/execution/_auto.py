"""``executor=auto`` (the default): in process when nothing needs Ray, Ray when something does.

Starting a local Ray cluster costs seconds (issue 35: ``problem=synthetic_knobs searcher=random
budget.evaluations=5`` took 11.7 s on Ray and 2.2 s in process), which a run that needs no
device and one worker buys nothing with. So auto picks:

- the serial executor (in process) when the problem declares no device
  (``Problem.device_need`` is ``none``: replays, tables, synthetic problems,
  ``searcher_settings``), at most one worker is asked for (``executor.workers`` unset or 1)
  and no cluster is named (``executor.address`` unset, no ``RAY_ADDRESS``);
- Ray otherwise: the problem needs a device (OpenCL: one pinned actor per device), several
  workers are asked for, or a cluster is named.

``executor=serial`` and ``executor=ray`` still force one. The choice is made once the problem
is built (:func:`resolve`, called by ``searchlab.run.prepare``) and the run's records say which
executor ran (``summary.json`` ``executor``).
"""

from __future__ import annotations

import os
from typing import Any

from searchlab.core.problem import DeviceNeed, Problem
from searchlab.errors import ConfigError
from searchlab.recompose import build_problem
from searchlab.run.execution._base import Executor, ProblemSource, WorkerInfo
from searchlab.run.execution._serial import SerialExecutor


def needs_ray(problem: Problem, workers: int | None, address: str | None) -> str | None:
    """Why ``problem`` needs the Ray executor, or None (in process will do)."""
    if problem.device_need is not DeviceNeed.NONE:
        return f"the problem needs a device ({problem.device_need.value})"
    if workers is not None and workers > 1:
        return f"executor.workers={workers}"
    if address or os.environ.get("RAY_ADDRESS"):
        return "a Ray cluster is named (executor.address / RAY_ADDRESS)"
    return None


class AutoExecutor(Executor):
    """Serial or Ray, chosen by the problem (module docstring); delegates to the chosen one."""

    name = "auto"

    def __init__(self, workers: int | None = None, timeout_s: float | None = 600.0, address: str | None = None,
                 cpus_per_worker: int | None = None) -> None:
        if workers is not None and (isinstance(workers, bool) or workers < 1):
            raise ConfigError(f"executor.workers={workers}: must be a positive integer or null, e.g. executor.workers=2")
        if timeout_s is not None and timeout_s <= 0:
            raise ConfigError(f"executor.timeout_s={timeout_s}: must be positive or null, e.g. executor.timeout_s=600")
        self.options: dict[str, Any] = {"workers": workers, "timeout_s": timeout_s, "address": address,
                                        "cpus_per_worker": cpus_per_worker}
        self.chosen: Executor | None = None

    def resolve(self, problem: Problem) -> Executor:
        """The executor this run uses for ``problem`` (made once; later calls return it)."""
        if self.chosen is None:
            o = self.options
            if needs_ray(problem, o["workers"], o["address"]) is None:
                self.chosen = SerialExecutor(timeout_s=o["timeout_s"])
            else:
                from searchlab.run.execution._ray import RayExecutor

                self.chosen = RayExecutor(**o)
        return self.chosen

    def _target(self) -> Executor:
        assert self.chosen is not None, "start() first"
        return self.chosen

    def start(self, problem: ProblemSource) -> list[WorkerInfo]:
        built = problem if isinstance(problem, Problem) else build_problem(problem)
        chosen = self.resolve(built)
        return chosen.start(built if isinstance(chosen, SerialExecutor) else problem)

    @property
    def workers(self) -> list[WorkerInfo]:
        return self._target().workers

    def free(self) -> int:
        return self._target().free()

    def in_flight(self) -> int:
        return self._target().in_flight()

    def submit(self, candidate: Any) -> None:
        self._target().submit(candidate)

    def collect(self, timeout: float | None) -> list[Any]:
        return self._target().collect(timeout)

    def call(self, method: str, *args: Any) -> Any:
        return self._target().call(method, *args)

    def node_of(self, worker: str) -> str:
        return self._target().node_of(worker)

    def proposer_cores(self) -> int | None:
        return self._target().proposer_cores()

    def close(self) -> None:
        if self.chosen is not None:
            self.chosen.close()
