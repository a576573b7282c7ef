"""The winner's curse in replays with noise, and what the confirm phase does about it.

On the four shared Kernel Tuner tables, replayed with ``sample_noise=true`` (each evaluation
draws one of the entry's 32 recorded times, docs/measurement.md), random search runs 50
evaluations per seed, then the confirm phase re-measures its 3 best configurations for 5
interleaved rounds. Per run, each estimate against what it estimates:

- ``search_bias``: the search's best objective (one draw, the lucky one) / the recorded mean
  time of that configuration (a draw's expectation, Kernel Tuner's ``time``) - 1: the
  winner's curse (negative: the search reports too good a time);
- ``confirm_bias``: the confirmed median / the median of the confirmed configuration's
  recorded samples - 1 (recorded times are right-skewed: their median is below their mean);
- ``regret_search`` / ``regret_confirmed``: true value of the reported configuration / the
  table's optimum - 1 (does the confirm phase pick a truly better configuration?);
- ``covered``: whether the confirmed 95 % interval holds the median of that configuration's
  recorded samples.

Means come with 95 % bootstrap intervals (2000 resamples, seeded) and Wilcoxon signed-rank
p-values (against 0, and paired search vs confirmed).

    python bench/confirm.py --seeds 20

Writes bench/results/confirm.json and bench/results/confirm.png.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "kernel_tuner"
OUT = Path(__file__).resolve().parent / "results" / "confirm.json"
METRICS = ("search_bias", "confirm_bias", "regret_search", "regret_confirmed")


def one_run(path: Path, seed: int, budget: int, k: int, rounds: int) -> dict[str, Any]:
    from searchlab.adapters.knobs import KernelTunerCache
    from searchlab.api import optimize
    from searchlab.core.records import Config
    from searchlab.run.confirm import ConfirmConfig, run_confirm
    from searchlab.run.confirm_report import confirm_report
    from searchlab.run.execution import SerialExecutor
    from searchlab.run.loop import Budget
    from searchlab.searchers import RandomSearcher

    problem = KernelTunerCache(str(path), sample_noise=True, noise_seed=seed)
    executor = SerialExecutor()
    executor.start(problem)
    try:
        outcome = optimize(problem, RandomSearcher(problem.space, seed=seed), Budget(evaluations=budget),
                           executor=executor)
        options = ConfirmConfig(k=k, rounds=rounds)
        confirmations, complete, _ = run_confirm(executor, outcome.results, [], problem.direction, options)
    finally:
        executor.close()
    report = confirm_report(outcome.results, confirmations, problem.direction, options.k, complete)
    rows, optimum = problem.table.rows, problem.known_optimum
    assert outcome.best is not None and report["best"] is not None and optimum
    true_search = rows[outcome.best.config].objective
    chosen = rows[Config(report["best"]["config"])]
    lo, hi = report["best"]["ci95"]
    return {"table": path.name, "seed": seed,
            "search_bias": outcome.best.objective / true_search - 1,
            "confirm_bias": report["best"]["median"] / statistics.median(chosen.samples) - 1,
            "regret_search": true_search / optimum - 1, "regret_confirmed": chosen.objective / optimum - 1,
            "covered": bool(lo <= statistics.median(chosen.samples) <= hi),
            "changed_choice": report["best"]["rank"] != 1}


def bootstrap_mean(values: list[float], seed: int = 0, n: int = 2000) -> list[float]:
    rng = np.random.default_rng(seed)
    data = np.asarray(values)
    means = rng.choice(data, size=(n, len(data)), replace=True).mean(axis=1)
    return [float(np.mean(data)), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def wilcoxon(x: list[float], y: list[float] | None = None) -> float | None:
    from scipy.stats import wilcoxon as test

    diff = np.asarray(x) - (np.asarray(y) if y is not None else 0.0)
    return None if not np.any(diff) else float(test(diff).pvalue)


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {m: bootstrap_mean([r[m] for r in runs]) for m in METRICS}
    out["p_search_bias_vs_0"] = wilcoxon([r["search_bias"] for r in runs])
    out["p_confirm_bias_vs_0"] = wilcoxon([r["confirm_bias"] for r in runs])
    out["p_regret_search_vs_confirmed"] = wilcoxon([r["regret_search"] for r in runs],
                                                   [r["regret_confirmed"] for r in runs])
    out["coverage"] = float(np.mean([r["covered"] for r in runs]))
    out["changed_choice"] = float(np.mean([r["changed_choice"] for r in runs]))
    out["runs"] = len(runs)
    return out


def plot(payload: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = list(payload["tables"])
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, metric in enumerate(("search_bias", "confirm_bias")):
        mean = [payload["tables"][t][metric][0] * 100 for t in tables]
        err = [[(payload["tables"][t][metric][0] - payload["tables"][t][metric][1]) * 100 for t in tables],
               [(payload["tables"][t][metric][2] - payload["tables"][t][metric][0]) * 100 for t in tables]]
        ax.bar(np.arange(len(tables)) + (i - 0.5) * 0.38, mean, 0.38, yerr=err, capsize=3, label=metric)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(tables)), [t.replace(".json.gz", "") for t in tables])
    ax.set_ylabel("reported / true time - 1 (%)")
    ax.set_title("Winner's curse with replay noise: search's best vs confirmed best (95 % bootstrap CI)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    start, load = time.time(), os.getloadavg()
    runs = [one_run(path, seed, args.budget, args.k, args.rounds)
            for path in sorted(DATA.glob("*.json.gz")) for seed in range(args.seeds)]
    tables = {t: summarise([r for r in runs if r["table"] == t]) for t in sorted({r["table"] for r in runs})}
    payload = {"searcher": "random", "budget": args.budget, "seeds": args.seeds, "confirm": [args.k, args.rounds],
               "tables": tables, "all": summarise(runs), "runs": runs, "wall_s": time.time() - start,
               "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_at_start": load,
                           "load_at_end": os.getloadavg(),
                           "note": "2 cores shared with other engineers' jobs; replay figures do not depend on load"}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=1))
    plot(payload, args.out.with_suffix(".png"))
    print(json.dumps({"tables": tables, "all": payload["all"]}, indent=1))


if __name__ == "__main__":
    main()
