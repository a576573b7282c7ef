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
over repetitions (resampling repetitions, ratio of summed look-ups over summed core-seconds, seed 0).
Run it under ``cpuslot --exclusive``.
"""

from __future__ import annotations

import gzip
import json
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import KT_DATA, searchlab_cli
from bench.harness import Benchmark, Context

TABLE = KT_DATA / "convolution_A100.json.gz"
PAIRS = {"random": "random_sample", "genetic": "genetic_algorithm", "simulated_annealing": "simulated_annealing",
         "kt_pso": "pso"}  # we have no pso of our own: Kernel Tuner's, driven by our loop (the bridge)
Rows = list[dict[str, float]]


@dataclass(frozen=True)
class Options:
    reps: int = 3
    seeds: int = 20
    big_seeds: int = 100
    budget: int = 220
    one_core: bool = False  # only 1-core studies (no Ray); the marginal rate from a big_seeds 1-core study


def study(searcher: str, seeds: int, budget: int, workers: int, out: Path) -> dict[str, float]:
    """One replay study through the command line; its look-ups and wall times."""
    args = ["study=kt_replay", "~searchers", f"+searchers={{{searcher}: {searcher}}}",
            f"problems.convolution_A100=['problem=kernel_tuner_cache','problem.path={TABLE.resolve()}',"
            "'problem.sample_noise=true']", f"seeds={seeds}", f"budget.evaluations={budget}", f"workers={workers}",
            "--out", str(out)]
    _, wall = searchlab_cli(args, module="searchlab.study")
    from searchlab.core.store import read_runs

    meta = json.loads((out / "study.json").read_text())["meta"]
    lookups = sum(status != "infeasible" for run_ in read_runs(out) for status in run_.outcomes.status)
    return {"lookups": lookups, "wall_s": wall, "grid_s": float(meta["grid wall time (s)"]), "cores": workers}


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


def rate(rows: Rows, key: str = "wall_s") -> float:
    return sum(r["lookups"] for r in rows) / sum(r[key] * r["cores"] for r in rows)


def bootstrap(statistic: Callable[..., float], sides: list[Rows], draws: int = 4000) -> tuple[float, float, float]:
    """``statistic(*sides)`` with a 95 % bootstrap interval, resampling repetitions (paired: repetition i of
    every side is drawn together)."""
    rng, n, boot = np.random.default_rng(0), len(sides[0]), []
    for _ in range(draws):
        pick = rng.integers(n, size=n)
        boot.append(statistic(*[[side[i] for i in pick] for side in sides]))
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return round(statistic(*sides), 2), round(float(lo), 2), round(float(hi), 2)


def marginal(small: Rows, big: Rows) -> float:
    extra = sum(b["lookups"] - s["lookups"] for s, b in zip(small, big))
    return extra / sum((b["grid_s"] - s["grid_s"]) * b["cores"] for s, b in zip(small, big))


def one_pair(ctx: Context, name: str, strategy: str, o: Options, work: Path, path: Path,
             names: list[str]) -> dict[str, Any]:
    rows: dict[str, Rows] = {"one_core": [], "one_core_big": [], "two_cores": [], "two_cores_big": [], "kt": []}
    for rep in range(o.reps):
        tag = f"{name}-{rep}"
        rows["one_core"].append(study(name, o.seeds, o.budget, 1, work / f"{tag}-w1"))
        rows["kt"].append(kernel_tuner(strategy, o.seeds, o.budget, path, names))
        rows["one_core_big"].append(study(name, o.big_seeds, o.budget, 1, work / f"{tag}-w1big"))
        if not o.one_core:
            rows["two_cores"].append(study(name, o.seeds, o.budget, 2, work / f"{tag}-w2"))
            rows["two_cores_big"].append(study(name, o.big_seeds, o.budget, 2, work / f"{tag}-w2big"))
        ctx.log(f"{name} rep {rep}: " + json.dumps({k: v[-1] for k, v in rows.items() if v}))
    kt_rate = rate(rows["kt"])
    result: dict[str, Any] = {"kt_strategy": strategy, "kt_lookups_per_s": round(kt_rate, 1), "runs": rows}
    for side in ("one_core",) if o.one_core else ("one_core", "two_cores"):
        for key in ("wall_s", "grid_s"):
            label = f"{side}_{'command' if key == 'wall_s' else 'grid'}"
            result[f"{label}_lookups_per_core_s"] = round(rate(rows[side], key), 1)
            result[f"{label}_ratio_ci95"] = bootstrap(lambda a, t, k=key: rate(a, k) / rate(t), [rows[side], rows["kt"]])
    for small, big in [("one_core", "one_core_big")] + ([] if o.one_core else [("two_cores", "two_cores_big")]):
        label = f"marginal_{small}"
        result[f"{label}_lookups_per_core_s"] = round(marginal(rows[small], rows[big]), 1)
        result[f"{label}_ratio"] = round(result[f"{label}_lookups_per_core_s"] / kt_rate, 2)
        result[f"{label}_ratio_ci95"] = bootstrap(lambda s, b, t: marginal(s, b) / rate(t),
                                                  [rows[small], rows[big], rows["kt"]])
    ctx.log(f"{name}: " + json.dumps({k: v for k, v in result.items() if k != "runs"}))
    return result


def run(ctx: Context, o: Options) -> dict[str, Any]:
    ctx.used_seeds(range(max(o.seeds, o.big_seeds)))
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="replay-throughput-") as tmp:
        path = Path(tmp) / "cache.json"
        with gzip.open(TABLE, "rt") as src:
            path.write_text(src.read())
        names = json.loads(path.read_text())["tune_params_keys"]
        kernel_tuner("random_sample", 1, 10, path, names)  # Kernel Tuner's imports paid before timing
        for name, strategy in PAIRS.items():
            out[name] = one_pair(ctx, name, strategy, o, Path(tmp), path, names)
            ctx.checkpoint({"table": TABLE.name, "results": out})
    return {"table": TABLE.name, "budget": o.budget, "seeds": o.seeds, "big_seeds": o.big_seeds, "reps": o.reps,
            "one_core_only": o.one_core, "results": out}


BENCHMARK = Benchmark("replay_throughput", "look-ups per second per core of replay studies (1 and 2 cores, marginal) "
                      "against Kernel Tuner 1.5's simulation mode", Options, run, cited_by=("docs/tuning.md",))
