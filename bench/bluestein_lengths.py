"""Which convolution length should Bluestein offer? (issue 26: DFT of any size)

For each training prime p, the candidate lengths M >= 2p-1 (the next power of two and the
next M whose prime factors are at most 5, 7 and 13) are each searched by DP (strided, under
bench/dag_search.py's protocol) and the time of DP's best DFT_M plan is recorded: the
DFT_M is most of Bluestein's time, and the grammar should offer the M that runs fastest.
The choice is made on these training primes; 10007 (bench/dft_fftw.py) is reported only.

    /work/bin/cpuslot --exclusive python bench/bluestein_lengths.py   # bench/results/bluestein_lengths_train.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from dag_search import problem
from dag_search_parts import Table, run

from searchlab.adapters.grammar._codegen import smooth
from searchlab.searchers import DpSearcher

RESULTS = Path(__file__).parent / "results"
CLASSES = {"13-smooth": (2, 3, 5, 7, 11, 13), "7-smooth": (2, 3, 5, 7), "5-smooth": (2, 3, 5), "power of two": (2,)}


def candidates(p: int) -> dict[str, int]:
    out = {}
    for name, primes in CLASSES.items():
        m = 2 * p - 1
        while not smooth(m, primes):
            m += 1
        out[name] = m
    return out


def dp_best(m: int) -> dict[str, Any]:
    table = Table(problem(m, "strided"), "wall")
    started = time.perf_counter()
    dp = run(DpSearcher(table.problem.space, direction=table.problem.direction), table, 10**6)
    mflops = dp.best[-1]
    return {"m": m, "dp_evaluations": len(dp.best), "dp_wall_s": time.perf_counter() - started,
            "best_mflops": mflops, "best_us": 5 * m * math.log2(m) / mflops, "plan": dp.best_word}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--primes", type=int, nargs="+", default=[1031, 3001, 8009, 12011, 25013])
    parser.add_argument("--out", type=Path, default=RESULTS / "bluestein_lengths_train.json")
    args = parser.parse_args()
    out: dict[str, Any] = {"what": __doc__.splitlines()[0], "load_average_before": list(os.getloadavg()),
                           "machine": {"platform": platform.platform(), "cpus": os.cpu_count()}, "primes": []}
    for p in args.primes:
        rows = {name: dp_best(m) for name, m in candidates(p).items()}
        fastest = min(rows, key=lambda k: rows[k]["best_us"])
        ratios = {k: r["best_us"] / rows[fastest]["best_us"] for k, r in rows.items()}
        out["primes"].append({"p": p, "lengths": rows, "fastest": fastest, "time_over_fastest": ratios})
        print(f"p={p}: fastest {fastest} (M={rows[fastest]['m']}); time ÷ fastest "
              + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()), flush=True)
    out["load_average_after"] = list(os.getloadavg())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
