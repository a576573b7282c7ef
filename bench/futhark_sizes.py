"""Thresholds only vs thresholds + block/tile sizes (``problem.sizes=true``), same searcher, same budget.

    python bench/futhark_sizes.py [--program tests/data/futhark/mm.fut] [--seeds 3] [--budget 6]

For each seed, ``random`` tunes the program twice with the same evaluation budget: on the
threshold tree alone and on thresholds + sizes. The tuned configurations, untuned and
all-false are then measured round-robin on the validation datasets (``--rounds`` rounds of
``--validation-runs`` runs; a cell is the median over rounds of the summed per-dataset
medians with the distribution-free 95 % interval of that median). Writes
``bench/results/futhark_sizes.json``. Each size setting pocl has not built before costs a
build (seconds to a minute on a loaded 2-core machine): tuning wall time is reported.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
RESULTS = ROOT / "bench" / "results"


def tune(problem: Any, executor: Any, seed: int, budget: int) -> tuple[dict[str, int], float, int]:
    from futhark import tuned_config

    from searchlab.api import optimize
    from searchlab.run.loop import Budget
    from searchlab.searchers import RandomSearcher

    start = time.time()
    outcome = optimize(problem, RandomSearcher(problem.space, seed=seed), Budget(evaluations=budget),
                       executor=executor)
    failed = sum(1 for r in outcome.results if not r.ok)
    return tuned_config(outcome), time.time() - start, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--program", default=str(ROOT / "tests" / "data" / "futhark" / "mm.fut"))
    parser.add_argument("--validation", nargs="+", default=["[64][64]f32 [64][64]f32"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=6)
    parser.add_argument("--validation-runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=str(RESULTS / "futhark_sizes.json"))
    args = parser.parse_args()
    os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", "1")
    from futhark import validate

    from searchlab.adapters.futhark.program import FutharkServerProblem
    from searchlab.run.execution import SerialExecutor

    load_before = os.getloadavg()
    start = time.time()
    opts = {"program": args.program, "validation": args.validation, "validation_runs": args.validation_runs}
    plain, sized = FutharkServerProblem(**opts), FutharkServerProblem(**opts, sizes=True)
    runs, configs = [], {"untuned": dict(sized.space.default_config()), "all-false": dict(sized.space.all_false())}
    for label, problem in (("thresholds", plain), ("thresholds+sizes", sized)):
        executor = SerialExecutor()
        executor.start(problem)
        try:
            for seed in range(args.seeds):
                config, wall, failed = tune(problem, executor, seed, args.budget)
                configs[f"{label}#{seed}"] = config
                runs.append({"space": label, "seed": seed, "tuning_wall_s": wall, "failed_evaluations": failed,
                             "config": config})
                print(f"{label} seed {seed}: {wall:.1f} s, {failed} failed", flush=True)
        finally:
            executor.close()
    executor = SerialExecutor()
    executor.start(sized)  # every configuration (thresholds only: default sizes) on the same servers
    try:
        validation = validate(executor, sized, configs, args.rounds)
    finally:
        executor.close()
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "loadavg_before": load_before,
                       "loadavg_after": os.getloadavg(),
                       "note": "2 cores shared with other sessions' builds, tests and benchmarks",
                       "pocl_cache": os.environ.get("POCL_CACHE_DIR", "pocl's default (~/.cache/pocl), may be warm")},
           "args": vars(args), "wall_s": time.time() - start, "searcher": "random",
           "size_knobs": sized.space.describe()["knobs"], "runs": runs, "validation": validation,
           "reading": summarise(validation, args.seeds)}
    Path(args.out).write_text(json.dumps(out, indent=1, default=str))
    print(json.dumps(out["reading"], indent=1))


def summarise(validation: dict[str, Any], seeds: int) -> dict[str, Any]:
    """Per space: the seeds' cells, and whether each seed's interval overlaps untuned's."""
    untuned = validation["untuned"]["ci95_ms"]
    out: dict[str, Any] = {"untuned_ms": validation["untuned"]["sum_median_ms"], "untuned_ci95_ms": untuned}
    for space in ("thresholds", "thresholds+sizes"):
        cells = [validation[f"{space}#{s}"] for s in range(seeds)]
        out[space] = {"median_of_seeds_ms": statistics.median(c["sum_median_ms"] for c in cells),
                      "per_seed": [[c["sum_median_ms"], c["ci95_ms"]] for c in cells],
                      "overlaps_untuned": [not (c["ci95_ms"][0] > untuned[1] or c["ci95_ms"][1] < untuned[0])
                                           for c in cells]}
    return out


if __name__ == "__main__":
    main()
