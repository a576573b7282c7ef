"""Does the bridge reproduce Kernel Tuner? Its strategies through searchlab's loop vs Kernel Tuner's own runs.

Issue 23, item 5 (searchlab/searchers/_kernel_tuner). Each ``kt_<strategy>`` searcher replays the four shared
tables (``problem=kernel_tuner_cache`` with ``recorded_failures=hidden``: failures are met and counted, as live)
for ``--budget`` evaluations and ``--seeds`` seeds. Kernel Tuner's side is its own ``tune_kernel`` in simulation
mode under the same counting (bench/common/kernel_tuner.py): the stored rows of ``--kernel-tuner-runs`` (a
result of bench/peers.py ``--only kt --counting hidden``, 20 seeds per table; Kernel Tuner's strategies are not
seeded there, so its runs are independent draws and the comparison is unpaired), or, for a strategy without a
stored row or with ``--kernel-tuner-runs ''``, run fresh for the same seeds.

Reported per strategy and checkpoint: mean fraction of the optimum on each side with a 95 % bootstrap interval
of the mean, the difference (bridge minus Kernel Tuner) with a 95 % bootstrap interval, and a two-sided
Mann-Whitney p-value; an interval that holds 0 is "no difference". Expected differences, by design: where Kernel
Tuner's strategy stops before the budget (dual_annealing after SciPy's ``maxfun``; simulated_annealing, whose
default ``T=0.1`` reaches ``T_min`` at three quarters of ``max_fevals``) its curve stays flat while the bridge
restarts the strategy with a fresh seed.

``--exact-seeds N`` also replays Kernel Tuner's own runs with its global random states seeded as the bridge
seeds its first strategy run, and checks that both visit the same configurations in the same order (every
strategy but diff_evo, whose own run draws an unseeded Latin hypercube). Replays: no number here is a timing.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import RESULTS, kt_tables
from bench.common.kernel_tuner import kt_results, kt_run, pad, table_optimum
from bench.harness import Benchmark, Context

STRATEGIES = ("genetic_algorithm", "pso", "simulated_annealing", "dual_annealing", "greedy_ils", "diff_evo",
              "random_sample", "firefly_algorithm")
CHECKPOINTS = (20, 40, 55, 100, 220)


@dataclass(frozen=True)
class Options:
    seeds: int = 10
    budget: int = 220
    workers: int = 2
    strategies: tuple[str, ...] = STRATEGIES
    kernel_tuner_runs: str = str(RESULTS / "peers22_kt_hidden.json")  # stored KT rows (missing or '': run fresh)
    exact_seeds: int = 0  # also check identical trajectories for seeds 0..N-1
    only_exact: bool = False


def bridge_runs(job: tuple[str, str, int, int]) -> list[list[float]]:
    """Best-so-far objective after each measurement of ``kt_<strategy>``, one curve per seed."""
    from searchlab import registry
    from searchlab.adapters.knobs import KernelTunerCache
    from searchlab.api import optimize
    from searchlab.core import threads
    from searchlab.run.loop import Budget

    table, strategy, seeds, budget = job
    threads.limit_pools(1)
    problem = KernelTunerCache(path=table, recorded_failures="hidden")
    curves = []
    for seed in range(seeds):
        searcher = registry.searcher_class(f"kt_{strategy}")(problem.space, direction=problem.direction, seed=seed)
        best, curve = np.inf, []
        for r in optimize(problem, searcher, Budget(evaluations=budget)).results:
            if r.ok and r.measurement.objective is not None:
                best = min(best, float(r.measurement.objective))
            curve.append(best)
        curves.append(curve)
    return curves


def exact(job: tuple[str, str, int, int]) -> dict[str, Any]:
    """Kernel Tuner's own run, its global random states seeded as the bridge seeds its first strategy run,
    against the bridge: the same configurations in the same order (up to where Kernel Tuner's run ends)?"""
    import random

    from searchlab import registry
    from searchlab.adapters.knobs import KernelTunerCache
    from searchlab.api import optimize
    from searchlab.core import threads
    from searchlab.run.loop import Budget

    table, strategy, seed, budget = job
    threads.limit_pools(1)
    first = int(np.random.default_rng(seed).integers(2**32))  # the bridge's first strategy seed
    random.seed(first)
    np.random.seed(first)
    results, names = kt_results(table, strategy, 0, budget, "hidden")
    theirs = list(dict.fromkeys(tuple(r[n] for n in names) for r in results))
    problem = KernelTunerCache(path=table, recorded_failures="hidden")
    searcher = registry.searcher_class(f"kt_{strategy}")(problem.space, direction=problem.direction, seed=seed)
    ours = [tuple(r.config[n] for n in names) for r in optimize(problem, searcher, Budget(evaluations=budget)).results]
    return {"table": Path(table).name, "strategy": strategy, "seed": seed, "kernel_tuner_distinct": len(theirs),
            "identical": ours[:len(theirs)] == theirs}


def fractions(curves_by_table: dict[str, list[list[float]]], budget: int) -> dict[str, list[list[float]]]:
    """Per table, per run: fraction of the table's optimum at each checkpoint."""
    paths = {p.name: p for p in kt_tables()}
    return {table: [[float(table_optimum(paths[table]) / pad(c, budget)[k - 1]) for k in CHECKPOINTS if k <= budget]
                    for c in curves] for table, curves in curves_by_table.items()}


def _mean_ci(x: np.ndarray, rng: np.random.Generator) -> dict[str, Any]:
    means = [float(np.mean(rng.choice(x, len(x)))) for _ in range(2000)]
    return {"mean": float(np.mean(x)), "ci95": [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))]}


