"""The best plan TAG finds in 150 evaluations against FFTW 3 (issue 26, item 2; issue 38, item 3).

For each size and seed, TAG (paper 002 §3; ``--searcher``: tag, tag_scaled, mc or auto) searches
``problem=dft`` for --budget evaluations
(every plan checked against numpy.fft, timed in C under the problem's protocol); its best plan
and FFTW's plan (FFTW_MEASURE, one thread, wisdom forgotten) are then timed under the *same*
protocol, batch length, thread CPU clock and pinning, in alternating rounds (order flipped
every round): the ratio ours / FFTW (pseudo-Mflop/s) per round, its median and 95 %
order-statistic interval (:func:`searchlab.adapters.grammar._fftw.versus_fftw`). Also kept: the
best-so-far Mflop/s after each evaluation (as measured during the search) and the first evaluation
at which it reaches ``--goal`` x FFTW's interleaved Mflop/s (``evals_to_goal``, None if never).

    /work/bin/cpuslot --exclusive python bench/dft_fftw.py --sizes 1024 65536 1048576 3000 100000 10007
    /work/bin/cpuslot --exclusive python bench/dft_fftw.py --sizes 65536 --seeds 0 1 2 3 4 --searcher auto

Writes bench/results/dft_fftw.json.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"
PROTOCOL = {"min_runs": 3, "max_runs": 10, "min_time_s": 0.003, "target_rel_ci": 0.03, "warmup": 1}


def one_size(n: int, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    from searchlab.adapters.grammar import DftProblem
    from searchlab.adapters.grammar._fftw import versus_fftw
    from searchlab.api import optimize
    from searchlab.core.measure import MeasurementProtocol
    from searchlab.core.records import Config
    from searchlab.run.loop import Budget
    from searchlab.searchers import AutoSearcher, DpTagSearcher, McSearcher, TagScaledSearcher, TagSearcher

    problem = DftProblem(size=n, measure=MeasurementProtocol(**PROTOCOL), batch_s=args.batch_s)  # type: ignore[arg-type]
    problem.setup(problem.device)
    started = time.perf_counter()
    cls = {"tag": TagSearcher, "tag_scaled": TagScaledSearcher, "mc": McSearcher, "auto": AutoSearcher,
           "dp_tag": DpTagSearcher}[args.searcher]
    extra = {"arcs": args.arcs} if args.searcher in ("tag", "tag_scaled", "mc") else {}
    searcher = cls(problem.space, direction=problem.direction, seed=seed, **extra)  # type: ignore[arg-type]
    outcome = optimize(problem, searcher, Budget(evaluations=args.budget))
    search_s = time.perf_counter() - started
    if outcome.best is None:
        return {"n": n, "error": "no plan succeeded"}
    word = str(outcome.best.config["word"])
    res = versus_fftw(problem, Config(word=word), args.flag, rounds=args.rounds)
    failed = sum(r.measurement.objective is None for r in outcome.results)
    curve, best = [], 0.0
    for r in outcome.results:  # full-size plans only: a sub-problem's Mflop/s (DP) is another size's
        if not r.measurement.is_subproblem:
            best = max(best, r.measurement.objective or 0.0)
        curve.append(best)
    goal = args.goal * res["fftw_mflops_median"]
    first = next((i + 1 for i, b in enumerate(curve) if b >= goal), None)
    return res | {"n": n, "seed": seed, "searcher": args.searcher, "word": word, "search_s": search_s,
                  "evaluations": len(outcome.results), "failed_evaluations": failed,
                  "words_in_space": problem.space.count_sinks(), "best_so_far_mflops": curve, "evals_to_goal": first,
                  "delegate": getattr(searcher, "delegate", args.searcher),
                  "subproblem_evaluations": sum(r.measurement.is_subproblem for r in outcome.results)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 65536, 2**20, 3000, 100_000, 10007])
    parser.add_argument("--budget", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--searcher", choices=("tag", "tag_scaled", "mc", "auto", "dp_tag"), default="tag")
    parser.add_argument("--goal", type=float, default=0.8, help="evals_to_goal: first evaluation >= goal x FFTW")
    parser.add_argument("--batch-s", type=float, default=0.0005)
    parser.add_argument("--flag", default="measure")
    parser.add_argument("--arcs", choices=("all", "canonical"), default="all",
                        help="TAG's derivation graph: the paper's DAG (all) or leftmost derivations (canonical)")
    parser.add_argument("--out", type=Path, default=RESULTS / "dft_fftw.json")
    args = parser.parse_args()
    load, started = os.getloadavg(), time.time()
    out: dict[str, Any] = {
        "what": f"best plan of TAG in {args.budget} evaluations vs FFTW_{args.flag.upper()}, one protocol, interleaved",
        "protocol": PROTOCOL | {"batch_s": args.batch_s}, "rounds": args.rounds, "seeds": args.seeds,
        "searcher": args.searcher, "goal": args.goal,
        "arcs": args.arcs, "sizes": []}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for n, seed in ((n, seed) for n in args.sizes for seed in args.seeds):
        res = one_size(n, seed, args)
        out["sizes"].append(res)
        if "ours_over_fftw_median" in res:
            lo, hi = res["ours_over_fftw_ci95"]
            print(f"n={n} seed {seed}: ours/FFTW {res['ours_over_fftw_median']:.3f} [{lo:.3f}, {hi:.3f}]  "
                  f"{res['describe']}  (search {res['search_s']:.0f} s, {args.goal} of FFTW at evaluation "
                  f"{res['evals_to_goal']})", flush=True)
        out["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average_before": list(load),
                          "load_average_after": list(os.getloadavg()), "elapsed_s": time.time() - started,
                          "note": "thread CPU clock, pinned; 2 cores shared with other sessions (cpuslot --exclusive)"}
        args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
