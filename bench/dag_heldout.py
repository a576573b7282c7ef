"""tag_scaled against MC, random and the paper's TAG on held-out DFT sizes (issue 38, item 2).

The sizes 2^10, 2^16, 2^20, 3000, 10^5 and 10007 were not used to choose tag_scaled's settings
(those came from 4096, 32768, 6000, 50000 and 2^18: docs/grammar.md). Per size every plan any run
proposes is measured once (bench/dag_search_parts.Table, the bench protocol, thread CPU clock,
pinned) and replayed to every later run, so all searchers and seeds see the same numbers; runs are
paired by seed. Per run: the best Mflop/s after the budget and the mean of the best-so-far over the
budget (the anytime area), both ÷ the best plan any run found at that size. Tests: two-sided
Wilcoxon signed-rank over the seeds (paired), tag_scaled against each other searcher on both
measures, Holm-corrected over every test of the run.

    /work/bin/cpuslot --exclusive python bench/dag_heldout.py --sizes 1024 3000 10007 65536 100000 \
        --seeds 20 --budget 150   # writes bench/results/dag_heldout.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from dag_search import problem
from dag_search_parts import Table, run

from searchlab.core.measure import median_ci
from searchlab.searchers import DpTagSearcher, McSearcher, RandomSearcher, TagScaledSearcher, TagSearcher

RESULTS = Path(__file__).parent / "results"
CLASSES = {"tag_scaled": TagScaledSearcher, "mc": McSearcher, "random": RandomSearcher, "tag": TagSearcher,
           "dp_tag": DpTagSearcher}


def holm(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjustment (family-wise error over all the tests given)."""
    order = sorted(pvalues, key=pvalues.__getitem__)
    out, running = {}, 0.0
    for i, key in enumerate(order):
        running = max(running, min(1.0, (len(order) - i) * pvalues[key]))
        out[key] = running
    return out


def one_size(n: int, seeds: int, budget: int, searchers: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    table = Table(problem(n, "strided"), "cpu")
    runs: dict[str, list[dict[str, Any]]] = {}
    for name in searchers:
        runs[name] = []
        for seed in range(seeds):
            s = CLASSES[name](table.problem.space, direction=table.problem.direction, seed=seed)
            s.set_budget(budget)
            tr = run(s, table, budget)
            best = tr.best + [tr.best[-1]] * (budget - len(tr.best))
            runs[name].append({"seed": seed, "final": best[-1], "area": sum(best) / budget, "word": tr.best_word,
                               "overhead_s": tr.overhead_s, "curve": best})
        print(f"  n={n} {name}: median final {statistics.median(r['final'] for r in runs[name]):.0f} Mflop/s",
              flush=True)
    top = max(r["final"] for rs in runs.values() for r in rs)
    out: dict[str, Any] = {"n": n, "seeds": seeds, "budget": budget, "best_mflops": top, "searchers": {}}
    for name, rs in runs.items():
        entry: dict[str, Any] = {"runs": [{k: v for k, v in r.items() if k != "curve"} for r in rs]}
        for key in ("final", "area"):
            values = [r[key] / top for r in rs]
            entry[key] = {"median": statistics.median(values), "median_ci95": list(median_ci(values))}
        entry["curve_median"] = [statistics.median(r["curve"][i] for r in rs) / top for i in range(budget)]
        out["searchers"][name] = entry
    out["timed_plans"], out["timing_cpu_s"], out["bench_s"] = len(table.rows), table.timing_s, time.perf_counter() - started
    out["_raw"] = runs
    return out


def tests(sizes: list[dict[str, Any]], focus: str) -> dict[str, Any]:
    from scipy.stats import wilcoxon

    raw: dict[str, dict[str, Any]] = {}
    for size in sizes:
        mine = size["_raw"].get(focus)
        for name, rs in size["_raw"].items():
            if name == focus or mine is None:
                continue
            for key in ("final", "area"):
                a, b = [r[key] for r in mine], [r[key] for r in rs]
                diff = [x - y for x, y in zip(a, b)]
                p = 1.0 if all(d == 0 for d in diff) else float(wilcoxon(a, b, zero_method="zsplit").pvalue)
                raw[f"n={size['n']}:{focus}_vs_{name}:{key}"] = {
                    "p": p, "median_difference_over_best": statistics.median(diff) / size["best_mflops"],
                    "wins": sum(d > 0 for d in diff), "losses": sum(d < 0 for d in diff), "seeds": len(diff)}
    adjusted = holm({k: v["p"] for k, v in raw.items()})
    return {k: v | {"p_holm": adjusted[k]} for k, v in raw.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 3000, 10007, 65536, 100_000])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=150)
    parser.add_argument("--searchers", nargs="+", default=["tag_scaled", "mc", "random", "tag"], choices=sorted(CLASSES))
    parser.add_argument("--big", type=int, default=2**20, help="from this size: --big-seeds, --big-budget")
    parser.add_argument("--big-seeds", type=int, default=10)
    parser.add_argument("--big-budget", type=int, default=60)
    parser.add_argument("--big-searchers", nargs="+", default=["tag_scaled", "mc"], choices=sorted(CLASSES))
    parser.add_argument("--focus", default="tag_scaled", choices=sorted(CLASSES),
                        help="the searcher every other one is tested against")
    parser.add_argument("--out", type=Path, default=RESULTS / "dag_heldout.json")
    args = parser.parse_args()
    out: dict[str, Any] = {"what": __doc__.splitlines()[0], "command": " ".join(sys.argv), "sizes": [],
                           "load_average_before": list(os.getloadavg())}
    started = time.perf_counter()
    for n in args.sizes:
        big = n >= args.big
        out["sizes"].append(one_size(n, args.big_seeds if big else args.seeds, args.big_budget if big else args.budget,
                                     args.big_searchers if big else args.searchers))
        out["tests"] = tests(out["sizes"], args.focus)
        out["elapsed_s"], out["load_average_after"] = time.perf_counter() - started, list(os.getloadavg())
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({**out, "sizes": [{k: v for k, v in s.items() if k != "_raw"}
                                                          for s in out["sizes"]]}, indent=1))
    for key, t in out["tests"].items():
        print(f"{key}: {t['wins']}-{t['losses']} of {t['seeds']}, median diff {t['median_difference_over_best']:+.3f}, "
              f"p {t['p']:.3g}, Holm {t['p_holm']:.3g}")


if __name__ == "__main__":
    main()
