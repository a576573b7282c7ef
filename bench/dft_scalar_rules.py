"""Should problem=dft offer scalar codelet rules? TAG on the full grammar against TAG on the vector-only one
(``problem.scalar_codelets=false``), on training sizes (issue 26, item 2).

The scalar codelets (``n1``, ``t1``) double the choices at every leaf and twiddle stage, and on today's library
DP's best plans use none at any size we ran. Leaving them out shrinks the space (5·10^8 -> 1.1·10^6 words at
1024) without removing DP's plans; whether TAG's 150-evaluation plan gets better is measured here, on sizes
disjoint from the ones reported against FFTW (1024, 65536, 2^20, 3000, 10^5, 10007: bench/dft_fftw.py).

For each size and space: DP once (strided), TAG ``--seeds`` times with ``--budget`` evaluations, each word
measured once per space (bench/common.py's table, wall clock). Reported: each run's final best (pseudo-Mflop/s,
the search's own single measurement), medians, the ratio of medians vector ÷ full, and a two-sided Mann-Whitney
U p-value over seeds. Run it under ``cpuslot --exclusive``.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from bench.common.dft import Table, dft_problem, drive
from bench.common.stats import mann_whitney
from bench.harness import Benchmark, Context


@dataclass(frozen=True)
class Options:
    sizes: tuple[int, ...] = (4096, 32768, 6000, 50000, 262144)
    seeds: int = 10
    budget: int = 150


def one_space(n: int, scalar: bool, o: Options) -> dict[str, Any]:
    from searchlab.searchers import DpSearcher, TagSearcher

    t = Table(dft_problem(n, "strided", scalar_codelets=scalar), "wall")
    dp = drive(DpSearcher(t.problem.space, direction=t.problem.direction), t, 10**6)
    finals, words = [], []
    for seed in range(o.seeds):
        trace = drive(TagSearcher(t.problem.space, direction=t.problem.direction, seed=seed), t, o.budget)
        finals.append(trace.best[-1])
        words.append(trace.best_word)
    return {"words_in_space": t.problem.space.count_sinks(), "dp_best": dp.best[-1], "dp_plan": dp.best_word,
            "dp_evaluations": len(dp.best), "tag_final_best": finals, "tag_best_words": words,
            "tag_median": statistics.median(finals)}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    ctx.used_seeds(range(o.seeds))
    results: dict[str, Any] = {"what": (__doc__ or "").splitlines()[0], "seeds": o.seeds, "budget": o.budget,
                               "sizes": []}
    for n in o.sizes:
        full, vector = one_space(n, True, o), one_space(n, False, o)
        test = mann_whitney(vector["tag_final_best"], full["tag_final_best"])
        ratio = vector["tag_median"] / full["tag_median"]
        results["sizes"].append({"n": n, "full": full, "vector": vector, "vector_over_full": ratio, "test": test})
        ctx.log(f"n={n}: TAG median full {full['tag_median']:.0f}, vector-only {vector['tag_median']:.0f} Mflop/s "
                f"(x{ratio:.2f}, p={test['p_value']:.3g}); DP {full['dp_best']:.0f} / {vector['dp_best']:.0f}")
        ctx.checkpoint(results)
    return results


BENCHMARK = Benchmark("dft_scalar_rules", "TAG on the full DFT grammar vs the vector-only one, training sizes, "
                      "Mann-Whitney", Options, run, cited_by=("docs/grammar.md",))
