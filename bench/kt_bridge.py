"""Does the bridge reproduce Kernel Tuner? Its strategies through searchlab's loop vs. Kernel Tuner's own runs.

Issue 23, item 5 (searchlab/searchers/_kernel_tuner). Each ``kt_<strategy>`` searcher replays the
four shared tables (``../shared/data/kernel_tuner/convolution_*``, ``problem=kernel_tuner_cache``
with ``recorded_failures=hidden``: failures are met and counted, as live) for ``--budget``
evaluations and ``--seeds`` seeds. Kernel Tuner's side is the stored ``hidden`` row of
``bench/results/peers22_kt_hidden.json`` (``bench/peers.py --only kt --counting hidden``: Kernel
Tuner 1.5's ``tune_kernel`` in simulation mode, 20 seeds per table; Kernel Tuner's strategies are
not seeded there, so its runs are independent draws and the comparison is unpaired); a strategy
without a stored row (``firefly_algorithm``) is run fresh in Kernel Tuner for the same seeds
(``bench/peers_kt.kt_run``).

Reported per strategy and checkpoint: mean fraction of the optimum on each side with a 95 %
bootstrap interval of the mean, the difference (bridge minus Kernel Tuner) with a 95 % bootstrap
interval, and a two-sided Mann-Whitney p-value; an interval that holds 0 is "no difference".
Expected differences, by design: where Kernel Tuner's strategy stops before the budget
(dual_annealing after SciPy's ``maxfun`` of cost-function calls; simulated_annealing, whose
default ``T=0.1`` reaches ``T_min`` at three quarters of ``max_fevals``) Kernel Tuner's curve stays
flat while the bridge restarts the strategy with a fresh seed.

    OMP_NUM_THREADS=1 .venv/bin/python bench/kt_bridge.py [--seeds 10] [--budget 220] [--workers 2] [--out kt_bridge]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from peers import CHECKPOINTS, TABLES, _pad, _table_values  # noqa: E402
from peers_kt import kt_run  # noqa: E402

STRATEGIES = ("genetic_algorithm", "pso", "simulated_annealing", "dual_annealing", "greedy_ils", "diff_evo",
              "random_sample", "firefly_algorithm")
STORED = ROOT / "bench" / "results" / "peers22_kt_hidden.json"


def bridge_runs(job: tuple[str, str, int, int]) -> list[list[float]]:
    """Best-so-far objective after each measurement of ``kt_<strategy>``, one curve per seed
    (the table is parsed once per job)."""
    table, strategy, seeds, budget = job
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from searchlab import registry
    from searchlab.adapters.knobs import KernelTunerCache
    from searchlab.api import optimize
    from searchlab.core import threads
    from searchlab.run.loop import Budget

    threads.limit_pools(1)
    problem = KernelTunerCache(path=table, recorded_failures="hidden")
    curves = []
    for seed in range(seeds):
        searcher = registry.searcher_class(f"kt_{strategy}")(problem.space, direction=problem.direction, seed=seed)
        outcome = optimize(problem, searcher, Budget(evaluations=budget))
        best, curve = np.inf, []
        for r in outcome.results:
            if r.ok and r.measurement.objective is not None:
                best = min(best, float(r.measurement.objective))
            curve.append(best)
        curves.append(curve)
    return curves


def exact(job: tuple[str, str, int, int]) -> dict[str, Any]:
    """Kernel Tuner's own simulation run, its global random states seeded as the bridge seeds its
    first strategy run, against the bridge: do both visit the same configurations in the same order
    (up to the budget, or to where Kernel Tuner's run ends and the bridge restarts)?"""
    import random

    from peers_kt import kt_results

    from searchlab import registry
    from searchlab.adapters.knobs import KernelTunerCache
    from searchlab.api import optimize
    from searchlab.core import threads
    from searchlab.run.loop import Budget

    table, strategy, seed, budget = job
    threads.limit_pools(1)
    first = int(np.random.default_rng(seed).integers(2**32))  # KernelTunerSearcher._run's first seed
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
    out = {}
    for table, curves in curves_by_table.items():
        _, optimum = _table_values(ROOT.parent / "shared" / "data" / "kernel_tuner" / table)
        out[table] = [[float(optimum / _pad(c, budget)[k - 1]) for k in CHECKPOINTS if k <= budget] for c in curves]
    return out


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


def _kt_fresh(strategy: str, seeds: int, budget: int, workers: int) -> dict[str, list[list[float]]]:
    jobs = [(str(t), strategy, s, budget, "hidden") for t in TABLES for s in range(seeds)]
    with ProcessPoolExecutor(workers) as pool:
        curves = list(pool.map(kt_run, jobs, chunksize=1))
    out: dict[str, list[list[float]]] = {}
    for (table, *_), curve in zip(jobs, curves):
        out.setdefault(Path(table).name, []).append(curve)
    return fractions(out, budget)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=220)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--out", default="kt_bridge")
    parser.add_argument("--exact-seeds", type=int, default=0,
                        help="also replay Kernel Tuner's own runs seeded like the bridge (seeds 0..N-1) and compare")
    parser.add_argument("--only-exact", action="store_true", help="run only the exact comparison (kt_bridge_exact.json)")
    args = parser.parse_args()
    if args.exact_seeds:
        run_exact(args)
        if args.only_exact:
            return
    strategies = [s for s in args.strategies.split(",") if s]
    stored = json.loads(STORED.read_text())["results"]
    start = time.time()
    jobs = [(str(t), s, args.seeds, args.budget) for s in strategies for t in TABLES]
    with ProcessPoolExecutor(args.workers) as pool:
        runs = list(pool.map(bridge_runs, jobs, chunksize=1))
    bridge: dict[str, dict[str, list[list[float]]]] = {}
    for (table, strategy, _, _), curves in zip(jobs, runs):
        bridge.setdefault(strategy, {})[Path(table).name] = curves
    rng = np.random.default_rng(0)
    checkpoints = [k for k in CHECKPOINTS if k <= args.budget]
    rows: dict[str, Any] = {}
    for strategy in strategies:
        ours = fractions(bridge[strategy], args.budget)
        row = stored.get(f"kt:{strategy}")
        theirs, source = ((row["runs"], f"{STORED.name} (stored, {len(next(iter(row['runs'].values())))} seeds)")
                          if row else (_kt_fresh(strategy, args.seeds, args.budget, args.workers),
                                       f"fresh kt_run, seeds 0..{args.seeds - 1}"))
        a = np.array([v for per in ours.values() for v in per])
        b = np.array([v for t in ours for v in theirs[t]])
        rows[f"kt_{strategy}"] = {"kernel_tuner_source": source, "runs": {"bridge": len(a), "kernel_tuner": len(b)},
                                  **{f"@{k}": compare(a[:, i], b[:, i], rng) for i, k in enumerate(checkpoints)},
                                  "bridge_runs": ours}
    meta = {"seeds": args.seeds, "first_seed": 0, "budget": args.budget, "tables": [t.name for t in TABLES],
            "counting": "hidden", "wall_s": round(time.time() - start, 1), "load_average": list(os.getloadavg()),
            "note": "replays: quality numbers, no timing; other sessions shared the 2-core machine"}
    out = ROOT / "bench" / "results" / f"{args.out}.json"
    out.write_text(json.dumps({"meta": meta, "results": rows}, indent=1))
    for name, row in rows.items():
        cells = [f"{row[f'@{k}']['bridge']['mean']:.3f}/{row[f'@{k}']['kernel_tuner']['mean']:.3f} "
                 f"{row[f'@{k}']['difference']:+.3f} [{row[f'@{k}']['difference_ci95'][0]:+.3f}, "
                 f"{row[f'@{k}']['difference_ci95'][1]:+.3f}]" for k in checkpoints]
        print(name, " | ".join(cells))
    print(f"wrote {out}")


def run_exact(args: argparse.Namespace) -> None:
    """Every strategy but diff_evo (its own run draws an unseeded Latin hypercube) on every table."""
    jobs = [(str(t), s, seed, args.budget) for s in args.strategies.split(",") if s and s != "diff_evo"
            for t in TABLES for seed in range(args.exact_seeds)]
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(exact, jobs, chunksize=1))
    summary = {s: f"{sum(r['identical'] for r in rows if r['strategy'] == s)}/{sum(r['strategy'] == s for r in rows)}"
               for s in dict.fromkeys(r["strategy"] for r in rows)}
    out = ROOT / "bench" / "results" / f"{args.out}_exact.json"
    out.write_text(json.dumps({"meta": {"seeds": args.exact_seeds, "budget": args.budget, "counting": "hidden"},
                               "identical": summary, "runs": rows}, indent=1))
    print("identical trajectories:", summary)


if __name__ == "__main__":
    main()
