"""Driver overhead per evaluation and actor utilisation on the Ray executor.

1. Overhead: a no-op problem on 2 Ray actors; the loop's wall time per evaluation
   (ask + dispatch + Ray round trip + SQLite commit + tell), with a per-phase breakdown of
   the driver-side work. Target: <= 2 ms per evaluation.
2. Utilisation: 100 ms evaluations on 2 actors; busy time (measured inside the actors)
   over workers x wall time. Target: >= 90 %.

Writes bench/results/overhead.json. Usage: python bench/overhead.py [--evaluations N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from searchlab.core.problem import Problem
from searchlab.core.records import Config, Measurement
from searchlab.core.spaces import IntKnob, KnobSpace
from searchlab.core.store import RunStore, package_versions
from searchlab.run.execution import RayExecutor
from searchlab.run.loop import Budget, SearchLoop
from searchlab.searchers import RandomSearcher

OUT = Path(__file__).parent / "results" / "overhead.json"


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


def run(problem: Problem, evaluations: int, workers: int) -> dict[str, Any]:
    phases: dict[str, float] = defaultdict(float)
    executor = RayExecutor(workers=workers)
    executor.start(problem)
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore.create(tmp, {"problem": problem.name, "searcher": "random", "seed": 0, "config": {}})
        searcher = RandomSearcher(problem.space, seed=0)
        searcher.ask = _timed(phases, "ask", searcher.ask)  # type: ignore[method-assign]
        searcher.tell = _timed(phases, "tell", searcher.tell)  # type: ignore[method-assign]
        store.record = _timed(phases, "record", store.record)  # type: ignore[method-assign]
        executor.submit = _timed(phases, "dispatch", executor.submit)  # type: ignore[method-assign]
        executor.collect = _timed(phases, "collect_wait", executor.collect)  # type: ignore[method-assign]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluations", type=int, default=2000)
    parser.add_argument("--sleep-evaluations", type=int, default=100)
    args = parser.parse_args()
    import ray

    ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False, logging_level="ERROR")
    try:
        noop = run(Sleep(0.0), args.evaluations, 2)
        sleepy = run(Sleep(0.1), args.sleep_evaluations, 2)
    finally:
        ray.shutdown()
    report = {
        "benchmark": "driver overhead and actor utilisation (Ray executor, 2 actors)",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()}, "versions": package_versions(),
        "noop": noop, "sleep_100ms": sleepy,
        "targets": {"overhead_ms": 2.0, "utilisation": 0.9},
        "met": {"overhead": noop["wall_per_evaluation_ms"] <= 2.0, "utilisation": sleepy["utilisation"] >= 0.9},
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2))
    print(json.dumps({"overhead_ms": noop["wall_per_evaluation_ms"], "phases": noop["driver_phase_ms_per_evaluation"],
                      "utilisation": sleepy["utilisation"]}, indent=2))


if __name__ == "__main__":
    main()
