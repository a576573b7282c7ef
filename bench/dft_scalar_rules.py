"""Should problem=dft offer scalar codelet rules? TAG on the full grammar against TAG on the
vector-only one (``problem.scalar_codelets=false``), on training sizes (issue 26, item 2).

The scalar codelets (``n1``, ``t1``) double the choices at every leaf and twiddle stage, and
on today's library DP's best plans use none at any size we ran. Leaving them out shrinks the
space (5·10^8 -> 1.1·10^6 words at 1024) without removing DP's plans; whether TAG's
150-evaluation plan gets better is measured here, on sizes disjoint from the ones reported
against FFTW (1024, 65536, 2^20, 3000, 10^5, 10007: bench/dft_fftw.py).

For each size and space: DP once (strided), TAG --seeds times with --budget evaluations,
each word measured once per space (bench/dag_search_parts.Table, wall clock). Reported: each
run's final best (pseudo-Mflop/s, the search's own single measurement), medians, the ratio of
medians vector ÷ full, and a two-sided Mann-Whitney U p-value over seeds.

    /work/bin/cpuslot --exclusive python bench/dft_scalar_rules.py   # bench/results/dft_scalar_rules_train.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from dag_search import BATCH_S, PROTOCOL
from dag_search_parts import Table, compare, run

from searchlab.adapters.grammar import DftProblem
from searchlab.core.measure import MeasurementProtocol
from searchlab.searchers import DpSearcher, TagSearcher

RESULTS = Path(__file__).parent / "results"


def table(n: int, scalar: bool) -> Table:
    p = DftProblem(size=n, measure=MeasurementProtocol(**PROTOCOL), batch_s=BATCH_S, scalar_codelets=scalar)
    p.setup(p.device)
    return Table(p, "wall")


def one_space(n: int, scalar: bool, args: argparse.Namespace) -> dict[str, Any]:
    t = table(n, scalar)
    dp = run(DpSearcher(t.problem.space, direction=t.problem.direction), t, 10**6)
    finals, words = [], []
    for seed in range(args.seeds):
        trace = run(TagSearcher(t.problem.space, direction=t.problem.direction, seed=seed), t, args.budget)
        finals.append(trace.best[-1])
        words.append(trace.best_word)
    return {"words_in_space": t.problem.space.count_sinks(), "dp_best": dp.best[-1], "dp_plan": dp.best_word,
            "dp_evaluations": len(dp.best), "tag_final_best": finals, "tag_best_words": words,
            "tag_median": statistics.median(finals)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 32768, 6000, 50000, 262144])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=150)
    parser.add_argument("--out", type=Path, default=RESULTS / "dft_scalar_rules_train.json")
    args = parser.parse_args()
    started = time.perf_counter()
    out: dict[str, Any] = {"what": __doc__.splitlines()[0], "seeds": args.seeds, "budget": args.budget,
                           "protocol": PROTOCOL | {"batch_s": BATCH_S}, "load_average_before": list(os.getloadavg()),
                           "machine": {"platform": platform.platform(), "cpus": os.cpu_count()}, "sizes": []}
    for n in args.sizes:
        full, vector = one_space(n, True, args), one_space(n, False, args)
        test = compare(vector["tag_final_best"], full["tag_final_best"])
        ratio = vector["tag_median"] / full["tag_median"]
        out["sizes"].append({"n": n, "full": full, "vector": vector, "vector_over_full": ratio, "test": test})
        print(f"n={n}: TAG median full {full['tag_median']:.0f}, vector-only {vector['tag_median']:.0f} Mflop/s "
              f"(x{ratio:.2f}, p={test['p_value']:.3g}); DP {full['dp_best']:.0f} / {vector['dp_best']:.0f}", flush=True)
        out["elapsed_s"], out["load_average_after"] = time.perf_counter() - started, list(os.getloadavg())
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
