"""Cost of running replays on a Ray cluster: scheduling overhead per task, driver write throughput.

A real two-node cluster on this host (Ray's own ``ray.cluster_utils.Cluster``: head and
worker, each its own raylet and object store, loopback only, token auth on) against the same
cluster with its worker node removed (one node), alternated ``--reps`` times so that load
drifts hit both alike. Each repetition replays the same grid (``synthetic_dag`` with the
random searcher, ``--tasks`` seeds x ``--evaluations``) through the study's own path
(:func:`searchlab.study.execution.replay._replay`: Ray tasks that return their records, the driver
writes them). Per repetition:

- **overhead per task** = (grid wall time x task slots - sum of the replays' own wall time)
  / tasks: the time a slot spent not replaying (scheduling, shipping the cell and the
  records back, worker start-up, scratch directory) per task;
- **records throughput** = evaluations written / seconds the driver spent writing them
  (batched inserts into each run's fresh ``results.db``, files, rename).

Reported: mean and a 95% t-interval over repetitions. Writes bench/results/cluster.json.
Run with ``/work/bin/cpuslot --exclusive`` (both cores): the timings are load-sensitive.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results" / "cluster.json"
SLOTS = {1: 1, 2: 2}  # task slots (CPUs) with 1 node and with 2 nodes: one CPU per node


def _cells(root: Path, tasks: int, evaluations: int) -> list[Any]:
    from searchlab.study.execution.config import compose_study
    from searchlab.study.execution.grid import make_cells

    cfg = compose_study("synthetic_replay", [f"seeds={tasks}", f"budget.evaluations={evaluations}"])
    cfg.problems = {"dag": {"overrides": ["problem=synthetic_dag"]}}
    cfg.searchers = {"random": "random"}
    cells, _ = make_cells(cfg, root)
    return cells


def _once(address: str, nodes: int, tasks: int, evaluations: int) -> dict[str, float]:
    import ray

    from searchlab.study.execution.replay import _replay

    with tempfile.TemporaryDirectory() as tmp:
        cells = _cells(Path(tmp), tasks, evaluations)
        t = time.perf_counter()
        records = _replay(cells, None, address)
        wall = time.perf_counter() - t
        ray.shutdown()
    replay_s = sum(float(r["wall_s"]) for r in records)
    written = sum(int(r["written"]) for r in records)
    write_s = sum(float(r["write_s"]) for r in records)
    return {"wall_s": wall, "overhead_per_task_s": (wall * SLOTS[nodes] - replay_s) / tasks,
            "records_per_s": written / write_s, "evaluations_written": written,
            "nodes_used": len({r["node"] for r in records})}


def _interval(values: list[float]) -> dict[str, float]:
    from scipy import stats

    mean = statistics.fmean(values)
    n = len(values)
    half = float(stats.t.ppf(0.975, n - 1) * statistics.stdev(values) / n**0.5) if n > 1 else float("nan")
    return {"mean": mean, "ci95_low": mean - half, "ci95_high": mean + half, "n": len(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--evaluations", type=int, default=200)
    args = parser.parse_args()
    for key, value in {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token",
                       "RAY_USAGE_STATS_ENABLED": "0", "OMP_NUM_THREADS": "1"}.items():
        os.environ[key] = value
    with tempfile.TemporaryDirectory() as auth:
        token = Path(auth) / "token"
        token.write_text(os.urandom(16).hex())
        os.environ["RAY_AUTH_TOKEN_PATH"] = str(token)
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False,
                                                                "object_store_memory": 80 * 1024**2})
        runs: dict[int, list[dict[str, float]]] = {1: [], 2: []}
        try:
            for rep in range(args.reps):
                order = (2, 1) if rep % 2 == 0 else (1, 2)
                for nodes in order:
                    worker = None
                    if nodes == 2:
                        worker = cluster.add_node(num_cpus=1, object_store_memory=80 * 1024**2)
                        cluster.wait_for_nodes()
                    runs[nodes].append(_once(cluster.address, nodes, args.tasks, args.evaluations))
                    print(f"rep {rep} nodes {nodes}: {runs[nodes][-1]}", flush=True)
                    if worker is not None:
                        cluster.remove_node(worker)
        finally:
            cluster.shutdown()
    out = {"what": __doc__.splitlines()[0], "tasks": args.tasks, "evaluations_per_task": args.evaluations,
           "reps": args.reps, "host": platform.node(), "cores": os.cpu_count(),
           "load_avg_at_end": os.getloadavg(), "python": sys.version.split()[0],
           "note": "both nodes on one 2-core host: 2 nodes = 2 task slots, 1 node = 1; overhead per task is "
                   "slot time not spent replaying; throughput is the driver's writing alone",
           "results": {f"{n} node{'s' if n > 1 else ''}": {
               "overhead_per_task_s": _interval([r["overhead_per_task_s"] for r in rs]),
               "records_per_s": _interval([r["records_per_s"] for r in rs]),
               "wall_s": _interval([r["wall_s"] for r in rs]),
               "nodes_used": sorted({int(r["nodes_used"]) for r in rs})} for n, rs in runs.items()},
           "raw": {str(n): rs for n, rs in runs.items()}}
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out["results"], indent=2))


if __name__ == "__main__":
    main()
