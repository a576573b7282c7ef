"""TAG vs MC vs UCT vs random vs DP on our C DFT library, and FFTW 3 (paper 002 §5, Fig. 7(a), 8).

For each size n (powers of two and, since issue 26, any n: mixed radix, Good-Thomas, Rader,
Bluestein), every word any searcher proposes is measured *once* by the
``problem=dft`` evaluation (C plan, checked against numpy.fft, timed in C under the shared
protocol, thread CPU clock, pinned) and kept in a table that later proposals replay, so
all searchers and seeds see the same numbers. Search time (--clock wall, the default, as
paper 002 counts it; run under ``cpuslot --exclusive``) = the recorded evaluation times
(plan + check + timing) + the searcher's own ask/tell time. DP runs once per
sub-problem context (strided: sub-problems timed where a parent split runs them; and
standalone), every sub-problem timing counted as an evaluation and charged.

"Reaches DP" = best >= (1 - tolerance) x DP's best, tolerance = --tolerance (3 %: about
the median 95 % interval of one measurement here); each searcher's best plan per size is
then re-measured interleaved with DP's plan (--confirm rounds) and the ratio reported with
its 95 % interval. Fig. 7(a): TAG's s and δ at one size. Fig. 8(c): FFTW_MEASURE (and
FFTW_PATIENT up to --patient-max) plan time and Mflop/s under the problem's own protocol,
and FFTW's plan measured interleaved with our best re-measured plan (--confirm rounds,
alternating): the ratio with its 95 % interval (``versus_fftw``).

    /work/bin/cpuslot --exclusive python bench/dag_search.py --sizes 1024 3000 --seeds 10
                                          # writes bench/results/dag_search.json + .png
    python bench/dag_search.py --plot-only
    python bench/dag_search_table.py bench/results/dag_search.json   # the markdown table again
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from dag_search_parts import SEARCHERS, Table, comparisons, confirm, plot, run, summary
from dag_search_table import rows

from searchlab.adapters.grammar import DftProblem
from searchlab.adapters.grammar._fftw import problem_reference, versus_fftw
from searchlab.core.measure import MeasurementProtocol
from searchlab.core.records import Config
from searchlab.searchers import DpSearcher

RESULTS = Path(__file__).parent / "results"
PROTOCOL: dict[str, Any] = {"min_runs": 3, "max_runs": 10, "min_time_s": 0.003, "target_rel_ci": 0.03, "warmup": 1}
BATCH_S = 0.0005


def problem(n: int, context: str) -> DftProblem:
    p = DftProblem(size=n, subproblem_context=context, measure=MeasurementProtocol(**PROTOCOL), batch_s=BATCH_S)
    p.setup(p.device)
    return p


def searcher_runs(name: str, factory: Any, table: Table, args: argparse.Namespace, dp_best: float,
                  dp_time: float) -> dict[str, Any]:
    target = (1 - args.tolerance) * dp_best
    runs: list[dict[str, Any]] = []
    for seed in range(args.seeds):
        trace = run(factory(table.problem, seed), table, args.budget,
                    lambda tr: tr.best[-1] >= target and tr.time_s[-1] >= dp_time)
        i = trace.first(target)
        runs.append({"seed": seed, "evaluations": len(trace.best), "final_best": trace.best[-1],
                     "best_word": trace.best_word, "evals_to_dp": None if i is None else i + 1,
                     "time_to_dp_s": None if i is None else trace.time_s[i],
                     "best_at_dp_time": trace.best_at(dp_time), "overhead_s": trace.overhead_s,
                     "evaluation_s": trace.time_s[-1] - trace.overhead_s,
                     "curve": trace.curve()})
    overhead = [float(r["overhead_s"]) / max(float(r["evaluation_s"]), 1e-9) for r in runs]
    return {"evals_to_dp": summary([r["evals_to_dp"] for r in runs]),
            "time_to_dp_s": summary([r["time_to_dp_s"] for r in runs]),
            "best_at_dp_time_over_dp": summary([float(r["best_at_dp_time"]) / dp_best for r in runs]),
            "final_best_over_dp": summary([float(r["final_best"]) / dp_best for r in runs]),
            "overhead_fraction": summary(overhead),
            "runs": runs}


def bench_size(n: int, args: argparse.Namespace, fig7: bool) -> dict[str, Any]:
    started, load = time.perf_counter(), os.getloadavg()
    if n >= args.big_from:
        args = argparse.Namespace(**(vars(args) | {"budget": args.big_budget, "searchers": args.big_searchers}))
    tables = {c: Table(problem(n, c), args.clock) for c in args.dp_contexts}
    main = tables[args.dp_contexts[0]]
    for other in list(tables.values())[1:]:
        other.rows = main.rows  # full-size words measured once; sub-problem rows differ by context (key)
    out: dict[str, Any] = {"n": n, "words": main.problem.space.count_sinks(), "dp": {}, "searchers": {}}
    for context, table in tables.items():
        dp = run(DpSearcher(table.problem.space, direction=table.problem.direction), table, 10**6)
        out["dp"][context] = {"evaluations": len(dp.best), "time_s": dp.time_s[-1], "best_mflops": dp.best[-1],
                              "plan": dp.best_word, "subproblem_evaluations": sum(dp.sub)}
    dp_ref = out["dp"][args.dp_contexts[0]]
    for name in args.searchers:
        out["searchers"][name] = searcher_runs(name, SEARCHERS[name], main, args, dp_ref["best_mflops"],
                                               dp_ref["time_s"])
        s = out["searchers"][name]
        print(f"  n={n} {name}: evals to DP median {s['evals_to_dp']['median']} ({s['evals_to_dp']['reached']}/"
              f"{args.seeds}), final/DP {s['final_best_over_dp']['median']:.3f}, overhead "
              f"{100 * s['overhead_fraction']['median']:.2f} %", flush=True)
    out["tests"] = comparisons(out["searchers"])
    if fig7:
        out["fig7a"] = {f"{k}={v}": searcher_runs("tag", SEARCHERS["tag"].with_(**{k: v}), main, args,
                                                  dp_ref["best_mflops"], dp_ref["time_s"])["final_best_over_dp"]
                        for k, values in (("s", args.s_values), ("delta", args.delta_values)) for v in values}
    bests = {name: max(s["runs"], key=lambda r: r["final_best"])["best_word"] for name, s in out["searchers"].items()}
    bests |= {f"dp_{c}": d["plan"] for c, d in out["dp"].items()}
    out["confirm"] = confirm(main.problem, bests, f"dp_{args.dp_contexts[0]}", args.confirm)
    limits = {"estimate": 99, "measure": args.measure_max, "patient": args.patient_max}
    out["fftw"] = [problem_reference(main.problem, flag) for flag, top in limits.items() if n <= top]  # our protocol
    best = max((v for v in out["confirm"].values() if isinstance(v, dict)), key=lambda v: v["mflops_median"])
    out["versus_fftw"] = versus_fftw(main.problem, Config(word=best["word"]), "measure" if n <= args.measure_max
                                     else "estimate", rounds=args.confirm)  # interleaved, ratio with its interval
    out["table"] = {"timed": len(main.rows), "timing_cpu_s": main.timing_s, "timing_wall_s": main.wall_s}
    out["budget"], out["searchers_run"] = args.budget, args.searchers
    out["load_average_before"], out["load_average_after"] = list(load), list(os.getloadavg())
    out["bench_s"] = time.perf_counter() - started
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2**10, 2**12, 2**14, 2**16, 2**18, 2**20, 3000])
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="search time: wall clock or thread CPU")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=100, help="evaluations per searcher run at most")
    parser.add_argument("--searchers", nargs="+", default=["tag", "mc", "uct", "random"], choices=sorted(SEARCHERS))
    parser.add_argument("--dp-contexts", nargs="+", default=["strided", "standalone"])
    parser.add_argument("--tolerance", type=float, default=0.03)
    parser.add_argument("--confirm", type=int, default=7, help="interleaved re-measurement rounds")
    parser.add_argument("--fig7-size", type=int, default=2**12)
    parser.add_argument("--s-values", type=int, nargs="+", default=[5, 10, 30, 100])
    parser.add_argument("--delta-values", type=float, nargs="+", default=[0.01, 0.1, 0.5])
    parser.add_argument("--patient-max", type=int, default=2**12, help="FFTW_PATIENT only up to this n (plan time)")
    parser.add_argument("--measure-max", type=int, default=2**22, help="FFTW_MEASURE only up to this n (plan time)")
    parser.add_argument("--big-from", type=int, default=2**18, help="from this n: --big-budget and --big-searchers")
    parser.add_argument("--big-budget", type=int, default=25)
    parser.add_argument("--max-runs", type=int, default=int(PROTOCOL["max_runs"]), help="protocol: runs per measurement")
    parser.add_argument("--big-searchers", nargs="+", default=["tag", "mc"], choices=sorted(SEARCHERS))
    parser.add_argument("--out", type=Path, default=RESULTS / "dag_search.json")
    parser.add_argument("--plot-only", action="store_true")
    args = parser.parse_args()
    if args.plot_only:
        plot(json.loads(args.out.read_text()), args.out.with_suffix(".png"))
        return
    PROTOCOL["max_runs"] = args.max_runs
    started = time.perf_counter()
    results: dict[str, Any] = {
        "what": "TAG/MC/UCT/random vs DP on the C DFT library's grammar (paper 002 Fig. 7(a), 8), and FFTW 3",
        "command": "python bench/dag_search.py " + " ".join(
            f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
            for k, v in vars(args).items() if k not in ("out", "plot_only")),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
                    "note": "2 cores shared with other sessions; run under cpuslot --exclusive (nothing else heavy "
                            "beside it); plans timed on the thread CPU clock, pinned; search time on --clock"},
        "protocol": PROTOCOL | {"batch_s": BATCH_S}, "clock": args.clock, "tolerance": args.tolerance,
        "seeds": args.seeds, "budget": args.budget,
        "searchers": args.searchers, "sizes": [],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for n in args.sizes:
        print(f"DFT {n}", flush=True)
        results["sizes"].append(bench_size(n, args, fig7=n == args.fig7_size))
        results["elapsed_s"] = time.perf_counter() - started
        args.out.write_text(json.dumps(results, indent=1))
        plot(results, args.out.with_suffix(".png"))
    print("\n".join(rows(results)))  # the markdown table of docs/grammar.md (bench/dag_search_table.py)


if __name__ == "__main__":
    main()
