"""The best plan a searcher finds in 150 evaluations against FFTW 3 (issue 26, item 2; issue 38, item 3).

For each size and seed, ``--searcher`` (tag, tag_scaled, mc, dp_tag or auto) searches ``problem=dft`` for
``--budget`` evaluations through ``searchlab.api.optimize`` (every plan checked against numpy.fft, timed in C
under the search protocol); its best plan and FFTW's plan (FFTW_MEASURE, one thread, wisdom forgotten) are then
timed under the *same* protocol, batch length, thread CPU clock and pinning, in alternating rounds (order
flipped every round): the ratio ours / FFTW (pseudo-Mflop/s) per round, its median and 95 % order-statistic
interval (``searchlab.adapters.grammar.library.versus_fftw``). Also kept: the best-so-far Mflop/s after each
evaluation and the first evaluation at which it reaches ``--goal`` x FFTW's interleaved Mflop/s
(``evals_to_goal``, None if never). Run it under ``cpuslot --exclusive``.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Literal

from bench.harness import Benchmark, Context


@dataclass(frozen=True)
class Options:
    sizes: tuple[int, ...] = (1024, 65536, 2**20, 3000, 100_000, 10007)
    budget: int = 150
    rounds: int = 7
    seeds: tuple[int, ...] = (0,)
    searcher: Literal["tag", "tag_scaled", "mc", "auto", "dp_tag"] = "tag"
    goal: float = 0.8  # evals_to_goal: first evaluation >= goal x FFTW
    batch_s: float = 0.0005
    flag: Literal["estimate", "measure", "patient"] = "measure"
    arcs: Literal["all", "canonical"] = "all"  # TAG's derivation graph: the paper's DAG or leftmost derivations


def one_size(n: int, seed: int, o: Options) -> dict[str, Any]:
    from searchlab.adapters.grammar import SEARCH_PROTOCOL, DftProblem
    from searchlab.adapters.grammar.library import versus_fftw
    from searchlab.api import optimize
    from searchlab.core.records import Config
    from searchlab.run.loop import Budget
    from searchlab.searchers import AutoSearcher, DpTagSearcher, McSearcher, TagScaledSearcher, TagSearcher

    problem = DftProblem(size=n, measure=SEARCH_PROTOCOL, batch_s=o.batch_s)
    problem.setup(problem.device)
    started = time.perf_counter()
    cls = {"tag": TagSearcher, "tag_scaled": TagScaledSearcher, "mc": McSearcher, "auto": AutoSearcher,
           "dp_tag": DpTagSearcher}[o.searcher]
    extra = {"arcs": o.arcs} if o.searcher in ("tag", "tag_scaled", "mc") else {}
    searcher = cls(problem.space, direction=problem.direction, seed=seed, **extra)
    outcome = optimize(problem, searcher, Budget(evaluations=o.budget))
    search_s = time.perf_counter() - started
    if outcome.best is None:
        return {"n": n, "seed": seed, "error": "no plan succeeded"}
    word = str(outcome.best.config["word"])
    res = versus_fftw(problem, Config(word=word), o.flag, rounds=o.rounds)
    curve, best = [], 0.0
    for r in outcome.results:  # full-size plans only: a sub-problem's Mflop/s (DP) is another size's
        if not r.measurement.is_subproblem:
            best = max(best, r.measurement.objective or 0.0)
        curve.append(best)
    goal = o.goal * res["fftw_mflops_median"]
    first = next((i + 1 for i, b in enumerate(curve) if b >= goal), None)
    return res | {"n": n, "seed": seed, "searcher": o.searcher, "word": word, "search_s": search_s,
                  "evaluations": len(outcome.results),
                  "failed_evaluations": sum(r.measurement.objective is None for r in outcome.results),
                  "words_in_space": problem.space.count_sinks(), "best_so_far_mflops": curve, "evals_to_goal": first,
                  "delegate": getattr(searcher, "delegate", o.searcher),
                  "subproblem_evaluations": sum(r.measurement.is_subproblem for r in outcome.results)}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    from searchlab.adapters.grammar import SEARCH_PROTOCOL

    results: dict[str, Any] = {
        "what": f"best plan of {o.searcher} in {o.budget} evaluations vs FFTW_{o.flag.upper()}, one protocol, "
                "interleaved", "protocol": dataclasses.asdict(SEARCH_PROTOCOL) | {"batch_s": o.batch_s},
        "rounds": o.rounds, "seeds": list(ctx.used_seeds(o.seeds)), "searcher": o.searcher, "goal": o.goal,
        "arcs": o.arcs, "sizes": []}
    for n, seed in ((n, seed) for n in o.sizes for seed in o.seeds):
        res = one_size(n, seed, o)
        results["sizes"].append(res)
        if "ours_over_fftw_median" in res:
            lo, hi = res["ours_over_fftw_ci95"]
            ctx.log(f"n={n} seed {seed}: ours/FFTW {res['ours_over_fftw_median']:.3f} [{lo:.3f}, {hi:.3f}]  "
                    f"{res['describe']}  (search {res['search_s']:.0f} s, {o.goal} of FFTW at evaluation "
                    f"{res['evals_to_goal']})")
        ctx.checkpoint(results)
    return results


BENCHMARK = Benchmark("dft_fftw", "the best DFT plan a searcher finds in 150 evaluations vs FFTW_MEASURE, one "
                      "protocol, interleaved", Options, run, cited_by=("docs/grammar.md", "docs/measurement.md"))
