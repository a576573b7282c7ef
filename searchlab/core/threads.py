"""One thread policy for every process that proposes or replays: threads = its CPU share.

Why: model-based searchers do their linear algebra in thread pools that size themselves to
the machine, not to the process's share of it -- OpenBLAS (numpy, scipy: ``auto``'s GP),
torch's intra-op pool (Optuna's ``GPSampler`` behind ``optuna_gp``) and OpenMP. When a study
runs one replay per core, or a run's proposer shares the machine with evaluators pinned to
the other cores, every pool spinning on every core oversubscribes them: issue 16 saw an
``optuna_gp`` run take 9-14 minutes beside others instead of 15 s alone. For GPs of a few
hundred points one thread is also the fastest (docs/threads.md has the measurements).

The share of a process (:func:`cpu_share`), smallest of:

- ``SEARCHLAB_THREADS`` when set (a user's explicit choice; ``0`` turns the policy off);
- inside a Ray task or actor: the CPUs Ray assigned to it (``num_cpus``; at least 1). Ray
  2.60 sets ``OMP_NUM_THREADS`` to that number only when the variable is unset, so a
  driver's own ``OMP_NUM_THREADS`` leaks into every worker, and a worker process reused
  for tasks of different sizes keeps the pools it built first -- hence we set it ourselves;
- the cores the process may run on (``sched_getaffinity``: the serial executor pins itself
  to one core for OpenCL measurements).

:func:`limit_pools` caps the pools at the share: the environment variables (read by libraries loaded
later, and inherited by child processes), the pools of libraries already loaded
(``threadpoolctl``: OpenBLAS/MKL/OpenMP), and torch's intra-op pool if torch is loaded (torch
itself is never imported here: it reads ``OMP_NUM_THREADS`` when it loads).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable

ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
            "NUMEXPR_NUM_THREADS")
OVERRIDE = "SEARCHLAB_THREADS"


def _affinity() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def ray_cpus() -> float | None:
    """CPUs Ray assigned to this process's current task or actor; None outside a Ray worker.

    Never imports Ray: a process that has not imported it is not a Ray worker."""
    if "ray" not in sys.modules:
        return None
    import ray

    if not ray.is_initialized():
        return None
    context = ray.get_runtime_context()
    from searchlab.core.ray_private import in_worker

    if not in_worker(context):
        return None
    get_assigned: Callable[[], dict[str, float]] = context.get_assigned_resources  # Ray leaves it unannotated
    assigned = get_assigned()
    return float(assigned.get("CPU", 0.0))


def _override() -> int | None:
    """``SEARCHLAB_THREADS``: None when unset, 0 for "leave every pool alone", else a cap."""
    from searchlab.errors import ConfigError

    text = os.environ.get(OVERRIDE, "").strip()
    if not text:
        return None
    if not text.isdigit():
        raise ConfigError(f"{OVERRIDE}={text!r}: must be an integer >= 0 (0: searchlab leaves thread pools alone)")
    return int(text)


def cpu_share(cores: int | None = None) -> int:
    """Threads this process should use: the smallest of ``cores`` (a caller's share, e.g. the
    cores an executor leaves to the proposer), the override, Ray's assignment and the affinity."""
    limits = [_affinity()]
    if cores is not None:
        limits.append(max(1, cores))
    for extra in (_override() or None, ray_cpus()):
        if extra is not None:
            limits.append(max(1, math.floor(extra)))  # Ray: num_cpus < 1 (or 0, an actor) -> one thread
    return min(limits)


def limit_pools(cores: int | None = None) -> int | None:
    """Cap this process's thread pools at :func:`cpu_share` ``(cores)`` and return the cap;
    None (nothing touched) when ``SEARCHLAB_THREADS=0``.

    A cap, never a raise: a pool or variable already smaller (a user's choice) is kept."""
    if _override() == 0:
        return None
    n = cpu_share(cores)
    for name in ENV_VARS:
        current = os.environ.get(name, "")
        if not (current.isdigit() and 0 < int(current) <= n):
            os.environ[name] = str(n)
    from threadpoolctl import ThreadpoolController

    for lib in ThreadpoolController().lib_controllers:  # native libraries already loaded (OpenBLAS, OpenMP)
        if lib.num_threads > n:
            lib.set_num_threads(n)
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() > n:
        torch.set_num_threads(n)
    return n


def observed_threads() -> dict[str, int]:
    """The pools' sizes as they are now (tests, benchmarks); torch only if it is loaded."""
    from threadpoolctl import ThreadpoolController

    seen: dict[str, int] = {}
    for lib in ThreadpoolController().lib_controllers:
        seen[lib.internal_api] = max(seen.get(lib.internal_api, 0), int(lib.num_threads))
    torch = sys.modules.get("torch")
    if torch is not None:
        seen["torch"] = int(torch.get_num_threads())
    return seen
