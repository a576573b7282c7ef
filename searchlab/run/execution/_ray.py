"""The Ray executor: one persistent actor per device, evaluations never retried silently.

- GPUs: one actor per GPU (``num_gpus=1``); Ray sets ``CUDA_VISIBLE_DEVICES``, which the
  NVIDIA OpenCL driver honours, so the actor's OpenCL GPU is the one Ray assigned.
- No GPU, OpenCL problem: actors on pinned CPU cores through the custom resource
  ``opencl_cpu`` (one unit per core), pocl limited to those cores before pyopencl loads.
  One core is kept for the driver, so a 2-core machine gets one evaluator by default; the
  evaluators get the cores that are idle when they start (``_cores``: not a core another
  process keeps busy).
- Timeouts: ``ray.wait`` with the nearest deadline, then ``ray.kill`` and a new actor
  (``ray.cancel(force=True)`` is refused for actor tasks in Ray 2.x). A dead actor (pocl
  aborts the process when local memory is exceeded) becomes a CRASHED result and a new
  actor. Ray is started only if it is not running, and shut down only if we started it.
- Security (issue 10, item 2; docs/security.md): a cluster we start listens on loopback only
  and keeps Ray's token authentication on (``RAY_AUTH_MODE=token``, set explicitly so Ray
  does not warn about it on every run). ``executor.address=`` is the only way across machines.
- One local start (issue 51): :func:`searchlab.run.execution._local.start_local` is the only ``ray.init`` of a
  new cluster in searchlab (this executor, a study's replays and ``searchlab reproduce`` call it).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any, cast

from searchlab.core.problem import DeviceInfo, DeviceNeed
from searchlab.core.records import Candidate, FailureMode, Measurement, Result, Status
from searchlab.errors import ConfigError, ExecutorError
from searchlab.recompose import build_problem
from searchlab.run.execution._base import Executor, ProblemSource, WorkerInfo
from searchlab.run.execution._cores import idle_first
from searchlab.run.execution._local import start_local, stop_local
from searchlab.run.execution._ray_actor import (
    OPENCL_CPU,
    STARTUP_TIMEOUT_S,
    EvaluatorActor,
    _cpu_per_gpu_actor,
    _Slot,
    local_ray_environment,
    startup_failure,
)


class RayExecutor(Executor):
    name = "ray"
    __runtime__ = frozenset({"opencl_lister"})  # a test seam, not an option (searchlab.core.schema)

    def __init__(self, workers: int | None = None, timeout_s: float | None = 600.0, address: str | None = None,
                 cpus_per_worker: int | None = None, connect_timeout_s: float = 10.0,
                 startup_timeout_s: float = STARTUP_TIMEOUT_S, opencl_lister: Any = None) -> None:
        """The options (declared once here; searchlab.core.schema).

        Args:
            workers: evaluator actors (default: one per GPU, else half the cores)
            timeout_s: per evaluation; past it the worker and what it started are killed and replaced
            address: join an existing Ray cluster (host:port, or auto)
            cpus_per_worker: CPUs each actor holds (default 1; OpenCL CPU workers: their cores)
            connect_timeout_s: how long executor.address may take to accept a connection before the run is refused
            startup_timeout_s: how long a worker may take to become ready before the run is refused
        """
        if workers is not None and workers < 1:
            raise ConfigError(f"executor.workers={workers}: must be a positive integer or null")
        if timeout_s is not None and timeout_s <= 0:
            raise ConfigError(f"executor.timeout_s={timeout_s}: must be positive or null")
        if cpus_per_worker is not None and cpus_per_worker < 0:
            raise ConfigError(f"executor.cpus_per_worker={cpus_per_worker}: must be >= 0 or null")
        for key, value in (("connect_timeout_s", connect_timeout_s), ("startup_timeout_s", startup_timeout_s)):
            if not value > 0:
                raise ConfigError(f"executor.{key}={value}: must be positive")
        self.startup_timeout_s = startup_timeout_s
        from searchlab.run.execution._join import auth_mode, check_reachable

        auth_mode()  # a typo in RAY_AUTH_MODE is refused before anything starts, for a local cluster too
        if address or os.environ.get("RAY_ADDRESS"):
            source = "executor.address" if address else "RAY_ADDRESS"
            check_reachable(str(address or os.environ.get("RAY_ADDRESS")), source, connect_timeout_s)
        self.requested, self.timeout_s, self.address, self.cpus_per_worker = workers, timeout_s, address, cpus_per_worker
        self._slots: list[_Slot] = []
        self._started_ray = False
        self._available: dict[str, float] = {}  # a joined cluster's free resources before our workers took theirs
        self._source: ProblemSource | None = None
        self._need = DeviceNeed.NONE
        self._remote: Any = None
        self._lister = opencl_lister  # the OpenCL enumeration seam (searchlab.core.opencl.pinned_device)
        self._nodes: dict[str, str] = {}  # worker name -> Ray node id, replaced workers included

    # -- start-up ------------------------------------------------------------------------
    def _init_ray(self) -> None:
        address = self.address or os.environ.get("RAY_ADDRESS")
        if not address:
            local_ray_environment()
        import ray

        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if ray.is_initialized():
            return
        if address:  # join: "auto" finds a cluster started with `ray start` on this machine
            from searchlab.run.execution._join import join_cluster

            join_cluster(address, "executor.address" if self.address else "RAY_ADDRESS")
            return
        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
        start_local(len(cores), {OPENCL_CPU: max(1, len(cores) - 1)})
        self._started_ray = True

    settle_s = 10.0

    def _plan(self) -> list[_Slot]:
        """Actor options per worker; refuses what the cluster cannot place.

        Resources of actors killed a moment ago come back asynchronously, so a refusal is
        retried for ``settle_s`` seconds before it is final (never a silent hang).
        """
        deadline = time.time() + self.settle_s
        while True:
            try:
                return self._plan_once()
            except ExecutorError:
                if time.time() > deadline:
                    raise
                time.sleep(0.25)

    def _plan_once(self) -> list[_Slot]:
        import ray

        available: dict[str, float] = cast(Callable[[], dict[str, float]], ray.available_resources)()  # untyped in Ray
        gpus = int(available.get("GPU", 0))
        cpus = available.get("CPU", 0.0)
        if self._need is DeviceNeed.OPENCL and gpus > 0:
            n = self.requested or gpus
            if n > gpus:
                raise ExecutorError(f"executor.workers={n}: the Ray cluster has {gpus} free GPU(s), one worker per GPU")
            per_cpu = _cpu_per_gpu_actor()
            return [_Slot(i, {"num_gpus": 1, "num_cpus": per_cpu}, DeviceInfo(kind="gpu")) for i in range(n)]
        if self._need is DeviceNeed.OPENCL:
            return self._plan_cpu_devices(available)
        per = 1 if self.cpus_per_worker is None else self.cpus_per_worker
        n = self.requested or max(1, int(cpus) // 2)
        if n * per > cpus:
            raise ExecutorError(f"executor.workers={n} with {per} CPU each needs {n * per} CPUs; "
                                f"the Ray cluster has {cpus:g} free")
        return [_Slot(i, {"num_cpus": per}, DeviceInfo()) for i in range(n)]

    def _plan_cpu_devices(self, available: dict[str, float]) -> list[_Slot]:
        units = int(available.get(OPENCL_CPU, 0))
        if units < 1:
            raise ExecutorError(f"the Ray cluster has no free '{OPENCL_CPU}' resource for OpenCL CPU workers "
                                f"(start its nodes with --resources '{{\"{OPENCL_CPU}\": N}}')")
        n = self.requested or max(1, (units + 1) // 2)
        per = self.cpus_per_worker or max(1, units // n)
        if n * per > units:
            raise ExecutorError(f"executor.workers={n} with {per} core(s) each needs {n * per} OpenCL CPU cores; "
                                f"{units} are free (one core is kept for the driver)")
        cores: list[tuple[int, ...]] = [() for _ in range(n)]
        if self._started_ray and hasattr(os, "sched_getaffinity"):
            free = sorted(os.sched_getaffinity(0))
            # idle cores first; with no load the first core is the one left to the driver (_cores)
            free = idle_first(free[1:] + free[:1])
            cores = [tuple(sorted(free[i * per:(i + 1) * per])) for i in range(n)]
        return [_Slot(i, {"num_cpus": 0, "resources": {OPENCL_CPU: per}}, DeviceInfo(kind="cpu", cores=cores[i]))
                for i in range(n)]

    def start(self, problem: ProblemSource) -> list[WorkerInfo]:
        if not (self.address or os.environ.get("RAY_ADDRESS")):
            local_ray_environment()  # before Ray is imported: it reads the environment then
        import ray

        self._source = problem
        self._need = build_problem(problem).device_need
        self._init_ray()
        self._remote = ray.remote(max_restarts=0, max_task_retries=0)(EvaluatorActor)
        try:
            self._slots = self._plan()
            if not self._started_ray:  # a joined cluster: one worker per node before two on one (issue 24)
                self._available = dict(getattr(ray, "available_resources")())  # noqa: B009 (untyped in Ray)
                for slot in self._slots:
                    slot.options["scheduling_strategy"] = "SPREAD"
            for slot in self._slots:
                slot.actor = self._spawn(slot)
            for slot in self._slots:
                self._await_ready(slot)
        except BaseException:
            self.close()
            raise
        return self.workers

    def _await_ready(self, slot: _Slot) -> None:
        import ray
        from ray.exceptions import GetTimeoutError, RayError

        try:
            device, slot.pid, slot.node = ray.get(slot.actor.ready.remote(), timeout=self.startup_timeout_s)
        except GetTimeoutError:
            raise ExecutorError(f"worker {slot.index} did not become ready within executor.startup_timeout_s="
                                f"{self.startup_timeout_s:g} (resources {slot.options} could not be placed, or its "
                                f"setup hung); ask for fewer (executor.workers=N) or give it longer") from None
        except RayError as exc:
            raise ExecutorError(startup_failure(slot.index, exc)) from None
        slot.info = WorkerInfo(f"ray-{slot.index}" + (f".{slot.replaced}" if slot.replaced else ""), device, slot.node)
        self._nodes[slot.info.name] = slot.node

    def _spawn(self, slot: _Slot) -> Any:
        return self._remote.options(**slot.options).remote(self._source, slot.device, self._need.value, self._lister)

    def _reap(self, slot: _Slot) -> None:
        """Kill the process groups a worker on this machine started, before the worker is killed."""
        from searchlab.run.execution._base import current_node
        from searchlab.run.execution._reap import kill_children

        if slot.pid and (self._started_ray or slot.node == current_node()):
            kill_children(slot.pid)

    def node_of(self, worker: str) -> str:
        return self._nodes.get(worker, "")

    def proposer_cores(self) -> int | None:
        """This machine's cores minus those the evaluators hold (a cluster we started; a
        joined cluster's evaluators may run elsewhere: no limit then)."""
        if not self._started_ray:
            return None
        held = sum(len(s.device.cores) or s.options.get("resources", {}).get(OPENCL_CPU, 0) or s.options.get("num_cpus", 0)
                   for s in self._slots)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        return max(1, cores - int(held))

    # -- running -------------------------------------------------------------------------
    @property
    def workers(self) -> list[WorkerInfo]:
        return [s.info for s in self._slots if s.info is not None]

    def free(self) -> int:
        return sum(1 for s in self._slots if s.candidate is None)

    def in_flight(self) -> int:
        return sum(1 for s in self._slots if s.candidate is not None)

    def submit(self, candidate: Candidate) -> None:
        slot = next((s for s in self._slots if s.candidate is None), None)
        if slot is None:
            raise ExecutorError("submit() with no free worker")
        slot.candidate, slot.submitted = candidate, time.time()
        slot.ref = slot.actor.evaluate.remote(candidate.config)

    def _replace(self, slot: _Slot) -> None:
        import ray

        self._reap(slot)
        try:
            ray.kill(slot.actor, no_restart=True)
        except Exception:  # its node may be gone: the new actor is placed on a live one
            pass
        slot.replaced += 1
        slot.actor = self._spawn(slot)
        self._await_ready(slot)

    def _finish(self, slot: _Slot, measurement: Measurement, start: float, end: float) -> Result:
        assert slot.candidate is not None and slot.info is not None
        result = Result(slot.candidate, measurement, slot.info.name, slot.info.device.name, slot.submitted, start, end)
        slot.candidate, slot.ref = None, None
        return result

    def _harvest(self, slot: _Slot) -> Result:
        import ray
        from ray.exceptions import OutOfMemoryError, RayActorError, RayTaskError

        try:
            measurement, start, end = ray.get(slot.ref)
            return self._finish(slot, measurement, start, end)
        except (RayActorError, OutOfMemoryError) as exc:  # OOM: Ray's memory monitor killed the worker
            now = time.time()
            message = f"worker process {slot.pid} died during the evaluation: {type(exc).__name__}"
            result = self._finish(slot, Measurement(Status.CRASHED, failure_mode=FailureMode.CRASH, message=message),
                                  slot.submitted, now)
            self._replace(slot)
            return result
        except RayTaskError as exc:  # the runtime types every exception; this is a bug, not a hang
            now = time.time()
            return self._finish(slot, Measurement.failed(FailureMode.RUNTIME, str(exc)[:2000]), slot.submitted, now)

    def collect(self, timeout: float | None) -> list[Result]:
        import ray

        busy = {id(s.ref): s for s in self._slots if s.candidate is not None}
        if not busy:
            return []
        wait = timeout
        if self.timeout_s is not None:
            nearest = min(s.submitted + self.timeout_s for s in busy.values()) - time.time()
            wait = max(0.0, nearest if wait is None else min(wait, nearest))
        refs = [s.ref for s in busy.values()]
        ready, _ = ray.wait(refs, num_returns=1, timeout=wait)
        if ready:
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        results = [self._harvest(busy[id(ref)]) for ref in ready]
        results.extend(self._expire())
        return results

    def _expire(self) -> list[Result]:
        if self.timeout_s is None:
            return []
        out = []
        now = time.time()
        for slot in self._slots:
            if slot.candidate is not None and now - slot.submitted > self.timeout_s:
                message = f"evaluation exceeded executor.timeout_s={self.timeout_s}; worker replaced"
                out.append(self._finish(slot, Measurement(Status.TIMEOUT, failure_mode=FailureMode.TIMEOUT,
                                                          message=message), slot.submitted, now))
                self._replace(slot)
        return out

    def call(self, method: str, *args: Any) -> Any:
        import ray

        slot = next((s for s in self._slots if s.candidate is None), self._slots[0])
        return ray.get(slot.actor.call.remote(method, *args))

    def close(self) -> None:
        if "ray" not in sys.modules:  # never imported, or a signal cut ``import ray`` short (issue 47): a
            return  # fresh import now would meet its half-initialised submodules; nothing was started
        import ray

        if not getattr(ray, "is_initialized", lambda: False)():
            return
        for slot in self._slots:
            if slot.actor is None:
                continue
            if slot.candidate is None and slot.info is not None:
                try:  # teardown: the problem removes its scratch (problem=command's /tmp/searchlab-command-*)
                    ray.get(slot.actor.close.remote(), timeout=30)
                except Exception:
                    pass
            self._reap(slot)
            try:
                ray.kill(slot.actor, no_restart=True)
            except Exception:
                pass
        self._slots = []
        if self._started_ray:
            stop_local()
            self._started_ray = False
        elif self._available:
            _await_released(ray, self._available)
            self._available = {}


_FLUCTUATING = ("node:", "memory", "object_store_memory")  # not held by a worker, or not for long


def _await_released(ray: Any, before: dict[str, float], timeout_s: float = 10.0) -> None:
    """On a joined cluster, wait (at most ``timeout_s``) until the resources our killed workers held are free
    again. ``ray.kill`` returns before the cluster has freed them, so the next run of a sweep, placing its
    workers one per node (SPREAD), could find a node still full and put two workers on the other one."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        free = ray.available_resources()
        if all(free.get(k, 0.0) + 1e-9 >= v for k, v in before.items() if not k.startswith(_FLUCTUATING)):
            return
        time.sleep(0.1)
