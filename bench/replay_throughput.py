"""Replay STUDIES vs Kernel Tuner 1.5's simulation mode: look-ups per second per core (issue 23, item 3).

One table (convolution_A100), one budget (220 evaluations), 20 seeds, per searcher / Kernel Tuner
strategy: random / random_sample, genetic / genetic_algorithm, simulated_annealing /
simulated_annealing, kt_pso / pso (we have no particle swarm of our own: ``kt_pso`` is Kernel
Tuner's pso driven by our loop through the bridge, searchlab/searchers/_kernel_tuner/). Each
repetition runs, interleaved (so both sides see the same load):

- **ours, whole study, 1 core**: ``python -m searchlab.study study=kt_replay`` with one searcher,
  ``seeds=20``, ``workers=1`` (the batched path in process: no Ray), in a fresh interpreter into a
  fresh directory. Timed twice: the command's whole wall time (interpreter start, imports, Hydra,
  the table parsed, every replay, the study store, the HTML report), and the grid alone (the study's
  own ``grid wall time``: composing the cells, the table parsed, the replays, the store).
- **ours, whole study, 2 cores**: the same with ``workers=2``: Ray started by the study, batches as
  Ray tasks. Per core: look-ups / (wall x 2).
- **ours, marginal**: the same studies with 100 seeds, 1 core and 2 cores; (look-ups(100) - look-ups(20)) /
  (grid wall(100) - grid wall(20)) / cores is what each further replay costs once the fixed costs are
  paid: the rate a large replay study sustains per core.
- **Kernel Tuner 1.5.0**: ``kernel_tuner.interface.tune_cache`` (simulation mode) called once per
  seed (20 calls) on the same cache, decompressed once beforehand, in this process (its imports
  already paid: that favours Kernel Tuner). Each call reads and parses the cache, which is how its
  simulation mode runs a replay. One core.

A look-up is one distinct configuration measured (ours: evaluations that are not known-infeasible
proposals, read from the study store; Kernel Tuner: distinct cached configurations it visited, as
bench/peers.py counts). The ratio is ours / Kernel Tuner per core; its interval is a 95 % bootstrap
over repetitions (resampling repetitions, ratio of summed look-ups over summed core-seconds).

    OMP_NUM_THREADS=1 /work/bin/cpuslot --exclusive python bench/replay_throughput.py
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TABLE = (ROOT.parent / "shared" / "data" / "kernel_tuner" / "convolution_A100.json.gz").resolve()
PAIRS = {"random": "random_sample", "genetic": "genetic_algorithm", "simulated_annealing": "simulated_annealing",
         "kt_pso": "pso"}  # we have no pso of our own: Kernel Tuner's, driven by our loop (the bridge)


def study(searcher: str, seeds: int, budget: int, workers: int, out: Path) -> dict[str, float]:
    """One replay study through the command line; its look-ups and wall times."""
    args = [sys.executable, "-m", "searchlab.study", "study=kt_replay", "~searchers", f"+searchers={{{searcher}: {searcher}}}",
            f"problems.convolution_A100=['problem=kernel_tuner_cache','problem.path={TABLE}','problem.sample_noise=true']",
            f"seeds={seeds}", f"budget.evaluations={budget}", f"workers={workers}", "--out", str(out)]
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"study failed: {done.stderr[-2000:]}")
    meta = json.loads((out / "study.json").read_text())["meta"]
    with sqlite3.connect(out / "replays.db") as conn:
        (lookups,) = conn.execute("SELECT COUNT(*) FROM evaluations WHERE status != 'infeasible'").fetchone()
    return {"lookups": int(lookups), "wall_s": wall, "grid_s": float(meta["grid wall time (s)"]), "cores": workers}


def kernel_tuner(strategy: str, seeds: int, budget: int, path: Path, names: list[str]) -> dict[str, float]:
    from kernel_tuner.interface import tune_cache

    lookups, started = 0, time.perf_counter()
    for seed in range(seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results, _ = tune_cache(str(path), strategy=strategy, strategy_options={"max_fevals": budget},
                                    quiet=True, seed=seed)
        lookups += len({tuple(r[n] for n in names) for r in results})
    return {"lookups": lookups, "wall_s": time.perf_counter() - started, "cores": 1}


def rate(rows: list[dict[str, float]], key: str = "wall_s") -> float:
    return sum(r["lookups"] for r in rows) / sum(r[key] * r["cores"] for r in rows)


Rows = list[dict[str, float]]


def bootstrap(statistic: Any, sides: list[Rows], draws: int = 4000) -> tuple[float, float, float]:
    """``statistic(*sides)`` with a 95 % bootstrap interval, resampling repetitions (paired:
    repetition i of every side is drawn together)."""
    rng = np.random.default_rng(0)
    n = len(sides[0])
    boot = []
    for _ in range(draws):
        pick = rng.integers(n, size=n)
        boot.append(statistic(*[[side[i] for i in pick] for side in sides]))
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return round(statistic(*sides), 2), round(float(lo), 2), round(float(hi), 2)


def ratio_interval(ours: Rows, theirs: Rows, key: str) -> tuple[float, float, float]:
    """ours/theirs per core, with a 95 % bootstrap interval over repetitions."""
    return bootstrap(lambda o, t: rate(o, key) / rate(t), [ours, theirs])


def marginal(small: Rows, big: Rows) -> float:
    extra = sum(b["lookups"] - s["lookups"] for s, b in zip(small, big))
    return extra / sum((b["grid_s"] - s["grid_s"]) * b["cores"] for s, b in zip(small, big))


def marginal_interval(small: Rows, big: Rows, theirs: Rows) -> tuple[float, float, float]:
    """The marginal ratio to Kernel Tuner with a 95 % bootstrap interval over repetitions."""
    return bootstrap(lambda s, b, t: marginal(s, b) / rate(t), [small, big, theirs])


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    path = work / "cache.json"
    with gzip.open(TABLE, "rt") as src:
        path.write_text(src.read())
    names = json.loads(path.read_text())["tune_params_keys"]
    kernel_tuner("random_sample", 1, 10, path, names)  # Kernel Tuner's imports paid before timing
    out: dict[str, Any] = {}
    for name, strategy in PAIRS.items():
        rows: dict[str, list[dict[str, float]]] = {"one_core": [], "one_core_big": [], "two_cores": [],
                                                   "two_cores_big": [], "kt": []}
        for rep in range(args.reps):
            tag = f"{name}-{rep}"
            rows["one_core"].append(study(name, args.seeds, args.budget, 1, work / f"{tag}-w1"))
            rows["kt"].append(kernel_tuner(strategy, args.seeds, args.budget, path, names))
            rows["one_core_big"].append(study(name, args.big_seeds, args.budget, 1, work / f"{tag}-w1big"))
            if not args.one_core:
                rows["two_cores"].append(study(name, args.seeds, args.budget, 2, work / f"{tag}-w2"))
                rows["two_cores_big"].append(study(name, args.big_seeds, args.budget, 2, work / f"{tag}-w2big"))
            print(name, rep, json.dumps({k: v[-1] for k, v in rows.items() if v}), flush=True)
        kt_rate = rate(rows["kt"])
        result = {"kt_strategy": strategy, "kt_lookups_per_s": round(kt_rate, 1), "runs": rows}
        for side in ("one_core",) if args.one_core else ("one_core", "two_cores"):
            for key in ("wall_s", "grid_s"):
                label = f"{side}_{'command' if key == 'wall_s' else 'grid'}"
                result[f"{label}_lookups_per_core_s"] = round(rate(rows[side], key), 1)
                result[f"{label}_ratio_ci95"] = ratio_interval(rows[side], rows["kt"], key)
        pairs = [("one_core", "one_core_big")] + ([] if args.one_core else [("two_cores", "two_cores_big")])
        for small, big in pairs:
            label = f"marginal_{small}"
            result[f"{label}_lookups_per_core_s"] = round(marginal(rows[small], rows[big]), 1)
            result[f"{label}_ratio"] = round(result[f"{label}_lookups_per_core_s"] / kt_rate, 2)
            result[f"{label}_ratio_ci95"] = marginal_interval(rows[small], rows[big], rows["kt"])
        out[name] = result
        print(name, json.dumps({k: v for k, v in result.items() if k != "runs"}), flush=True)
    return out


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--big-seeds", type=int, default=100)
    parser.add_argument("--budget", type=int, default=220)
    parser.add_argument("--one-core", action="store_true",
                        help="only 1-core studies (no Ray); the marginal rate from a --big-seeds 1-core study")
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "replay_throughput.json"))
    args = parser.parse_args()
    import kernel_tuner

    load_before = os.getloadavg()
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="replay-throughput-") as tmp:
        results = run(args, Path(tmp))
    payload = {"table": TABLE.name, "budget": args.budget, "seeds": args.seeds, "big_seeds": args.big_seeds,
               "reps": args.reps, "commit": _commit(),
               "one_core_only": args.one_core, "kernel_tuner": getattr(kernel_tuner, "__version__", "?"), "host": platform.node(),
               "cpus": os.cpu_count(), "load_avg_before": load_before, "load_avg_at_end": os.getloadavg(),
               "duration_s": round(time.time() - started, 1), "results": results}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()
