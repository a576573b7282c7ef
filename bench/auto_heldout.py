"""``auto`` on spaces that chose nothing (issue 53: "choose on the four shared tables, report elsewhere").

Everything issue 53 changed in ``auto`` was chosen on the four shared convolution tables (seeds 100-119). This
benchmark reports it on spaces that played no part in the choice, each variant of ``auto`` (a JSON object of
options per variant; ``shipped`` = the defaults) beside ``random``, driven through searchlab's ``optimize``:

- ``pocl``: our four OpenCL kernels recorded on pocl (``bench/results/probabilistic_tables``), each under the
  four resource-cap architectures of ``bench/probabilistic.py`` (20-80 % of configurations fail): 16 spaces,
  fraction of the optimum after 10 / 20 / 50 evaluations, and the share of failed evaluations;
- ``hub``: the hub's hyperparameter spaces of Kernel Tuner's strategies ("Tuning the tuner",
  ``../shared/data/benchmark_hub/hyperparametertuning``, 8-243 configurations, objective ``score`` maximised,
  scores often negative): fraction of the range, (best - worst) / (optimum - worst), after 5 / 10 / 20 / 40.

Mean over (space, seed) with a 95 % bootstrap interval, and each variant minus the first, paired on
(space, seed), with a bootstrap interval: a difference whose interval holds 0 is reported as none. ``before``
pairs the first variant with an earlier run's (the code before issue 53's changes: run this benchmark with
``PYTHONPATH`` pointing at that code's checkout), so "the lead is kept" is a measured difference.

    cpuslot --exclusive .venv/bin/python -m bench auto_heldout
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.auto_kt import SHARED
from bench.auto_stats import interval
from bench.harness import Benchmark, Context
from searchlab.core.records import Direction

POCL = Path(__file__).resolve().parent / "results" / "probabilistic_tables"
KERNELS = ("fir", "matmul_blocked", "conv2d", "smith_waterman")
ARCHS = ("small_few", "small_many", "large_few", "large_many")
HUB = SHARED / "data" / "benchmark_hub" / "hyperparametertuning" / "cachefiles"


@dataclass(frozen=True)
class Options:
    seeds: int = 20
    first_seed: int = 0
    variants: str = '{"shipped": {}}'  # name -> auto's options; the first is the reference of the differences
    families: list[str] = field(default_factory=lambda: ["pocl", "hub"])
    before: str = ""  # an earlier auto_heldout result (path): the first variant paired with its first on (space, seed)


def _problems(family: str) -> dict[str, Any]:
    if family == "pocl":
        from searchlab.adapters.knobs import KnobTable
        from searchlab.adapters.table import load_table

        tables = {k: load_table(POCL / f"{k}.json.gz") for k in KERNELS}
        return {f"{k}/{a}": KnobTable(table=tables[k], arch=a) for k in KERNELS for a in ARCHS}
    from searchlab.adapters.table.problem import TableProblem
    from searchlab.interchange import open_table

    return {p.name.split("_bruteforce_")[1].removesuffix("_T4.json"): TableProblem(
        table=open_table(p, objective="score", direction="maximize")) for p in sorted(HUB.glob("*_T4.json"))}


def _score(problem: Any, values: list[float | None], checkpoints: tuple[int, ...]) -> dict[str, float]:
    """Per checkpoint: optimum / best (minimising run time) or the fraction of the range (maximising a score)."""
    rows = [m.objective for m in problem.table.rows.values() if m.objective is not None] \
        if hasattr(problem, "table") else []
    maximise = problem.direction is Direction.MAXIMIZE
    out = {}
    for n in checkpoints:
        seen = [v for v in values[:n] if v is not None]
        if not seen:
            out[str(n)] = 0.0
        elif maximise:
            worst, best = min(rows), max(rows)
            out[str(n)] = (max(seen) - worst) / (best - worst) if best > worst else 1.0
        else:
            out[str(n)] = float(problem.known_optimum / min(seen))
    return out


def one(problem: Any, name: str, options: dict[str, Any] | None, seed: int, budget: int) -> list[float | None]:
    from searchlab.api import optimize
    from searchlab.run.loop import Budget
    from searchlab.searchers import AutoSearcher, RandomSearcher

    space, direction = problem.space, problem.direction
    searcher = RandomSearcher(space, direction=direction, seed=seed) if options is None else \
        AutoSearcher(space, direction=direction, seed=seed, **options)
    outcome = optimize(problem, searcher, Budget(evaluations=budget))
    return [r.objective if r.ok else None for r in outcome.results]


def run(ctx: Context, opts: Options) -> dict[str, Any]:
    variants: dict[str, dict[str, Any] | None] = {**json.loads(opts.variants), "random": None}
    reference = next(iter(variants))
    out: dict[str, Any] = {"variants": variants, "families": {}}
    seeds = ctx.used_seeds(range(opts.first_seed, opts.first_seed + opts.seeds))
    for family in opts.families:
        checkpoints = (10, 20, 50) if family == "pocl" else (5, 10, 20, 40)
        problems = _problems(family)
        runs: list[dict[str, Any]] = []
        for label, problem in problems.items():
            for seed in seeds:
                for name, options in variants.items():
                    values = one(problem, name, options, seed, max(checkpoints))
                    runs.append({"space": label, "seed": seed, "variant": name, "at": _score(problem, values, checkpoints),
                                 "failed": sum(v is None for v in values) / max(len(values), 1)})
            ctx.log(f"{family} {label}: " + ", ".join(
                f"{v} {np.mean([r['at'][str(checkpoints[-1])] for r in runs if r['space'] == label and r['variant'] == v]):.3f}"
                for v in variants))
        out["families"][family] = summarise(runs, list(variants), reference, checkpoints)
        if opts.before:
            earlier = json.loads(Path(opts.before).read_text())["results"]
            out["families"][family]["minus_before"] = minus_before(runs, reference, earlier, family, checkpoints)
            out["families"][family]["minus_before"]["file"] = opts.before
    return out


def minus_before(runs: list[dict[str, Any]], reference: str, earlier: dict[str, Any], family: str,
                 checkpoints: tuple[int, ...]) -> dict[str, Any]:
    """This run's first variant minus an earlier run's first variant (e.g. the code before a change), paired on
    (space, seed), per checkpoint, with a bootstrap interval (an interval holding 0: no difference)."""
    then_name = next(iter(earlier["variants"]))
    then = {(r["space"], r["seed"]): r["at"] for r in earlier["families"].get(family, {}).get("per_run", [])
            if r["variant"] == then_name}
    now = {(r["space"], r["seed"]): r["at"] for r in runs if r["variant"] == reference}
    keys = sorted(set(now) & set(then))
    return {"pairs": len(keys), **{str(n): interval([now[k][str(n)] - then[k][str(n)] for k in keys])
                                   for n in checkpoints if keys}}


def summarise(runs: list[dict[str, Any]], variants: list[str], reference: str, checkpoints: tuple[int, ...]
              ) -> dict[str, Any]:
    key = {(r["variant"], r["space"], r["seed"]): r for r in runs}
    pairs = sorted({(r["space"], r["seed"]) for r in runs})
    table: dict[str, Any] = {}
    for v in variants:
        table[v] = {"fraction": {str(n): interval([key[(v, *p)]["at"][str(n)] for p in pairs]) for n in checkpoints},
                    "failed": interval([key[(v, *p)]["failed"] for p in pairs])}
        if v != reference:
            table[v]["minus_" + reference] = {str(n): interval([key[(v, *p)]["at"][str(n)] - key[(reference, *p)]["at"][str(n)]
                                                              for p in pairs]) for n in checkpoints}
    return {"runs": len(pairs), "rows": table, "per_run": runs}


BENCHMARK = Benchmark("auto_heldout", "auto's variants on spaces that chose nothing: pocl kernels under resource caps, "
                      "the hub's hyperparameter spaces (issue 53)", Options, run, cited_by=("docs/baselines.md",))
