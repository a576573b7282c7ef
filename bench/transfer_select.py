"""Choose ``searcher=transfer``'s ``front`` by leave-one-device-out on the four shared tables (issue 38).

For each held-out device d (A100, A4000, MI250X, W6600) the setting is chosen on the other
three tables only: each of them in turn is the target, replayed with its recorded samples as
noise, and the remaining two are its ``prior=`` (d's table is never read). Score of a candidate
``front``: the mean over those three targets and the seeds of the fraction of the optimum after
10, 20 and 100 evaluations (mean of the three; noise-free table values, as bench/transfer.py).
The highest score wins; a score within ``TIE`` of the best counts as a tie, won by the smaller
``front`` (the GP starts earlier). Seeds 100-101 (the reported study uses 0-19).

Writes bench/results/transfer_select.json. Usage:
    python bench/transfer_select.py [--fronts 5,10,15,20] [--seeds 2] [--evaluations 100]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "transfer_select.json"
DATA = ROOT.parent / "shared" / "data" / "kernel_tuner"
DEVICES = ("A100", "A4000", "MI250X", "W6600")
SCORED = (10, 20, 100)
TIE = 0.001
FIRST_SEED = 100


def path(device: str) -> str:
    return str(DATA / f"convolution_{device}.json.gz")


def replay(target: str, priors: list[str], front: int, seed: int, evaluations: int) -> list[float]:
    """Fraction of the optimum after each evaluation of one ``transfer`` run."""
    from searchlab.adapters.knobs.kernel_tuner import KernelTunerCache
    from searchlab.api import optimize
    from searchlab.run.loop import Budget
    from searchlab.run.priors import load_prior
    from searchlab.searchers import TransferSearcher

    problem = KernelTunerCache(path(target), sample_noise=True, noise_seed=seed)
    searcher = TransferSearcher(problem.space, direction=problem.direction, seed=seed, front=front)
    searcher.attach_prior(load_prior([path(p) for p in priors], problem.space, problem.direction))
    outcome = optimize(problem, searcher, Budget(evaluations=evaluations))
    value = {c: m.objective for c, m in problem.table.rows.items() if m.objective is not None}
    optimum, best, curve = min(value.values()), math.inf, []
    for result in outcome.results:
        best = min(best, value.get(result.config, math.inf))
        curve.append(optimum / best if math.isfinite(best) else 0.0)
    return curve + [curve[-1] if curve else 0.0] * (evaluations - len(curve))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fronts", default="5,10,15,20")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--evaluations", type=int, default=100)
    args = parser.parse_args()
    fronts = [int(f) for f in args.fronts.split(",")]
    seeds = list(range(FIRST_SEED, FIRST_SEED + args.seeds))
    started = time.time()
    runs: dict[str, dict[str, list[float]]] = {}  # "target|excluded" -> front -> [score per seed]
    for target in DEVICES:
        for excluded in DEVICES:
            if excluded == target:
                continue
            priors = [d for d in DEVICES if d not in (target, excluded)]
            cell = runs.setdefault(f"{target}|{excluded}", {})
            for front in fronts:
                for seed in seeds:
                    curve = replay(target, priors, front, seed, args.evaluations)
                    score = sum(curve[b - 1] for b in SCORED if b <= len(curve)) / len(SCORED)
                    cell.setdefault(str(front), []).append(round(score, 5))
                print(f"target {target} priors {priors} front {front}: {cell[str(front)]}", file=sys.stderr, flush=True)
    folds: dict[str, Any] = {}
    for held in DEVICES:
        cells = [runs[f"{t}|{held}"] for t in DEVICES if t != held]
        mean = {f: sum(sum(c[str(f)]) for c in cells) / sum(len(c[str(f)]) for c in cells) for f in fronts}
        top = max(mean.values())
        chosen = min(f for f in fronts if mean[f] >= top - TIE)
        folds[held] = {"trained_on": [t for t in DEVICES if t != held], "score": mean, "chosen_front": chosen}
    record = {"command": "python bench/transfer_select.py " + " ".join(sys.argv[1:]), "seeds": seeds,
              "evaluations": args.evaluations, "fronts": fronts, "scored_budgets": list(SCORED), "tie": TIE,
              "wall_s": round(time.time() - started, 1), "runs": runs, "folds": folds}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=1) + "\n")
    for held, fold in folds.items():
        print(f"held out {held}: chosen front={fold['chosen_front']} on {fold['trained_on']}; "
              + ", ".join(f"{f}: {s:.4f}" for f, s in fold["score"].items()))


if __name__ == "__main__":
    main()
