"""Which convolution length should Bluestein offer? (issue 26: DFT of any size)

For each training prime p, the candidate lengths M >= 2p-1 (the next power of two and the next M whose prime
factors are at most 5, 7 and 13) are each searched by DP (strided, under the search protocol: bench/common.py)
and the time of DP's best DFT_M plan is recorded: the DFT_M is most of Bluestein's time, and the grammar should
offer the M that runs fastest. The choice is made on these training primes; 10007 (bench/dft_fftw.py) is
reported only. Run it under ``cpuslot --exclusive`` (wall clock).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from bench.common.dft import Table, dft_problem, drive
from bench.harness import Benchmark, Context

CLASSES = {"13-smooth": (2, 3, 5, 7, 11, 13), "7-smooth": (2, 3, 5, 7), "5-smooth": (2, 3, 5), "power of two": (2,)}


@dataclass(frozen=True)
class Options:
    primes: tuple[int, ...] = (1031, 3001, 8009, 12011, 25013)  # training primes


def candidates(p: int) -> dict[str, int]:
    from searchlab.adapters.grammar.library import smooth

    out = {}
    for name, primes in CLASSES.items():
        m = 2 * p - 1
        while not smooth(m, primes):
            m += 1
        out[name] = m
    return out


def dp_best(m: int) -> dict[str, Any]:
    from searchlab.searchers import DpSearcher

    table = Table(dft_problem(m, "strided"), "wall")
    started = time.perf_counter()
    dp = drive(DpSearcher(table.problem.space, direction=table.problem.direction), table, 10**6)
    mflops = dp.best[-1]
    return {"m": m, "dp_evaluations": len(dp.best), "dp_wall_s": time.perf_counter() - started,
            "best_mflops": mflops, "best_us": 5 * m * math.log2(m) / mflops, "plan": dp.best_word}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    results: dict[str, Any] = {"what": (__doc__ or "").splitlines()[0], "primes": []}
    for p in o.primes:
        rows = {name: dp_best(m) for name, m in candidates(p).items()}
        fastest = min(rows, key=lambda k: rows[k]["best_us"])
        ratios = {k: r["best_us"] / rows[fastest]["best_us"] for k, r in rows.items()}
        results["primes"].append({"p": p, "lengths": rows, "fastest": fastest, "time_over_fastest": ratios})
        ctx.log(f"p={p}: fastest {fastest} (M={rows[fastest]['m']}); time ÷ fastest "
                + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
        ctx.checkpoint(results)
    return results


BENCHMARK = Benchmark("bluestein_lengths", "Bluestein's convolution length: DP's best DFT_M for each candidate M on "
                      "training primes", Options, run, cited_by=("docs/grammar.md",))
