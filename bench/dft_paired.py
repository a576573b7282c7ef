"""Searchers' DFT plans against each other and one fixed FFTW reference, in the same rounds (issue 38, item 3).

Why this bench besides bench/dft_fftw.py: there, every seed plans FFTW afresh, and FFTW_MEASURE picks
between near-equal plans by noise; at 2^16 its plan ran at 8.8-17.4 pseudo-Gflop/s from one seed
to the next on this machine (2026-11-28), so a ratio "ours / FFTW" moved with FFTW's luck as much
as with ours, and two searchers run minutes apart were compared through different denominators.

Here, per size: each searcher (``--searchers``) searches ``--budget`` evaluations for each seed
(live, every plan checked and timed under the bench protocol, as in bench/dft_fftw.py); then
``--fftw-plans`` FFTW plans are made (``--flag``, wisdom forgotten before each), and **every
distinct plan found and every FFTW plan are timed in the same ``--rounds`` rounds**, in an order
rotated every round. Reported per run: its plan's Mflop/s (median over rounds) and its ratio to
the **fastest** FFTW plan (the strictest reference: the best of several FFTW_MEASURE plannings),
per round, median with its 95 % order-statistic interval; per pair of searchers: the paired
(same seed) ratio of their plans, median over seeds with its interval, and Wilcoxon's signed-rank
p-value over seeds. Nothing is picked: every seed is reported.

    cpuslot --exclusive python bench/dft_paired.py --sizes 65536 --searchers auto tag_scaled --seeds 0 1 2 3 4

Writes bench/results/dft_paired.json.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import contextlib
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PROTOCOL = {"min_runs": 3, "max_runs": 10, "min_time_s": 0.003, "target_rel_ci": 0.03, "warmup": 1}


def search(problem: Any, name: str, seed: int, budget: int) -> str:
    from searchlab.api import optimize
    from searchlab.run.loop import Budget
    from searchlab.searchers import AutoSearcher, DpTagSearcher, McSearcher, TagScaledSearcher, TagSearcher

    cls = {"auto": AutoSearcher, "dp_tag": DpTagSearcher, "tag_scaled": TagScaledSearcher, "tag": TagSearcher,
           "mc": McSearcher}[name]
    outcome = optimize(problem, cls(problem.space, direction=problem.direction, seed=seed), Budget(evaluations=budget))
    assert outcome.best is not None, f"{name} seed {seed}: no plan succeeded"
    return str(outcome.best.config["word"])


def one_size(n: int, args: argparse.Namespace) -> dict[str, Any]:
    from searchlab.adapters.grammar import DftProblem
    from searchlab.adapters.grammar._fftw import FftwPlan
    from searchlab.core.measure import MeasurementProtocol, median_ci
    from searchlab.core.records import Config

    problem = DftProblem(size=n, measure=MeasurementProtocol(**PROTOCOL), batch_s=args.batch_s)  # type: ignore[arg-type]
    problem.setup(problem.device)
    words = {(name, seed): search(problem, name, seed, args.budget) for name in args.searchers for seed in args.seeds}
    plans = sorted(set(words.values()))
    times: dict[str, list[float]] = {w: [] for w in plans}
    with contextlib.ExitStack() as stack:
        fftw = [stack.enter_context(FftwPlan(n, args.flag, problem.seed, problem.max_codelet)) for _ in range(args.fftw_plans)]
        for i in range(args.fftw_plans):
            times[f"fftw{i}"] = []
        keys = list(times)
        for r in range(args.rounds):
            shift = r % len(keys)
            for key in keys[shift:] + keys[:shift]:
                if key.startswith("fftw"):
                    s = fftw[int(key[4:])].measure(problem.protocol, problem.batch_s, problem.clock, problem.pin).median
                else:
                    m = problem.evaluate(Config(word=key))
                    assert m.objective is not None, m.message
                    s = float(m.sensors["time_median_s"])
                times[key].append(s)
        mflops = fftw[0].mflops
    ref = min((k for k in times if k.startswith("fftw")), key=lambda k: statistics.median(times[k]))
    runs = []
    for (name, seed), word in words.items():
        ratios = [f / o for f, o in zip(times[ref], times[word])]
        runs.append({"searcher": name, "seed": seed, "word": word, "describe": problem.describe_config(Config(word=word)),
                     "mflops": mflops(statistics.median(times[word])), "over_fftw": statistics.median(ratios),
                     "over_fftw_ci95": list(median_ci(ratios))})
    return {"n": n, "fftw": {k: mflops(statistics.median(v)) for k, v in times.items() if k.startswith("fftw")},
            "reference": ref, "runs": runs, "pairs": pairs(runs, times, args)}


def pairs(runs: list[dict[str, Any]], times: dict[str, list[float]], args: argparse.Namespace) -> dict[str, Any]:
    from scipy.stats import wilcoxon

    from searchlab.core.measure import median_ci

    out: dict[str, Any] = {}
    names = args.searchers
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            by = {(r["searcher"], r["seed"]): r for r in runs}
            ratios = [statistics.median(t2 / t1 for t1, t2 in zip(times[by[a, s]["word"]], times[by[b, s]["word"]]))
                      for s in args.seeds]  # a's speed over b's, per seed (median over the shared rounds)
            diff = [x - 1 for x in ratios]
            p = 1.0 if all(d == 0 for d in diff) else float(wilcoxon(diff).pvalue)
            out[f"{a}_over_{b}"] = {"per_seed": ratios, "median": statistics.median(ratios),
                                    "ci95": list(median_ci(ratios)), "wins": sum(d > 0 for d in diff),
                                    "losses": sum(d < 0 for d in diff), "wilcoxon_p": p}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[65536])
    parser.add_argument("--searchers", nargs="+", default=["auto", "tag_scaled"],
                        choices=("auto", "dp_tag", "tag_scaled", "tag", "mc"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--budget", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--fftw-plans", type=int, default=3)
    parser.add_argument("--flag", default="measure")
    parser.add_argument("--batch-s", type=float, default=0.0005)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "dft_paired.json")
    args = parser.parse_args()
    started, load = time.time(), os.getloadavg()
    out: dict[str, Any] = {"what": __doc__.splitlines()[0], "command": " ".join(sys.argv), "protocol": PROTOCOL,
                           "budget": args.budget, "rounds": args.rounds, "flag": args.flag, "sizes": []}
    for n in args.sizes:
        res = one_size(n, args)
        out["sizes"].append(res)
        print(f"n={n}: FFTW plans {[round(v) for v in res['fftw'].values()]} Mflop/s")
        for r in res["runs"]:
            lo, hi = r["over_fftw_ci95"]
            print(f"  {r['searcher']} seed {r['seed']}: {r['mflops']:.0f} Mflop/s, {r['over_fftw']:.3f} [{lo:.3f}, {hi:.3f}] "
                  f"of the fastest FFTW plan  {r['describe']}")
        for k, v in res["pairs"].items():
            print(f"  {k}: {v['median']:.3f} [{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}], {v['wins']}-{v['losses']}, "
                  f"p {v['wilcoxon_p']:.3g}", flush=True)
        out["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average_before": list(load),
                          "load_average_after": list(os.getloadavg()), "elapsed_s": time.time() - started}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
