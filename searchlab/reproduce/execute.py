"""Repeats spread over Ray workers; each finished repeat stored before the next is collected.

A repeat is one Ray task (``kt.run_repeat``). Ray reuses its worker processes, so a worker imports Kernel
Tuner and reads each T1 file once, however many repeats it runs: the per-repeat setup the reference pays
(argument generation, metadata, imports) is paid once per worker or not at all. ``ray_address`` joins a
cluster (the spaces' files must be at the same paths there); otherwise Ray starts on the local cores.
``workers=0`` runs in this process, in order (for tests and debugging).
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from searchlab.reproduce.plan import Plan
from searchlab.reproduce.store import RepeatStore

__all__ = ["pending", "run_all"]


def pending(plans: list[Plan], store: RepeatStore) -> list[tuple[Plan, int]]:
    return [(p, i) for p in plans for i in range(p.group.repeats) if not store.done(p.group.key, i)]


def _record(plan: Plan, index: int, outcome: dict[str, Any], wall: float) -> dict[str, Any]:
    return {"group": plan.group.key, "repeat": index, "wall_s": round(wall, 4), **outcome}


def _serial(todo: list[tuple[Plan, int]], store: RepeatStore, tick: Callable[[], None]) -> None:
    from searchlab.reproduce.kt import run_repeat

    for plan, index in todo:
        started = time.perf_counter()
        outcome = run_repeat(plan.for_repeat(index))
        store.save(plan.group.key, index, _record(plan, index, outcome, time.perf_counter() - started))
        tick()


def _timed(spec: Any) -> tuple[dict[str, Any], float]:
    from searchlab.reproduce.kt import run_repeat

    started = time.perf_counter()
    return run_repeat(spec), time.perf_counter() - started


def _ray(todo: list[tuple[Plan, int]], store: RepeatStore, workers: int, address: str | None,
         tick: Callable[[], None]) -> None:
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        # address="local": a new instance even where `ray start` left a cluster on this machine (a bare
        # ray.init() would join it and refuse num_cpus); Ray replaces the SIGTERM handler, ours is put back
        kwargs: dict[str, Any] = {"address": address} if address else {"address": "local", "num_cpus": workers}
        ours = signal.getsignal(signal.SIGTERM)
        ray.init(include_dashboard=False, log_to_driver=False, logging_level=40, **kwargs)  # 40: logging.ERROR
        signal.signal(signal.SIGTERM, ours)
    task = ray.remote(num_cpus=1)(_timed)
    slots = workers if not address else max(int(ray.cluster_resources().get("CPU", workers)), 1)  # type: ignore[no-untyped-call]
    queue = list(todo)
    flight: dict[Any, tuple[Plan, int]] = {}
    try:
        while queue or flight:
            while queue and len(flight) < 2 * slots:
                plan, index = queue.pop(0)
                flight[task.remote(plan.for_repeat(index))] = (plan, index)
            ready, _ = ray.wait(list(flight), num_returns=1)
            for ref in ready:
                plan, index = flight.pop(ref)
                outcome, wall = ray.get(ref)
                store.save(plan.group.key, index, _record(plan, index, outcome, wall))
                tick()
    finally:
        for ref in flight:
            ray.cancel(ref, force=True)
        if started_here:
            ray.shutdown()


def run_all(plans: list[Plan], store: RepeatStore, workers: int, address: str | None, quiet: bool = False) -> int:
    """Run every repeat not yet stored; returns how many ran. Interrupts propagate (the caller reports)."""
    todo = pending(plans, store)
    total = sum(p.group.repeats for p in plans)
    done = [total - len(todo)]

    def tick() -> None:
        done[0] += 1
        if not quiet and (done[0] % 10 == 0 or done[0] == total):
            print(f"searchlab reproduce: {done[0]}/{total} repeats stored", file=sys.stderr, flush=True)

    if not quiet and done[0]:
        print(f"searchlab reproduce: {done[0]}/{total} repeats already stored, {len(todo)} to run",
              file=sys.stderr, flush=True)
    if not todo:
        return 0
    if workers == 0:
        _serial(todo, store, tick)
    else:
        _ray(todo, store, workers, address, tick)
    return len(todo)
