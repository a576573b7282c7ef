"""The trivial command on the default executor against ``executor=serial`` (issue 35, item 4).

``python -m searchlab problem=synthetic_knobs searcher=random budget.evaluations=5`` took 11.7 s on
the old default (Ray) and 2.2 s with ``executor=serial``; with ``executor=auto`` as the default it
must take at most 1.5x the serial time. Each repetition runs the command once per executor in a
rotated order (a slow moment of the machine hits all alike); the ratio default / serial is paired
by repetition and reported as its median with the exact order-statistic 95 % interval
(searchlab.core.measure.median_ci). ``executor=ray`` (the old default) is timed beside them.

    python bench/front_door.py --repeats 7

Writes bench/results/front_door.json. Run it alone (``cpuslot --exclusive``): it times wall clock.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "front_door.json"
COMMAND = ["problem=synthetic_knobs", "searcher=random", "budget.evaluations=5"]
EXECUTORS = {"default": [], "serial": ["executor=serial"], "ray": ["executor=ray"]}


def timed(extra: list[str], where: Path) -> float:
    """Wall seconds of one run of the command (a fresh output directory each time)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "searchlab", *COMMAND, *extra, "progress=off",
                           f"hydra.run.dir={where}"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(extra) or 'default'} failed: {proc.stderr[-2000:]}")
    return seconds


def main() -> None:
    from searchlab.core.measure import median_ci

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--ray-repeats", type=int, default=2, help="runs of executor=ray (slow; reference only)")
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in EXECUTORS}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.repeats):
            order = ["default", "serial"] if n % 2 == 0 else ["serial", "default"]
            if n < args.ray_repeats:
                order.append("ray")
            for name in order:
                times[name].append(timed(EXECUTORS[name], Path(tmp) / f"{name}_{n}"))
    ratios = [d / s for d, s in zip(times["default"], times["serial"])]
    lo, hi = median_ci(ratios)
    summary = {name: {"median_s": statistics.median(v), "runs_s": v} for name, v in times.items() if v}
    result = {
        "command": "python -m searchlab " + " ".join(COMMAND), "repeats": args.repeats, "executors": summary,
        "default_over_serial": {"median": statistics.median(ratios), "ci95": [lo, hi], "pairs": len(ratios),
                                "interval": "exact binomial order statistics (with < 6 pairs: the range)"},
        "goal": "default <= 1.5 x serial", "met": statistics.median(ratios) <= 1.5,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("default_over_serial", "met")}, indent=2))
    print({k: round(v["median_s"], 2) for k, v in summary.items()})


if __name__ == "__main__":
    main()
