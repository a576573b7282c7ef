"""Tune one searcher's settings on 3 of the 4 shared convolution tables, judge them on the 4th (issue 23, item 5).

For each fold (one table held out), ``problem=searcher_settings`` tunes ``--searcher`` on the other three with
``--meta`` as the searcher of settings (an ordinary run through the command line, into
``<work-dir>/<searcher>/fold_<table>``; a killed fold resumes); then the searcher's defaults and the tuned
settings replay the held-out table with ``--test-seeds`` seeds the tuning never used (seeds 1000+), scored as the
settings problem scores (``searchlab.tuning.replay``, ``fraction_score``). Reported per fold: each one's mean
fraction of the optimum over the budget, the paired difference (tuned - default, pairs = seeds) with its 95 %
bootstrap interval and the Wilcoxon signed-rank p (searchlab.study.analysis.stats); pooled over the folds too.
A difference whose interval holds 0 is "no difference".
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import KT_DATA, REPO, searchlab_cli
from bench.harness import Benchmark, Context

TABLES = ("convolution_A100", "convolution_A4000", "convolution_MI250X", "convolution_W6600")


@dataclass(frozen=True)
class Options:
    searcher: str = "genetic"
    meta: str = "optuna_tpe"
    meta_evaluations: int = 40
    train_seeds: int = 5
    test_seeds: int = 20
    budget: int = 220
    held_out: tuple[str, ...] = TABLES
    work_dir: str = str(REPO / "outputs" / "tuner_folds")


def tune(ctx: Context, train: list[str], o: Options, run_dir: Path) -> dict[str, Any]:
    """The settings run of one fold (resumed if a killed one is there); its summary.json."""
    summary = run_dir / "summary.json"
    if not summary.is_file():
        overrides = ["problem=searcher_settings", f"problem.searcher={o.searcher}", f"problem.train=[{','.join(train)}]",
                     f"problem.seeds={o.train_seeds}", f"problem.budget={o.budget}", f"searcher={o.meta}",
                     f"budget.evaluations={o.meta_evaluations}", "executor=serial", "progress=off", "seed=0",
                     "plot=false"]
        args = [f"resume={run_dir}"] if (run_dir / "results.db").exists() else [*overrides, f"hydra.run.dir={run_dir}"]
        ctx.log(f"tuning {o.searcher} by {o.meta} into {run_dir}")
        searchlab_cli(args)
    found: dict[str, Any] = json.loads(summary.read_text())
    return found


def scores(searcher: str, settings: dict[str, Any], path: str, seeds: list[int], budget: int) -> np.ndarray:
    from searchlab.tuning import fraction_score, replay, train_table

    table = train_table(path)
    return np.array([fraction_score(table, [replay(searcher, settings, path, s, budget)]) for s in seeds])


def fold(ctx: Context, held: str, o: Options) -> dict[str, Any]:
    from searchlab.study.analysis import stats

    train = [str(KT_DATA / f"{t}.json.gz") for t in TABLES if t != held]
    started = time.time()
    summary = tune(ctx, train, o, Path(o.work_dir) / o.searcher / f"fold_{held}")
    tuned = dict(summary["best"]["config"])
    seeds = list(range(1000, 1000 + o.test_seeds))
    test = str(KT_DATA / f"{held}.json.gz")
    default, mine = scores(o.searcher, {}, test, seeds, o.budget), scores(o.searcher, tuned, test, seeds, o.budget)
    mean, lo, hi = (float(v[0]) for v in stats.bootstrap_band((mine - default)[:, None]))
    _, p = stats.wilcoxon_pair(mine, default)
    return {"held_out": held, "train": [Path(t).name for t in train], "tuned": tuned,
            "train_score_tuned": summary["best"]["objective"],
            "train_score_default": (summary.get("report") or {}).get("default_score"),
            "test_default": float(default.mean()), "test_tuned": float(mine.mean()), "diff_mean": mean,
            "diff_ci95": [lo, hi], "wilcoxon_p": p, "test_seeds": len(seeds),
            "verdict": "tuned better" if lo > 0 else "default better" if hi < 0 else "no difference",
            "test_default_per_seed": default, "test_tuned_per_seed": mine, "wall_s": round(time.time() - started, 1)}


def pooled(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Every fold's pairs together (pairs = held-out table x seed), as the study pools problems."""
    from searchlab.study.analysis import stats

    default = np.concatenate([r["test_default_per_seed"] for r in results])
    mine = np.concatenate([r["test_tuned_per_seed"] for r in results])
    mean, lo, hi = (float(v[0]) for v in stats.bootstrap_band((mine - default)[:, None]))
    return {"pairs": int(default.size), "test_default": float(default.mean()), "test_tuned": float(mine.mean()),
            "diff_mean": mean, "diff_ci95": [lo, hi], "wilcoxon_p": stats.wilcoxon_pair(mine, default)[1]}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    ctx.used_seeds([0, *range(1000, 1000 + o.test_seeds)])
    folds: list[dict[str, Any]] = []
    results: dict[str, Any] = {"searcher": o.searcher, "meta": o.meta, "meta_evaluations": o.meta_evaluations,
                               "train_seeds": o.train_seeds, "budget": o.budget, "score": "fraction", "folds": folds}
    for held in o.held_out:
        folds.append(fold(ctx, held, o))
        ctx.log(f"held out {held}: tuned - default {folds[-1]['diff_mean']:+.4f} {folds[-1]['diff_ci95']}, "
                f"{folds[-1]['verdict']}")
        results["pooled"] = pooled(folds)
        ctx.checkpoint(results)
    return results


BENCHMARK = Benchmark("tuner_folds", "one searcher tuned (problem=searcher_settings) on 3 of the 4 shared tables, "
                      "default vs tuned on the held-out 4th, paired intervals over 20 seeds", Options, run,
                      cited_by=("docs/tuning.md",))
