"""Our best DFT plans against FFTW 3, one protocol, interleaved (issue 22, item 2).

``bench/dag_search.py`` used to time FFTW under its own protocol (5-20 runs, 2 %) and our plans
under the problem's (3-10 runs, 3 %), at different times. Here, for each size of a stored
``dag_search.json``, the best re-measured plan of that run and FFTW_MEASURE's plan are timed
under the *problem's* protocol (the JSON's ``protocol``), in alternating rounds (order flipped
every round): the ratio ours / FFTW per round, its median and 95 % order-statistic interval
(:func:`searchlab.adapters.grammar._fftw.versus_fftw`). The stored, non-interleaved ratio is
given beside it.

    /work/bin/cpuslot --exclusive python bench/dft_fftw.py --rounds 9

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


def main() -> None:
    from searchlab.adapters.grammar import DftProblem
    from searchlab.adapters.grammar._fftw import versus_fftw
    from searchlab.core.records import Config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=RESULTS / "dag_search.json")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--flag", default="measure")
    parser.add_argument("--out", type=Path, default=RESULTS / "dft_fftw.json")
    args = parser.parse_args()
    stored = json.loads(args.source.read_text())
    load, started = os.getloadavg(), time.time()
    sizes: list[dict[str, Any]] = []
    for size in stored["sizes"]:
        best_name, best = max(((k, v) for k, v in size["confirm"].items() if isinstance(v, dict)),
                              key=lambda kv: kv[1]["mflops_median"])
        fftw_stored = next((f for f in size["fftw"] if f["flag"] == args.flag), None)
        if fftw_stored is None:
            continue
        problem = DftProblem(size=size["n"], **stored["protocol"])
        problem.setup(problem.device)
        res = versus_fftw(problem, Config(word=best["word"]), args.flag, rounds=args.rounds)
        res |= {"n": size["n"], "plan_of": best_name, "word": best["word"],
                "stored_ratio_not_interleaved": best["mflops_median"] / fftw_stored["mflops"],
                "stored_fftw_runs": fftw_stored.get("runs")}
        sizes.append(res)
        lo, hi = res["ours_over_fftw_ci95"]
        print(f"n={size['n']}: ours/FFTW {res['ours_over_fftw_median']:.3f} [{lo:.3f}, {hi:.3f}] "
              f"(stored, not interleaved: {res['stored_ratio_not_interleaved']:.3f})", flush=True)
    out = {"what": "best plan of bench/dag_search.py vs FFTW_" + args.flag.upper() + ", one protocol, interleaved",
           "protocol": stored["protocol"], "rounds": args.rounds, "sizes": sizes,
           "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average_before": list(load),
                       "load_average_after": list(os.getloadavg()), "elapsed_s": time.time() - started,
                       "note": "thread CPU clock, pinned; 2 cores shared with other sessions (cpuslot --exclusive)"}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
