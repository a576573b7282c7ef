"""Samples per DFT measurement and a DFT search's wall time: two code trees side by side (issue 22, item 1).

Runs the same search, ``python -m searchlab problem=dft problem.size=65536 searcher=random
budget.evaluations=120 executor=serial seed=R``, once per round with each code tree (``--before``:
e.g. the main branch before the fix; ``--after``: this tree), interleaved and in an order flipped
every round, so that the machine's drift hits both alike. Per run: the command's wall time and,
from its ``results.db``, the samples (timed runs) of every search evaluation and of the confirm
phase. Reported: the median samples per measurement, the wall times, and the per-round ratio
after / before with its range (few rounds: the order-statistic interval is the range).

    /work/bin/cpuslot --exclusive python bench/dft_measure.py --before /work/main --rounds 3

Writes bench/results/dft_measure.json (load average recorded; run it with nothing else heavy).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "dft_measure.json"


def _git(tree: Path) -> str:
    done = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def _runs(db: Path) -> dict[str, list[float]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT candidate_id, sensors FROM evaluations WHERE status = 'ok'").fetchall()
    finally:
        conn.close()
    out: dict[str, list[float]] = {"search": [], "confirm": []}
    for cid, sensors in rows:
        runs = json.loads(sensors or "{}").get("runs")
        if runs is not None:
            out["search" if cid >= 0 else "confirm"].append(float(runs))
    return out


def one_run(tree: Path, seed: int, args: argparse.Namespace, work: Path, tag: str) -> dict[str, Any]:
    run_dir = work / tag
    cmd = [sys.executable, "-m", "searchlab", "problem=dft", f"problem.size={args.size}", "searcher=random",
           f"budget.evaluations={args.evaluations}", "executor=serial", f"seed={seed}", "plot=false", "progress=off",
           f"hydra.run.dir={run_dir}"]
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=args.timeout)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"bench/dft_measure.py: {tag} failed ({done.returncode}): {done.stderr[-2000:]}")
    runs = _runs(run_dir / "results.db")
    return {"wall_s": wall, "seed": seed, "search_runs": runs["search"], "confirm_runs": runs["confirm"],
            "median_runs": statistics.median(runs["search"]), "evaluations": len(runs["search"])}


def _median_or_none(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _range_summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="code tree before (PYTHONPATH), e.g. /work/main")
    parser.add_argument("--after", type=Path, default=ROOT, help="code tree after (default: this one)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", type=int, default=65536)
    parser.add_argument("--evaluations", type=int, default=120)
    parser.add_argument("--timeout", type=float, default=1200)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    load, started = os.getloadavg(), time.time()
    results: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="dft_measure_") as tmp:
        for r in range(args.rounds):
            for side in (("before", "after") if r % 2 == 0 else ("after", "before")):
                res = one_run(trees[side], r, args, Path(tmp), f"{side}_{r}")
                results[side].append(res)
                print(f"round {r} {side}: {res['wall_s']:.1f} s, median {res['median_runs']:.0f} samples per "
                      f"measurement over {res['evaluations']} evaluations", flush=True)
    ratios = [a["wall_s"] / b["wall_s"] for a, b in zip(results["after"], results["before"])]
    summary = {side: {"wall_s": _range_summary([x["wall_s"] for x in rs]),
                      "samples_per_measurement_median": statistics.median([v for x in rs for v in x["search_runs"]]),
                      "samples_per_confirm_measurement_median": _median_or_none(
                          [v for x in rs for v in x["confirm_runs"]]),
                      "share_at_max_runs": sum(v >= 30 for x in rs for v in x["search_runs"])
                      / max(1, sum(len(x["search_runs"]) for x in rs))}
               for side, rs in results.items()}
    out = {"what": "samples per DFT measurement and DFT search wall time, before/after issue 22 item 1 "
                   "(a batched timer counts its real time toward min_time_s)",
           "command": f"python -m searchlab problem=dft problem.size={args.size} searcher=random "
                      f"budget.evaluations={args.evaluations} executor=serial seed=<round>",
           "trees": {k: {"path": str(v), "commit": _git(v)} for k, v in trees.items()},
           "rounds": args.rounds, "order": "interleaved, order flipped every round; same seed per round on both sides",
           "summary": summary,
           "wall_ratio_after_over_before": {"per_round": ratios, **_range_summary(ratios)},
           "runs": results,
           "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average_before": list(load),
                       "load_average_after": list(os.getloadavg()), "elapsed_s": time.time() - started,
                       "note": "2 cores shared with other sessions; run under cpuslot --exclusive"}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print(json.dumps({"summary": summary, "wall_ratio": out["wall_ratio_after_over_before"]}, indent=1))


if __name__ == "__main__":
    main()
