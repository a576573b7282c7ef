"""The Ray executor's pieces inside a worker and on the driver: the evaluator actor, its slot, and
the local Ray environment (loopback only, token authentication; docs/security.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from searchlab.core.problem import DeviceInfo, DeviceNeed
from searchlab.core.records import Candidate, Measurement
from searchlab.core.threads import limit_pools
from searchlab.run.execution._base import ProblemSource, WorkerInfo
from searchlab.run.execution._worker import WorkerRuntime, limit_threads

OPENCL_CPU = "opencl_cpu"
STARTUP_TIMEOUT_S = 300.0


LOOPBACK = "127.0.0.1"


def local_ray_environment() -> None:
    """Loopback-only services and token authentication for a Ray cluster started here.

    Why this way: Ray 2.60 maps ``--node-ip-address=127.0.0.1`` back to the machine's
    external address on Linux (``services.resolve_ip_for_localhost``), so its gRPC servers
    (gcs_server, raylets, core workers) listen on every interface. With
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (Ray's single-machine mode; read by the driver
    and inherited by every Ray process) the node address stays 127.0.0.1 and all of them,
    the runtime-env agent included, bind to it -- ``tests/run/test_ray_security.py`` lists the
    sockets. ``RAY_AUTH_MODE=token`` is Ray's default for a new local cluster; setting it
    explicitly keeps it and silences the warning Ray prints when the mode is unset. A
    user's own settings of either variable win.
    """
    import sys

    imported = "ray._raylet" in sys.modules
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "token")
    if imported:  # Ray read both at import: refresh them as Ray's own _enable_token_auth does
        from searchlab.core import ray_private

        ray_private.set_cluster_mode_from_environment()
        ray_private.reload_config()


def startup_failure(index: int, exc: BaseException) -> str:
    """One line naming why worker ``index`` could not start, and the fix (issue 35, item 5): Ray's own
    message is a remote traceback of some 60 lines."""
    from ray.exceptions import OutOfMemoryError

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, OutOfMemoryError) or "OutOfMemory" in text or "memory usage" in text.lower():
        return (f"worker {index} was stopped by Ray's out-of-memory killer while starting (the node's memory is "
                f"above Ray's threshold); fix: fewer workers (executor.workers=N), a machine with more free memory, or "
                f"a higher RAY_memory_usage_threshold")
    cause = getattr(exc, "cause", None)
    if cause is not None and not isinstance(cause, type(exc)):
        first = str(cause).strip().splitlines()[-1:] or [type(cause).__name__]
        return f"worker {index} failed while building the problem: {type(cause).__name__}: {first[0][:300]}"
    lines = [line.strip() for line in str(exc).splitlines() if line.strip() and not line.startswith((" ", "\t"))]
    reason = next((line for line in lines if "Traceback" not in line), type(exc).__name__)
    return (f"worker {index} could not start ({type(exc).__name__}: {reason[:300]}); fix: check the problem builds "
            f"with executor=serial, or ask for fewer workers (executor.workers=N)")


def _cpu_per_gpu_actor() -> int:
    """1 if every node that has GPUs also has a CPU per GPU (a GPU actor then holds one), else 0.

    Per node, not cluster-wide: on a cluster whose GPU node has fewer CPUs than GPUs, a CPU
    per actor would leave GPU actors unplaceable while the head's CPUs sit idle (issue 24).
    """
    import ray

    listed: list[dict[str, Any]] = cast(Callable[[], list[dict[str, Any]]], ray.nodes)()  # untyped in Ray
    nodes = [n.get("Resources", {}) for n in listed if n.get("Alive")]
    return 1 if all(r.get("CPU", 0) >= r.get("GPU", 0) for r in nodes if r.get("GPU", 0) > 0) else 0



class EvaluatorActor:
    """Runs inside a Ray worker process; wrapped with ``ray.remote`` at start.

    A GPU actor holds one Ray GPU id (``num_gpus=1``) and opens the OpenCL device that id
    names (:func:`searchlab.core.opencl.pinned_device`; ``lister`` is its enumeration seam).
    """

    def __init__(self, source: ProblemSource, device: DeviceInfo, need: str, lister: Any = None) -> None:
        limit_threads(device)  # before pyopencl is imported in this process
        limit_pools(len(device.cores) or None)  # BLAS/OpenMP/torch at Ray's share (docs/threads.md)
        if need == DeviceNeed.OPENCL.value:
            import ray

            from searchlab.core.opencl import pinned_device

            kind = "gpu" if device.kind == "gpu" else "cpu"
            gpu_ids = tuple(str(g) for g in ray.get_gpu_ids()) if kind == "gpu" else ()
            device = pinned_device(kind, device.cores, gpu_ids, lister)
        self.runtime = WorkerRuntime(source, device)

    def ready(self) -> tuple[DeviceInfo, int, str]:
        from searchlab.run.execution._base import current_node

        return self.runtime.device, os.getpid(), current_node()

    def environment(self) -> dict[str, str]:
        """What the worker sees of its placement (tests, diagnostics)."""
        return {k: os.environ.get(k, "") for k in ("CUDA_VISIBLE_DEVICES", "POCL_CPU_MAX_CU_COUNT")}

    def evaluate(self, config: Any) -> tuple[Measurement, float, float]:
        return self.runtime.evaluate(config)

    def call(self, method: str, *args: Any) -> Any:
        return self.runtime.call(method, *args)

    def close(self) -> None:
        """The problem's teardown (scratch directories), before the executor kills the actor."""
        self.runtime.close()


@dataclass
class _Slot:
    index: int
    options: dict[str, Any]
    device: DeviceInfo
    actor: Any = None
    info: WorkerInfo | None = None
    candidate: Candidate | None = None
    ref: Any = None
    submitted: float = 0.0
    pid: int = 0
    node: str = ""
    replaced: int = field(default=0)
