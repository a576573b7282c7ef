"""Cost of running replays on a Ray cluster: scheduling overhead per task, driver write throughput.

A real two-node cluster on this host (Ray's own ``ray.cluster_utils.Cluster``: head and worker, each its own
raylet and object store, loopback only, token auth on) against the same cluster with its worker node removed
(one node), alternated ``--reps`` times so that load drifts hit both alike. Each repetition replays the same grid
(``synthetic_dag`` with the random searcher, ``--tasks`` seeds x ``--evaluations``) through the study's own path
(``searchlab.study.execution.replay.run_cells`` with ``run_dirs``: Ray tasks that return their records, the
driver writes them). Per repetition:

- **overhead per task** = (grid wall time x task slots - sum of the replays' own wall time) / tasks: the time a
  slot spent not replaying (scheduling, shipping the cell and the records back, worker start-up, scratch
  directory) per task;
- **records throughput** = evaluations written / seconds the driver spent writing them.

Reported: mean and a 95 % t-interval over repetitions. Run it under ``cpuslot --exclusive`` (both cores): the
timings are load-sensitive.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.harness import Benchmark, Context

SLOTS = {1: 1, 2: 2}  # task slots (CPUs) with 1 node and with 2 nodes: one CPU per node
MEMORY = 80 * 1024**2  # each node's object store


@dataclass(frozen=True)
class Options:
    reps: int = 3
    tasks: int = 12
    evaluations: int = 200


def _once(address: str, nodes: int, tasks: int, evaluations: int) -> dict[str, float]:
    import ray

    from searchlab.study.execution.config import compose_study
    from searchlab.study.execution.grid import make_cells
    from searchlab.study.execution.replay import run_cells

    with tempfile.TemporaryDirectory() as tmp:
        cfg = compose_study("synthetic_replay", [f"seeds={tasks}", f"budget.evaluations={evaluations}"])
        cfg.problems = {"dag": {"overrides": ["problem=synthetic_dag"]}}
        cfg.searchers = {"random": "random"}
        cfg.run_dirs, cfg.ray_address, cfg.workers = True, address, None
        cells, _ = make_cells(cfg, Path(tmp))
        t = time.perf_counter()
        records = run_cells(cells, cfg, Path(tmp))
        wall = time.perf_counter() - t
        ray.shutdown()
    replay_s = sum(float(r["wall_s"]) for r in records)
    written, write_s = sum(int(r["written"]) for r in records), sum(float(r["write_s"]) for r in records)
    return {"wall_s": wall, "overhead_per_task_s": (wall * SLOTS[nodes] - replay_s) / tasks,
            "records_per_s": written / write_s, "evaluations_written": written,
            "nodes_used": len({r["node"] for r in records})}


def _interval(values: list[float]) -> dict[str, float]:
    from scipy import stats

    mean, n = statistics.fmean(values), len(values)
    half = float(stats.t.ppf(0.975, n - 1) * statistics.stdev(values) / n**0.5) if n > 1 else float("nan")
    return {"mean": mean, "ci95_low": mean - half, "ci95_high": mean + half, "n": n}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    for key, value in {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token",
                       "RAY_USAGE_STATS_ENABLED": "0"}.items():
        os.environ[key] = value
    ctx.used_seeds(range(o.tasks))
    runs: dict[int, list[dict[str, float]]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as auth:
        token = Path(auth) / "token"
        token.write_text(os.urandom(16).hex())
        os.environ["RAY_AUTH_TOKEN_PATH"] = str(token)
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False,
                                                                "object_store_memory": MEMORY})
        try:
            for rep in range(o.reps):
                for nodes in (2, 1) if rep % 2 == 0 else (1, 2):
                    worker = cluster.add_node(num_cpus=1, object_store_memory=MEMORY) if nodes == 2 else None
                    if worker is not None:
                        cluster.wait_for_nodes()
                    runs[nodes].append(_once(cluster.address, nodes, o.tasks, o.evaluations))
                    ctx.log(f"rep {rep} nodes {nodes}: {runs[nodes][-1]}")
                    if worker is not None:
                        cluster.remove_node(worker)
        finally:
            cluster.shutdown()  # type: ignore[no-untyped-call]
    return {"what": (__doc__ or "").splitlines()[0], "tasks": o.tasks, "evaluations_per_task": o.evaluations,
            "reps": o.reps, "note": "both nodes on one 2-core host: 2 nodes = 2 task slots, 1 node = 1; overhead per "
                                    "task is slot time not spent replaying; throughput is the driver's writing alone",
            "results": {f"{n} node{'s' if n > 1 else ''}": {
                "overhead_per_task_s": _interval([r["overhead_per_task_s"] for r in rs]),
                "records_per_s": _interval([r["records_per_s"] for r in rs]),
                "wall_s": _interval([r["wall_s"] for r in rs]),
                "nodes_used": sorted({int(r["nodes_used"]) for r in rs})} for n, rs in runs.items()},
            "raw": {str(n): rs for n, rs in runs.items()}}


BENCHMARK = Benchmark("cluster", "cost of replays on a real two-node Ray cluster on this host: overhead per task, "
                      "driver write throughput, against one node", Options, run, cited_by=("docs/cluster.md",))