def compare(ours: np.ndarray, theirs: np.ndarray, rng: np.random.Generator) -> dict[str, Any]:
    """Unpaired: bootstrap of the difference of means, Mann-Whitney p (two-sided)."""
    from scipy.stats import mannwhitneyu

    diffs = [float(np.mean(rng.choice(ours, len(ours))) - np.mean(rng.choice(theirs, len(theirs)))) for _ in range(2000)]
    lo, hi = float(np.quantile(diffs, 0.025)), float(np.quantile(diffs, 0.975))
    p = float(mannwhitneyu(ours, theirs, alternative="two-sided").pvalue) if np.ptp(np.r_[ours, theirs]) > 0 else 1.0
    return {"bridge": _mean_ci(ours, rng), "kernel_tuner": _mean_ci(theirs, rng),
            "difference": float(np.mean(ours) - np.mean(theirs)), "difference_ci95": [lo, hi], "p_mannwhitney": p,
            "verdict": "no difference" if lo <= 0 <= hi else ("bridge higher" if lo > 0 else "bridge lower")}


def _kernel_tuner_fresh(strategy: str, o: Options) -> dict[str, list[list[float]]]:
    jobs = [(str(t), strategy, s, o.budget, "hidden") for t in kt_tables() for s in range(o.seeds)]
    with ProcessPoolExecutor(o.workers) as pool:
        curves = list(pool.map(kt_run, jobs, chunksize=1))
    out: dict[str, list[list[float]]] = {}
    for (table, *_), curve in zip(jobs, curves):
        out.setdefault(Path(table).name, []).append(curve)
    return fractions(out, o.budget)


def run_exact(ctx: Context, o: Options) -> dict[str, Any]:
    jobs = [(str(t), s, seed, o.budget) for s in o.strategies if s != "diff_evo" for t in kt_tables()
            for seed in range(o.exact_seeds)]
    with ProcessPoolExecutor(o.workers) as pool:
        rows = list(pool.map(exact, jobs, chunksize=1))
    summary = {s: f"{sum(r['identical'] for r in rows if r['strategy'] == s)}/{sum(r['strategy'] == s for r in rows)}"
               for s in dict.fromkeys(r["strategy"] for r in rows)}
    ctx.log(f"identical trajectories: {summary}")
    return {"seeds": o.exact_seeds, "budget": o.budget, "counting": "hidden", "identical": summary, "runs": rows}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    ctx.used_seeds(range(max(o.seeds, o.exact_seeds)))
    out: dict[str, Any] = {"exact": run_exact(ctx, o)} if o.exact_seeds else {}
    if o.only_exact:
        return out
    stored_path = Path(o.kernel_tuner_runs) if o.kernel_tuner_runs else None
    stored = json.loads(stored_path.read_text())["results"] if stored_path and stored_path.is_file() else {}
    jobs = [(str(t), s, o.seeds, o.budget) for s in o.strategies for t in kt_tables()]
    with ProcessPoolExecutor(o.workers) as pool:
        runs = list(pool.map(bridge_runs, jobs, chunksize=1))
    bridge: dict[str, dict[str, list[list[float]]]] = {}
    for (table, strategy, _, _), curves in zip(jobs, runs):
        bridge.setdefault(strategy, {})[Path(table).name] = curves
    rng, checkpoints = np.random.default_rng(0), [k for k in CHECKPOINTS if k <= o.budget]
    rows: dict[str, Any] = {}
    for strategy in o.strategies:
        ours, row = fractions(bridge[strategy], o.budget), stored.get(f"kt:{strategy}")
        theirs, source = ((row["runs"], f"{stored_path} (stored, {len(next(iter(row['runs'].values())))} seeds)") if row
                          else (_kernel_tuner_fresh(strategy, o), f"fresh Kernel Tuner runs, seeds 0..{o.seeds - 1}"))
        a = np.array([v for per in ours.values() for v in per])
        b = np.array([v for t in ours for v in theirs[t]])
        rows[f"kt_{strategy}"] = {"kernel_tuner_source": source, "runs": {"bridge": len(a), "kernel_tuner": len(b)},
                                  **{f"@{k}": compare(a[:, i], b[:, i], rng) for i, k in enumerate(checkpoints)},
                                  "bridge_runs": ours}
        ctx.log(f"kt_{strategy}: " + " | ".join(
            f"@{k} {rows[f'kt_{strategy}'][f'@{k}']['difference']:+.3f} {rows[f'kt_{strategy}'][f'@{k}']['verdict']}"
            for k in checkpoints))
    return out | {"seeds": o.seeds, "budget": o.budget, "tables": [t.name for t in kt_tables()], "counting": "hidden",
                  "results": rows}


BENCHMARK = Benchmark("kt_bridge", "Kernel Tuner's strategies through searchlab's loop (kt_*) vs Kernel Tuner's own "
                      "simulation runs, hidden counting: fraction of optimum with intervals", Options, run,
                      cited_by=("docs/baselines.md",))
