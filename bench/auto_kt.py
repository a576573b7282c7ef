"""``auto`` beside every Kernel Tuner 1.5 strategy in Kernel Tuner's own harness: thinking time and quality (issue 53).

One run of this benchmark answers, side by side and interleaved, the issue's "Done when":

- **Wall time per 250-evaluation run**: ``tune_kernel(..., simulation_mode=True, strategy=...,
  strategy_options={"max_fevals": 250})`` on the four shared convolution tables (``../shared/data/kernel_tuner``),
  restricted to every recorded configuration, failed ones included (strategies meet the failures as a live run
  would), ``seeds`` seeds; for each seed and table, ``auto`` and the 16 strategies run one after another in an
  order rotated by the seed (so no row always runs first or last). Timed: the ``tune_kernel`` call (Kernel Tuner's
  own set-up included, the same for every row). The criterion: ``auto``'s median over its runs at most 3x the
  median over the strategies of each strategy's median.
- **Fraction of the optimum at 20/40/60/100/250 distinct evaluations** of those runs (optimum over the best time
  among the first n distinct configurations; a failure counts and keeps the best so far; a run that ended early
  keeps its best), mean with a 95 % bootstrap interval over (table, seed).
- **The trap check**: ``auto`` with ``max_fevals=100`` on seeds ``0..trap_seeds-1`` of each table: mean, lowest seed
  and seeds below 0.90 at 100.
- **Against an earlier run** (``before``, an earlier ``auto_kt`` JSON, e.g. of the code before a change): ``auto``'s
  fraction minus the earlier ``auto``'s, paired on (table, seed) at each checkpoint, with a bootstrap interval
  (the issue's "not lower than today's"); the same for the trap runs.
- **Per-proposal time** (``ask`` plus the ``tell`` that follows, inside Kernel Tuner's loop; the searcher is
  :class:`TimedAuto`, ``auto`` with a clock around those two calls): p50 / p90 over the 250-evaluation runs, and
  over a budget 4x the space (``max_fevals=1024`` on a 256-member subset of each table, every 17th recorded
  configuration: the search must say "exhausted" quickly, not keep searching).

Kernel Tuner's strategies are seeded through numpy's and Python's global random states (``seed`` per run); a few
of them draw from sources we do not seed, so their rows are not exactly repeatable.

    cpuslot --exclusive .venv/bin/python -m bench auto_kt
"""

from __future__ import annotations

import gzip
import json
import os
import random
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import Benchmark, Context
from searchlab.core.records import Candidate, Result
from searchlab.searchers import AutoSearcher

# ../shared beside the repository (SEARCHLAB_SHARED names another place, e.g. from a worktree)
SHARED = Path(os.environ.get("SEARCHLAB_SHARED", Path(__file__).resolve().parents[2] / "shared"))
TABLE_DIR = SHARED / "data" / "kernel_tuner"
CHECKPOINTS = (20, 40, 60, 100, 250)
# Kernel Tuner 1.5's single-objective strategies that take max_fevals. Left out: brute_force (no max_fevals),
# skopt and pyatf_strategies (optional packages not installed), nsga2/nsga3 (multi-objective).
KT_STRATEGIES = ("random_sample", "minimize", "basinhopping", "diff_evo", "genetic_algorithm", "greedy_mls",
                 "ordered_greedy_mls", "greedy_ils", "dual_annealing", "mls", "pso", "simulated_annealing",
                 "firefly_algorithm", "bayes_opt", "hybrid_vndx", "adaptive_tabu_greywolf")


