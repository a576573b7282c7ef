"""Baselines on replayed Kernel Tuner tables: fraction of the optimum vs evaluations.

Every searcher of issue 6 (Optuna's samplers, Kernel Tuner's classic strategies, the AUC
portfolio) and uniform random search run on the recorded Kernel Tuner cache files
(``problem=kernel_tuner_cache``: a look-up per evaluation; configurations the tuner's
restrictions excluded are known-infeasible, compile/launch failures are FAILED). After each
evaluation the best-so-far time gives the fraction of the optimum, ``optimum / best`` (0
before the first working configuration). Over seeds: mean and 10/90 percentiles (paper
001, Fig. 11 style), the share of runs that found the optimum, and the evaluations the median
run needed to reach 95 % of it.

Optuna's GP costs seconds per ask (DESIGN.md), so it runs with its own, smaller budget and
tables (``--gp-budget``, ``--gp-tables``); every other searcher gets ``--budget`` on every
table. Simulated annealing gets ``max_fevals = budget``, as Kernel Tuner passes its budget
to the annealing schedule; every other searcher runs with its defaults.

    python bench/baselines.py --seeds 20 --budget 200 --gp-budget 60 --jobs 2

Writes bench/results/baselines.json and bench/results/baselines.png.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # the machine is shared: one thread per process
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import math
import multiprocessing
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from searchlab.api import optimize
from searchlab.core.records import Direction
from searchlab.run.loop import Budget

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "kernel_tuner"
OUT = Path(__file__).resolve().parent / "results"
SEARCHERS = ["random", "optuna_random", "optuna_qmc", "optuna_tpe", "optuna_cmaes", "optuna_gp", "dual_annealing",
             "greedy_ils", "simulated_annealing", "genetic", "portfolio", "portfolio_classics"]
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {  # label -> (searcher, options)
    "portfolio_classics": ("portfolio", {"members": ["dual_annealing", "genetic", "greedy_ils", "simulated_annealing"]}),
}
CHECKPOINTS = (10, 25, 50, 100, 200)
_problems: dict[str, Any] = {}


def _problem(path: str) -> Any:
    from searchlab.adapters.knobs import KernelTunerCache

    if path not in _problems:
        _problems[path] = KernelTunerCache(path=path)
    return _problems[path]


def _searcher(name: str, space: Any, direction: Direction, seed: int, budget: int) -> Any:
    import importlib

    from searchlab.searchers import SCHEMAS

    name, options = VARIANTS.get(name, (name, {}))
    module, _, attr = SCHEMAS[name]()._target_.rpartition(".")
    if name == "simulated_annealing":
        options = {"max_fevals": budget}
    return getattr(importlib.import_module(module), attr)(space, direction=direction, seed=seed, **options)


def run_one(job: tuple[str, str, int, int]) -> dict[str, Any]:
    path, name, seed, budget = job
    if name == "optuna_gp":
        import torch

        torch.set_num_threads(1)
    problem = _problem(path)
    optimum = problem.known_optimum
    start = time.perf_counter()
    outcome = optimize(problem, _searcher(name, problem.space, problem.direction, seed, budget),
                       Budget(evaluations=budget))
    wall = time.perf_counter() - start
    best, curve = math.inf, []
    sign = 1.0 if problem.direction is Direction.MINIMIZE else -1.0
    for result in outcome.results:
        if result.ok and result.objective is not None:
            best = min(best, sign * result.objective)
        curve.append(0.0 if not math.isfinite(best) else (optimum / best if sign > 0 else -best / optimum))
    curve += [curve[-1] if curve else 0.0] * (budget - len(curve))  # a searcher that finished early
    failed = sum(not r.ok for r in outcome.results)
    return {"table": Path(path).name, "searcher": name, "seed": seed, "curve": curve, "wall_s": wall,
            "failed": failed, "stop": outcome.reason.value, "evaluations": len(outcome.results)}


def _summary(runs: list[dict[str, Any]], budget: int) -> dict[str, Any]:
    curves = np.array([r["curve"][:budget] for r in runs])
    marks = [c for c in CHECKPOINTS if c <= budget] + ([budget] if budget not in CHECKPOINTS else [])
    reach = [next((i + 1 for i, v in enumerate(c) if v >= 0.95), None) for c in curves]
    reached = sorted(r for r in reach if r is not None)
    return {
        "seeds": len(runs), "budget": budget,
        "at": {str(m): {"mean": float(curves[:, m - 1].mean()), "p10": float(np.percentile(curves[:, m - 1], 10)),
                        "p90": float(np.percentile(curves[:, m - 1], 90))} for m in marks},
        "found_optimum": float(np.mean(curves[:, -1] >= 1.0 - 1e-12)),
        "evals_to_95pct_median": reached[len(curves) // 2] if len(reached) > len(curves) // 2 else None,
        "failed_share": float(np.mean([r["failed"] / max(1, r["evaluations"]) for r in runs])),
        "wall_s_mean": float(np.mean([r["wall_s"] for r in runs])),
        "curve": {"mean": curves.mean(axis=0).round(5).tolist(), "p10": np.percentile(curves, 10, axis=0).round(5).tolist(),
                  "p90": np.percentile(curves, 90, axis=0).round(5).tolist()},
    }


def _plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = list(report["tables"])
    cols = min(2, len(tables))
    rows = math.ceil(len(tables) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.6 * rows), squeeze=False, sharey=True)
    palette = [c for c in plt.get_cmap("tab10").colors if c != plt.get_cmap("tab10").colors[7]] + ["navy"]  # no grey
    names = [n for n in SEARCHERS if any(n in report["tables"][t] for t in tables)]
    style = {n: {"color": palette[i % len(palette)], "lw": 1.3}
             for i, n in enumerate(x for x in names if x not in ("random", "portfolio"))}
    style["random"] = {"color": "grey", "lw": 2.0, "ls": "--"}
    style["portfolio"] = {"color": "black", "lw": 2.4}
    for ax, table in zip(axes.flat, tables):
        for name, s in report["tables"][table].items():
            x = np.arange(1, len(s["curve"]["mean"]) + 1)
            ax.plot(x, s["curve"]["mean"], label=name, **style[name])
            if name in ("random", "portfolio"):
                ax.fill_between(x, s["curve"]["p10"], s["curve"]["p90"], color=style[name]["color"], alpha=0.08)
        ax.set_title(table.replace(".json.gz", ""))
        ax.set_xlabel("evaluations")
        ax.set_xscale("log")
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("fraction of optimum")
    for ax in axes.flat[len(tables):]:
        ax.axis("off")
    handles = {h.get_label(): h for ax in axes.flat for h in ax.get_lines()}
    fig.legend([handles[n] for n in names if n in handles], [n for n in names if n in handles], loc="lower center",
               ncol=6, fontsize=8)
    fig.suptitle(f"Replayed Kernel Tuner caches: mean over {report['seeds']} seeds "
                 "(bands: 10-90 % of random and portfolio)")
    fig.tight_layout(rect=(0, 0.07, 1, 0.97))
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--gp-budget", type=int, default=60)
    ap.add_argument("--gp-tables", nargs="*", default=["convolution_A100.json.gz"])
    ap.add_argument("--tables", nargs="*", default=None, help="file names in the data folder (default: all)")
    ap.add_argument("--searchers", nargs="*", default=SEARCHERS)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=OUT / "baselines.json")
    ap.add_argument("--merge", action="store_true", help="add these searchers to an existing --out report")
    ap.add_argument("--plot-only", action="store_true", help="redraw the PNG from --out")
    args = ap.parse_args()
    if args.plot_only:
        _plot(json.loads(args.out.read_text()), args.out.with_suffix(".png"))
        return
    tables = sorted(args.tables or [p.name for p in args.data.glob("*.json.gz")])
    jobs = [(str(args.data / t), name, seed, args.gp_budget if name == "optuna_gp" else args.budget)
            for name in args.searchers for t in tables if name != "optuna_gp" or t in args.gp_tables
            for seed in range(args.seeds)]
    jobs.sort(key=lambda j: j[1] != "optuna_gp")  # the long ones first
    start, load = time.time(), os.getloadavg()
    runs: list[dict[str, Any]] = []
    with multiprocessing.Pool(args.jobs) as pool:
        for i, run in enumerate(pool.imap_unordered(run_one, jobs)):
            runs.append(run)
            if i % 50 == 0 or run["searcher"] == "optuna_gp":
                print(f"[{i + 1}/{len(jobs)}] {run['table']} {run['searcher']} seed {run['seed']}: "
                      f"{run['curve'][-1]:.3f} in {run['wall_s']:.1f} s", flush=True)
    command = "python bench/baselines.py " + " ".join(
        f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in vars(args).items() if k not in ("data", "out", "merge", "plot_only") and v is not None)
    report: dict[str, Any] = {
        "what": "fraction of the optimum (optimum / best-so-far time) vs evaluations on replayed Kernel Tuner caches",
        "commands": [command],
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_at_start": load,
                    "note": "2 cores shared with other engineers' jobs; quality figures do not depend on load"},
        "seeds": args.seeds, "wall_s": time.time() - start, "tables": {t: {} for t in tables},
    }
    if args.merge and args.out.exists():
        old = json.loads(args.out.read_text())
        old["commands"] = [*old.get("commands", []), command]
        old["wall_s"] = old.get("wall_s", 0.0) + report["wall_s"]
        report = old
    for table in tables:
        for name in args.searchers:
            mine = sorted((r for r in runs if r["table"] == table and r["searcher"] == name), key=lambda r: r["seed"])
            if mine:
                report["tables"].setdefault(table, {})[name] = _summary(
                    mine, args.gp_budget if name == "optuna_gp" else args.budget)
    names = {n for t in report["tables"].values() for n in t} - {"optuna_gp"}
    report["overall"] = {name: {m: float(np.mean([t[name]["at"][m]["mean"] for t in report["tables"].values()]))
                                for m in map(str, CHECKPOINTS) if m in next(iter(report["tables"].values()))[name]["at"]}
                         for name in sorted(names)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    _plot(report, args.out.with_suffix(".png"))
    print(json.dumps(report["overall"], indent=1))


if __name__ == "__main__":
    main()
