"""The winner's curse in replays with noise, and what the confirm phase does about it.

On the four shared Kernel Tuner tables, replayed with ``sample_noise=true`` (each evaluation draws one of the
entry's 32 recorded times, docs/measurement.md), random search runs 50 evaluations per seed, then the confirm
phase re-measures its 3 best configurations for 5 interleaved rounds. Per run, each estimate against what it
estimates:

- ``search_bias``: the search's best objective (one draw, the lucky one) / the recorded mean time of that
  configuration (a draw's expectation, Kernel Tuner's ``time``) - 1: the winner's curse;
- ``confirm_bias``: the confirmed median / the median of the confirmed configuration's recorded samples - 1;
- ``regret_search`` / ``regret_confirmed``: true value of the reported configuration / the table's optimum - 1;
- ``covered``: whether the confirmed 95 % interval holds the median of that configuration's recorded samples.

Means come with 95 % bootstrap intervals (2000 resamples, seeded) and Wilcoxon signed-rank p-values (against 0,
and paired search vs confirmed). Replays: no number here is a timing. The report is the figure (SVG).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import kt_tables
from bench.common.stats import bootstrap_mean
from bench.harness import Benchmark, Context

METRICS = ("search_bias", "confirm_bias", "regret_search", "regret_confirmed")


@dataclass(frozen=True)
class Options:
    seeds: int = 20
    budget: int = 50
    k: int = 3  # configurations confirmed
    rounds: int = 5  # confirm rounds


def one_run(path: Path, seed: int, o: Options) -> dict[str, Any]:
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
        outcome = optimize(problem, RandomSearcher(problem.space, seed=seed), Budget(evaluations=o.budget),
                           executor=executor)
        options = ConfirmConfig(k=o.k, rounds=o.rounds)
        confirmations, complete, _ = run_confirm(executor, outcome.results, [], problem.direction, options)
    finally:
        executor.close()
    report_ = confirm_report(outcome.results, confirmations, problem.direction, options.k, complete)
    rows, optimum = problem.table.rows, problem.known_optimum
    if outcome.best is None or report_["best"] is None or not optimum:
        raise SystemExit(f"confirm: {path.name} seed {seed}: nothing to confirm")
    true_search = float(rows[outcome.best.config].objective or 0.0)
    chosen = rows[Config(report_["best"]["config"])]
    lo, hi = report_["best"]["ci95"]
    middle = statistics.median(chosen.samples)
    return {"table": path.name, "seed": seed, "search_bias": float(outcome.best.objective or 0.0) / true_search - 1,
            "confirm_bias": report_["best"]["median"] / middle - 1, "regret_search": true_search / optimum - 1,
            "regret_confirmed": float(chosen.objective or 0.0) / optimum - 1, "covered": bool(lo <= middle <= hi),
            "changed_choice": report_["best"]["rank"] != 1}


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


def run(ctx: Context, o: Options) -> dict[str, Any]:
    ctx.used_seeds(range(o.seeds))
    runs = []
    for path in kt_tables():
        runs += [one_run(path, seed, o) for seed in range(o.seeds)]
        ctx.log(f"{path.name}: {o.seeds} seeds")
    tables = {t: summarise([r for r in runs if r["table"] == t]) for t in sorted({r["table"] for r in runs})}
    return {"searcher": "random", "budget": o.budget, "seeds": o.seeds, "confirm": [o.k, o.rounds],
            "tables": tables, "all": summarise(runs), "runs": runs}


def report(ctx: Context, results: Mapping[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = list(results["tables"])
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, metric in enumerate(("search_bias", "confirm_bias")):
        cells = [results["tables"][t][metric] for t in tables]
        err = [[(c[0] - c[1]) * 100 for c in cells], [(c[2] - c[0]) * 100 for c in cells]]
        ax.bar(np.arange(len(tables)) + (i - 0.5) * 0.38, [c[0] * 100 for c in cells], 0.38, yerr=err, capsize=3,
               label=metric)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(tables)), [t.replace(".json.gz", "") for t in tables])
    ax.set_ylabel("reported / true time - 1 (%)")
    ax.set_title("Winner's curse with replay noise: search's best vs confirmed best (95 % bootstrap CI)")
    ax.legend()
    fig.tight_layout()
    ctx.save_figure(fig)


BENCHMARK = Benchmark("confirm", "the winner's curse in noisy replays and the confirm phase's bias, 4 Kernel Tuner "
                      "tables x 20 seeds", Options, run, report, cited_by=("docs/measurement.md",))
