"""The trivial command on the default executor against ``executor=serial`` (issue 35, item 4).

``python -m searchlab problem=synthetic_knobs searcher=random budget.evaluations=5`` took 11.7 s on the old
default (Ray) and 2.2 s with ``executor=serial``; with ``executor=auto`` as the default it must take at most
1.5x the serial time. Each repetition runs the command once per executor in a rotated order (a slow moment of
the machine hits all alike); the ratio default / serial is paired by repetition and reported as its median with
the exact order-statistic 95 % interval (searchlab.core.measure.median_ci). ``executor=ray`` (the old default)
is timed beside them. Run it alone (``cpuslot --exclusive``): it times wall clock.
"""

from __future__ import annotations

import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import searchlab_cli
from bench.harness import Benchmark, Context

COMMAND = ["problem=synthetic_knobs", "searcher=random", "budget.evaluations=5"]
EXECUTORS = {"default": [], "serial": ["executor=serial"], "ray": ["executor=ray"]}


@dataclass(frozen=True)
class Options:
    repeats: int = 7
    ray_repeats: int = 2  # runs of executor=ray (slow; reference only)
    goal: float = 1.5  # default <= goal x serial


def run(ctx: Context, o: Options) -> dict[str, Any]:
    from searchlab.core.measure import median_ci

    times: dict[str, list[float]] = {name: [] for name in EXECUTORS}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(o.repeats):
            order = ["default", "serial"] if n % 2 == 0 else ["serial", "default"]
            for name in order + (["ray"] if n < o.ray_repeats else []):
                where = Path(tmp) / f"{name}_{n}"
                _, seconds = searchlab_cli([*COMMAND, *EXECUTORS[name], "progress=off", f"hydra.run.dir={where}"],
                                           timeout=300)
                times[name].append(seconds)
            ctx.log(f"repeat {n}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if len(v) > n))
    ratios = [d / s for d, s in zip(times["default"], times["serial"])]
    lo, hi = median_ci(ratios)
    met = statistics.median(ratios) <= o.goal
    ctx.failed = not met
    return {"command": "python -m searchlab " + " ".join(COMMAND), "repeats": o.repeats,
            "executors": {name: {"median_s": statistics.median(v), "runs_s": v} for name, v in times.items() if v},
            "default_over_serial": {"median": statistics.median(ratios), "ci95": [lo, hi], "pairs": len(ratios),
                                    "interval": "exact binomial order statistics (with < 6 pairs: the range)"},
            "goal": f"default <= {o.goal} x serial", "met": met}


BENCHMARK = Benchmark("front_door", "the trivial synthetic_knobs run on the default executor against executor=serial "
                      "and executor=ray", Options, run, cited_by=("docs/measurement.md",))
