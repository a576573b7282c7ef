"""Tune one searcher's settings on 3 of the 4 shared convolution tables, judge them on the 4th.

Issue 23, item 5 (first, small use): for each fold (one table held out), ``problem=searcher_settings``
tunes ``--searcher`` on the other three with ``--meta`` as the searcher of settings (an ordinary run,
composed as ``python -m searchlab`` composes it, into ``<out>/fold_<table>``); then the searcher's
defaults and the tuned settings replay the held-out table with ``--test-seeds`` seeds that the
tuning never used (seeds 1000+). Reported per fold: each one's mean fraction of the optimum over the
budget, the paired difference (tuned - default, pairs = seeds) with its 95 % bootstrap interval and
the Wilcoxon signed-rank p (searchlab.study.analysis.stats). A difference whose interval holds 0 is "no
difference".

    OMP_NUM_THREADS=1 /work/bin/cpuslot python bench/tuner_folds.py --searcher genetic --meta optuna_tpe
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "kernel_tuner"
TABLES = ("convolution_A100", "convolution_A4000", "convolution_MI250X", "convolution_W6600")


def _tune(searcher: str, meta: str, train: list[str], args: argparse.Namespace, run_dir: Path) -> dict:
    from searchlab.run.lifecycle import execute
    from searchlab.study.execution.grid import _compose_run

    if (run_dir / "summary.json").is_file():
        return json.loads((run_dir / "summary.json").read_text())
    overrides = ["problem=searcher_settings", f"problem.searcher={searcher}", f"problem.train=[{','.join(train)}]",
                 f"problem.seeds={args.train_seeds}", f"problem.budget={args.budget}", f"searcher={meta}",
                 f"budget.evaluations={args.meta_evaluations}", "executor=serial", "progress=off", "seed=0"]
    cfg = _compose_run(overrides)
    if (run_dir / "results.db").exists():
        cfg["resume"] = str(run_dir)
    return execute(cfg, run_dir, names=("searcher_settings", meta), quiet=True)


def _scores(searcher: str, settings: dict, path: str, seeds: list[int], budget: int) -> np.ndarray:
    from searchlab.tuning._train import fraction_score, replay, train_table

    table = train_table(path)
    return np.array([fraction_score(table, [replay(searcher, settings, path, s, budget)]) for s in seeds])


def fold(held: str, args: argparse.Namespace, out: Path) -> dict:
    from searchlab.study.analysis import stats as S

    train = [str(DATA / f"{t}.json.gz") for t in TABLES if t != held]
    started = time.time()
    summary = _tune(args.searcher, args.meta, train, args, out / f"fold_{held}")
    tuned = dict(summary["best"]["config"])
    seeds = list(range(1000, 1000 + args.test_seeds))
    test = str(DATA / f"{held}.json.gz")
    default = _scores(args.searcher, {}, test, seeds, args.budget)
    mine = _scores(args.searcher, tuned, test, seeds, args.budget)
    diff = mine - default
    mean, lo, hi = (float(v[0]) for v in S.bootstrap_band(diff[:, None]))
    _, p = S.wilcoxon_pair(mine, default)
    verdict = "tuned better" if lo > 0 else "default better" if hi < 0 else "no difference"
    return {"held_out": held, "train": [Path(t).name for t in train], "tuned": tuned,
            "train_score_tuned": summary["best"]["objective"], "train_score_default": summary["report"].get("default_score"),
            "test_default": float(default.mean()), "test_tuned": float(mine.mean()), "diff_mean": mean,
            "diff_ci95": [lo, hi], "wilcoxon_p": p, "verdict": verdict, "test_seeds": len(seeds),
            "test_default_per_seed": default.tolist(), "test_tuned_per_seed": mine.tolist(),
            "wall_s": round(time.time() - started, 1)}


def pooled(results: list[dict]) -> dict:
    """Every fold's pairs together (pairs = held-out table x seed), as the study pools problems."""
    from searchlab.study.analysis import stats as S

    default = np.concatenate([r["test_default_per_seed"] for r in results])
    mine = np.concatenate([r["test_tuned_per_seed"] for r in results])
    mean, lo, hi = (float(v[0]) for v in S.bootstrap_band((mine - default)[:, None]))
    return {"pairs": int(default.size), "test_default": float(default.mean()), "test_tuned": float(mine.mean()),
            "diff_mean": mean, "diff_ci95": [lo, hi], "wilcoxon_p": S.wilcoxon_pair(mine, default)[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searcher", default="genetic")
    parser.add_argument("--meta", default="optuna_tpe")
    parser.add_argument("--meta-evaluations", type=int, default=40)
    parser.add_argument("--train-seeds", type=int, default=5)
    parser.add_argument("--test-seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=220)
    parser.add_argument("--held-out", nargs="*", default=list(TABLES))
    parser.add_argument("--out", default="outputs/tuner_folds")
    parser.add_argument("--json", default="bench/results/tuner_folds.json")
    args = parser.parse_args()
    out = Path(args.out) / args.searcher
    results = []
    for held in args.held_out:
        results.append(fold(held, args, out))
        print(json.dumps(results[-1]), flush=True)
        payload = {"searcher": args.searcher, "meta": args.meta, "meta_evaluations": args.meta_evaluations,
                   "train_seeds": args.train_seeds, "budget": args.budget, "score": "fraction", "folds": results,
                   "pooled": pooled(results)}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()
