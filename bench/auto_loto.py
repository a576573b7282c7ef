"""Choosing ``auto``'s settings on the shared tables, and leave-one-table-out: what the choice is worth elsewhere.

The four shared convolution tables are the only Kernel Tuner tables here, so whatever is chosen for ``auto`` is
chosen on them (issue 22 item 6, issue 53). Every variant (a JSON object of ``auto``'s options; the first is the
reference, normally the shipped defaults) runs on every table with the *choosing* seeds; then

- **the choice** on all four tables: the variant with the highest score, the mean over (table, seed) of the mean
  fraction of the optimum at ``checkpoints`` (a tie keeps the earlier variant), and
- **each fold** chooses the same way on three tables and reports the fourth: the fold's choice and the reference on
  the *reporting* seeds of the held-out table, paired on seed, with a bootstrap interval of the difference.

Every run is :func:`bench.auto_tables.drive` (the space Kernel Tuner's harness gives, without Kernel Tuner around
it). The old version of this file (issue 22: ``prior``, ``alignment``, ``min_feasibility``; its results are
``bench/results/historical/auto_loto_grid.jsonl`` and ``peers22_auto_loto.json``) is in the history before issue 53.

    cpuslot --exclusive .venv/bin/python -m bench auto_loto --variants '{"shipped": {}, "x": {"local_every": 2}}'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.auto_stats import interval
from bench.auto_tables import DEVICES, drive, shared_table
from bench.harness import Benchmark, Context


@dataclass(frozen=True)
class Options:
    variants: str = '{"shipped": {}}'
    choose_seeds: list[int] = field(default_factory=lambda: list(range(100, 120)))
    report_seeds: list[int] = field(default_factory=lambda: list(range(0, 20)))
    budget: int = 100
    checkpoints: list[int] = field(default_factory=lambda: [20, 40, 60, 100])


def choose(scores: dict[str, dict[str, float]], tables: list[str]) -> tuple[str, dict[str, float]]:
    """The variant with the best mean score over ``tables`` (insertion order breaks ties: the reference first)."""
    train = {v: float(np.mean([per[t] for t in tables])) for v, per in scores.items()}
    best = max(train.values())
    return next(v for v in train if train[v] == best), train


def _runs(ctx: Context, variants: dict[str, dict[str, Any]], seeds: list[int], opts: Options,
          done: dict[tuple[str, str, int], list[float]]) -> dict[tuple[str, str, int], list[float]]:
    for name, options in variants.items():
        for device in DEVICES:
            for seed in ctx.used_seeds(seeds):
                if (name, device, seed) not in done:
                    curve, _ = drive(shared_table(device), seed, opts.budget, options)
                    done[(name, device, seed)] = [curve[min(n, len(curve)) - 1] for n in opts.checkpoints]
        ctx.log(f"{name}: " + ", ".join(f"{d} {np.mean([done[(name, d, s)][-1] for s in seeds]):.3f}" for d in DEVICES))
    return done


def run(ctx: Context, opts: Options) -> dict[str, Any]:
    variants: dict[str, dict[str, Any]] = json.loads(opts.variants)
    reference = next(iter(variants))
    runs = _runs(ctx, variants, opts.choose_seeds, opts, {})
    scores = {v: {d: float(np.mean([np.mean(runs[(v, d, s)]) for s in opts.choose_seeds])) for d in DEVICES}
              for v in variants}
    chosen, train = choose(scores, list(DEVICES))
    folds: dict[str, Any] = {}
    for held in DEVICES:
        pick, fold_train = choose(scores, [d for d in DEVICES if d != held])
        folds[held] = {"chosen": pick, "training_scores": fold_train}
    wanted = {v: variants[v] for v in {reference, *(f["chosen"] for f in folds.values())}}
    report = _runs(ctx, wanted, opts.report_seeds, opts, {})
    for held, fold in folds.items():
        mine = [report[(fold["chosen"], held, s)] for s in opts.report_seeds]
        ref = [report[(reference, held, s)] for s in opts.report_seeds]
        fold["heldout"] = {str(n): {"chosen": interval([r[i] for r in mine]), "reference": interval([r[i] for r in ref]),
                                    "difference": interval([a[i] - b[i] for a, b in zip(mine, ref)])}
                           for i, n in enumerate(opts.checkpoints)}
    return {"variants": variants, "reference": reference, "scores": scores, "chosen_on_all_four": chosen,
            "training_scores": train, "folds": folds,
            "choose_runs": {f"{v}|{d}|{s}": r for (v, d, s), r in runs.items()},
            "report_runs": {f"{v}|{d}|{s}": r for (v, d, s), r in report.items()}}


BENCHMARK = Benchmark("auto_loto", "auto's settings chosen on the four shared tables, and chosen leave-one-table-out: "
                      "the held-out table with the fold's choice against the reference (issues 22, 53)", Options, run,
                      cited_by=("docs/baselines.md",))