@dataclass(frozen=True)
class Options:
    seeds: int = 10  # seeds 0..seeds-1 of the side-by-side runs
    budget: int = 250
    trap_seeds: int = 20  # auto alone, max_fevals=trap_budget, seeds 0..trap_seeds-1
    trap_budget: int = 100
    over_seeds: int = 3  # the budget-past-the-space runs, per table
    over_members: int = 256
    over_factor: int = 4
    tables: list[str] = field(default_factory=lambda: ["A100", "A4000", "MI250X", "W6600"])
    strategies: list[str] = field(default_factory=lambda: list(KT_STRATEGIES))
    auto_options: str = ""  # JSON object of auto's options (a variant); "" = the shipped defaults
    # an earlier auto_kt result (path): its auto runs paired with this run's on (table, seed), "" = none
    before: str = ""


class TimedAuto(AutoSearcher):
    """``auto`` with a clock around ``ask`` and ``tell``: one entry per proposal (its ask and the tell after it)."""

    clock: list[float] = []

    def ask(self, n: int = 1) -> list[Candidate]:
        start = time.perf_counter()
        out = super().ask(n)
        TimedAuto.clock.append(time.perf_counter() - start)
        return out

    def tell(self, result: Result) -> None:
        start = time.perf_counter()
        super().tell(result)
        if TimedAuto.clock:
            TimedAuto.clock[-1] += time.perf_counter() - start


class _Table:
    """One shared table: its Kernel Tuner cache (decompressed), parameter names, recorded members, optimum."""

    def __init__(self, device: str, tmp: Path) -> None:
        self.device = device
        self.path = tmp / f"convolution_{device}.json"
        with gzip.open(TABLE_DIR / f"convolution_{device}.json.gz", "rt") as src:
            self.path.write_text(src.read())
        cache = json.loads(self.path.read_text())
        self.names: list[str] = cache["tune_params_keys"]
        entries = cache["cache"].values()
        self.members = sorted({tuple(e[n] for n in self.names) for e in entries})
        self.optimum = min(float(e["time"]) for e in entries if isinstance(e.get("time"), (int, float)))


def tune(table: _Table, strategy: Any, seed: int, budget: int, members: Sequence[tuple[Any, ...]] | None = None
         ) -> tuple[float, list[float]]:
    """One ``tune_kernel`` run: its wall time and the fraction of the optimum after each distinct configuration."""
    from constraint import FunctionConstraint
    from kernel_tuner import util
    from kernel_tuner.interface import tune_kernel

    allowed = set(table.members if members is None else members)
    cache = util.read_cache(str(table.path), open_cache=False)
    random.seed(seed)
    np.random.seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        results, _ = tune_kernel(**util.infer_args_from_cache(cache), cache=str(table.path), simulation_mode=True,
                                 restrictions=[FunctionConstraint(lambda *v: v in allowed)], strategy=strategy,
                                 strategy_options={"max_fevals": budget}, quiet=True)
        wall = time.perf_counter() - start
    seen: set[tuple[Any, ...]] = set()
    best, curve = np.inf, []
    for r in results:
        key = tuple(r[n] for n in table.names)
        if key in seen:
            continue
        seen.add(key)
        value = r.get("time")
        if "__error__" not in r and isinstance(value, (int, float)) and np.isfinite(value):
            best = min(best, float(value))
        curve.append(float(table.optimum / best) if np.isfinite(best) else 0.0)
    return wall, curve[:budget]


def at(curve: Sequence[float], n: int) -> float:
    return float(curve[min(n, len(curve)) - 1]) if curve else 0.0


def _auto(seed: int, options: dict[str, Any]) -> Any:
    from searchlab.integrations.kernel_tuner import Strategy

    return Strategy(TimedAuto, seed=seed, **options)


