"""Where a joblib sweep of tiny runs spends its time (issue 46, item 6; docs/integrations.md).

Per repeat: the README's 4-run sweep (``-m seed=0,1,2,3 problem=synthetic_dag executor=serial``) with the joblib
launcher (``n_jobs=2``) and with the basic one, in alternating order: the sweep's wall time and each run's own
``wall_time_s`` (summary.json). Then, per repeat, a fresh loky pool's start with 4 empty tasks, and 2 fresh
workers importing what a job needs (searchlab's command line and run modules, Hydra's plugin scan, matplotlib
for ``best_so_far.png``), each timed inside the worker. Medians with the repeats' range. Run it under
``cpuslot --exclusive``: it times wall clock.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import REPO, searchlab_cli
from bench.harness import Benchmark, Context

SWEEP = ["-m", "seed=0,1,2,3", "problem=synthetic_dag", "executor=serial", "progress=off"]
LAUNCHERS = {"joblib": ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"], "basic": []}


@dataclass(frozen=True)
class Options:
    repeats: int = 3


def nothing(i: int) -> int:
    return i


def imports(i: int) -> tuple[float, float, float]:
    """What a fresh worker pays before a job runs: searchlab's modules, Hydra's plugin scan, matplotlib."""
    t = time.perf_counter()
    import searchlab.cli.main
    import searchlab.run.lifecycle  # noqa: F401

    a, t = time.perf_counter() - t, time.perf_counter()
    from hydra.core.plugins import Plugins

    Plugins.instance()  # the plugin scan a Hydra job's set-up does
    b, t = time.perf_counter() - t, time.perf_counter()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return a, b, time.perf_counter() - t


def sweep(launcher: str, work: Path) -> dict[str, Any]:
    where = work / f"sw_{launcher}"
    work.mkdir(parents=True, exist_ok=True)
    _, seconds = searchlab_cli([*SWEEP, *LAUNCHERS[launcher], f"hydra.sweep.dir={where}"], cwd=work,
                               env={"PYTHONPATH": str(REPO)})
    runs = [json.loads(p.read_text())["wall_time_s"] for p in sorted(where.glob("*/summary.json"))]
    return {"sweep_s": seconds, "run_wall_s": runs}


def workers() -> dict[str, Any]:
    from joblib import Parallel, delayed
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)
    t = time.perf_counter()
    Parallel(n_jobs=2, backend="loky")(delayed(nothing)(i) for i in range(4))
    start = time.perf_counter() - t
    get_reusable_executor().shutdown(wait=True)
    t = time.perf_counter()
    out = Parallel(n_jobs=2, backend="loky")(delayed(imports)(i) for i in range(2))
    return {"loky_start_4_empty_tasks_s": start, "two_fresh_workers_importing_s": time.perf_counter() - t,
            "per_worker": [{"searchlab_s": a, "plugin_scan_s": b, "matplotlib_s": c} for a, b, c in out]}


def _range(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    ctx.used_seeds(range(4))
    sweeps: dict[str, list[dict[str, Any]]] = {name: [] for name in LAUNCHERS}
    pools: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(o.repeats):
            for name in LAUNCHERS if rep % 2 == 0 else reversed(LAUNCHERS):
                sweeps[name].append(sweep(name, Path(tmp) / f"rep{rep}"))
                ctx.log(f"rep {rep} {name}: sweep {sweeps[name][-1]['sweep_s']:.2f} s, runs "
                        f"{[round(r, 2) for r in sweeps[name][-1]['run_wall_s']]}")
            pools.append(workers())
            ctx.log(f"rep {rep}: loky start {pools[-1]['loky_start_4_empty_tasks_s']:.2f} s, 2 fresh workers importing "
                    f"{pools[-1]['two_fresh_workers_importing_s']:.2f} s")
    return {"command": "python -m searchlab " + " ".join(SWEEP), "launchers": LAUNCHERS,
            "sweep_s": {name: _range([s["sweep_s"] for s in rows]) for name, rows in sweeps.items()},
            "sweeps": sweeps, "workers": pools}


BENCHMARK = Benchmark("joblib_sweep", "the joblib launcher against the basic one for a sweep of tiny runs, and a "
                      "fresh loky worker's start and imports", Options, run, cited_by=("docs/integrations.md",))
