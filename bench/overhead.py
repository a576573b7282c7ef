"""Driver overhead per evaluation and actor utilisation on the Ray executor (``make bench``).

1. Overhead: a no-op problem on 2 Ray actors; the loop's wall time per evaluation (ask + dispatch + Ray round
   trip + SQLite commit + tell), with a per-phase breakdown of the driver-side work. Target: <= 2 ms per
   evaluation.
2. Utilisation: 100 ms evaluations on 2 actors; busy time (measured inside the actors) over workers x wall
   time. Target: >= 90 %.

A target missed is written and exits 1. Run it under ``cpuslot --exclusive``: it times wall clock.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.harness import Benchmark, Context
from searchlab.core.problem import Problem
from searchlab.core.records import Config, Measurement
from searchlab.core.spaces import IntKnob, KnobSpace
from searchlab.core.store import RunStore
from searchlab.run.loop import Budget, SearchLoop
from searchlab.searchers import RandomSearcher


@dataclass(frozen=True)
class Options:
    evaluations: int = 2000
    sleep_evaluations: int = 100
    workers: int = 2
    overhead_ms: float = 2.0  # target
    utilisation: float = 0.9  # target


class Sleep(Problem):
    """No work but an optional sleep: measures the platform, not a kernel."""

    name = "sleep"

    def __init__(self, sleep_s: float = 0.0) -> None:
        super().__init__(sleep_s=sleep_s)
        self.sleep_s = sleep_s

    @property
    def space(self) -> KnobSpace:
        return KnobSpace((IntKnob("a", 0, 999), IntKnob("b", 0, 999)))

    def evaluate(self, config: Config) -> Measurement:
        if self.sleep_s:
            time.sleep(self.sleep_s)
        return Measurement.ok(float(config["a"]))  # type: ignore[arg-type]


def _timed(phases: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            phases[name] += time.perf_counter() - start
    return wrapper


def measure(problem: Problem, evaluations: int, workers: int) -> dict[str, Any]:
    from searchlab.run.execution import RayExecutor

    phases: dict[str, float] = defaultdict(float)
    ray_executor: Any = RayExecutor  # resolved lazily by the package (Ray imported only when used)
    executor = ray_executor(workers=workers)
    executor.start(problem)
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore.create(tmp, {"problem": problem.name, "searcher": "random", "seed": 0, "config": {}})
        searcher = RandomSearcher(problem.space, seed=0)
        searcher.ask = _timed(phases, "ask", searcher.ask)  # type: ignore[method-assign]
        searcher.tell = _timed(phases, "tell", searcher.tell)  # type: ignore[method-assign]
        store.record = _timed(phases, "record", store.record)  # type: ignore[method-assign]
        executor.submit = _timed(phases, "dispatch", executor.submit)
        executor.collect = _timed(phases, "collect_wait", executor.collect)
        loop = SearchLoop(searcher, executor, Budget(evaluations=evaluations), space=problem.space, store=store)
        start = time.perf_counter()
        loop.run()
        wall = time.perf_counter() - start
        store.close()
    executor.close()
    results = loop.state.results
    busy = sum(r.t_end - r.t_start for r in results)
    span = max(r.t_end for r in results) - min(r.t_submit for r in results)
    return {
        "evaluations": len(results), "workers": workers, "wall_s": wall,
        "wall_per_evaluation_ms": 1000 * wall / len(results),
        "driver_phase_ms_per_evaluation": {k: 1000 * v / len(results) for k, v in phases.items()},
        "utilisation": busy / (workers * span),
    }


def run(ctx: Context, o: Options) -> dict[str, Any]:
    import ray

    ctx.used_seeds([0])
    ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False, logging_level=logging.ERROR)
    try:
        ctx.log(f"{o.evaluations} no-op evaluations on {o.workers} actors")
        noop = measure(Sleep(0.0), o.evaluations, o.workers)
        ctx.log(f"{o.sleep_evaluations} 100 ms evaluations on {o.workers} actors")
        sleepy = measure(Sleep(0.1), o.sleep_evaluations, o.workers)
    finally:
        ray.shutdown()
    met = {"overhead": noop["wall_per_evaluation_ms"] <= o.overhead_ms, "utilisation": sleepy["utilisation"] >= o.utilisation}
    ctx.log(f"overhead {noop['wall_per_evaluation_ms']:.2f} ms per evaluation, utilisation {sleepy['utilisation']:.3f}")
    ctx.failed = not all(met.values())
    return {"benchmark": "driver overhead and actor utilisation (Ray executor)", "noop": noop, "sleep_100ms": sleepy,
            "targets": {"overhead_ms": o.overhead_ms, "utilisation": o.utilisation}, "met": met}


BENCHMARK = Benchmark("overhead", "driver overhead per evaluation (no-op problem, 2 Ray actors) and actor utilisation "
                      "with 100 ms evaluations", Options, run)