def side_by_side(ctx: Context, opts: Options, tables: dict[str, _Table], auto_options: dict[str, Any]
                 ) -> list[dict[str, Any]]:
    rows = ["auto", *opts.strategies]
    runs: list[dict[str, Any]] = []
    for seed in ctx.used_seeds(range(opts.seeds)):
        order = rows[seed % len(rows):] + rows[:seed % len(rows)]
        for device, table in tables.items():
            for row in order:
                TimedAuto.clock = []
                strategy = _auto(seed, auto_options) if row == "auto" else row
                wall, curve = tune(table, strategy, seed, opts.budget)
                runs.append({"row": row, "table": device, "seed": seed, "wall_s": wall, "distinct": len(curve),
                             "at": {str(n): at(curve, n) for n in sorted({*CHECKPOINTS, opts.budget}) if n <= opts.budget},
                             "proposal_s": list(TimedAuto.clock) if row == "auto" else []})
            mine = runs[-len(order):]
            auto_wall = next(r["wall_s"] for r in mine if r["row"] == "auto")
            others = float(np.median([r["wall_s"] for r in mine if r["row"] != "auto"]))
            ctx.log(f"seed {seed} {device}: auto {auto_wall:.2f} s, median strategy {others:.2f} s, "
                    f"auto @{opts.budget} {next(r['at'][str(opts.budget)] for r in mine if r['row'] == 'auto'):.3f}")
    return runs


def traps(ctx: Context, opts: Options, tables: dict[str, _Table], auto_options: dict[str, Any]) -> list[dict[str, Any]]:
    runs = []
    for seed in ctx.used_seeds(range(opts.trap_seeds)):
        for device, table in tables.items():
            TimedAuto.clock = []
            wall, curve = tune(table, _auto(seed, auto_options), seed, opts.trap_budget)
            runs.append({"table": device, "seed": seed, "wall_s": wall, "at": at(curve, opts.trap_budget),
                         "proposal_s": list(TimedAuto.clock)})
        ctx.log(f"trap seed {seed}: " + ", ".join(f"{r['table']} {r['at']:.3f}" for r in runs[-len(tables):]))
    return runs


def past_the_space(ctx: Context, opts: Options, tables: dict[str, _Table], auto_options: dict[str, Any]
                   ) -> list[dict[str, Any]]:
    runs = []
    budget = opts.over_factor * opts.over_members
    for device, table in tables.items():
        step = max(1, len(table.members) // opts.over_members)
        subset = table.members[::step][:opts.over_members]
        for seed in ctx.used_seeds(range(opts.over_seeds)):
            TimedAuto.clock = []
            wall, curve = tune(table, _auto(seed, auto_options), seed, budget, subset)
            runs.append({"table": device, "seed": seed, "members": len(subset), "max_fevals": budget, "wall_s": wall,
                         "distinct": len(curve), "proposals": len(TimedAuto.clock), "proposal_s": list(TimedAuto.clock)})
            ctx.log(f"past the space {device} seed {seed}: {len(subset)} members, max_fevals {budget}: {wall:.2f} s, "
                    f"{len(TimedAuto.clock)} proposals")
    return runs


def run(ctx: Context, opts: Options) -> dict[str, Any]:
    from bench.auto_stats import minus_before, summary

    auto_options = json.loads(opts.auto_options) if opts.auto_options else {}
    with tempfile.TemporaryDirectory() as tmp:
        tables = {d: _Table(d, Path(tmp)) for d in opts.tables}
        main = side_by_side(ctx, opts, tables, auto_options)
        trap = traps(ctx, opts, tables, auto_options)
        over = past_the_space(ctx, opts, tables, auto_options)
    out = summary(main, trap, over, opts.budget)
    if opts.before:
        out["minus_before"] = minus_before(main, trap, json.loads(Path(opts.before).read_text())["results"])
        out["minus_before"]["file"] = opts.before
    ctx.log(json.dumps(out["criteria"], indent=1))
    return {"auto_options": auto_options, "summary": out, "runs": main, "trap_runs": trap, "over_runs": over}


BENCHMARK = Benchmark("auto_kt", "auto beside Kernel Tuner 1.5's strategies in its own harness: wall time per run, "
                      "fraction of the optimum, the trap check, per-proposal time (issue 53)", Options, run,
                      cited_by=("docs/baselines.md", "docs/integrations.md"))
