"""Samples per DFT measurement and a DFT search's wall time: two code trees side by side (issue 22, item 1).

Runs the same search, ``python -m searchlab problem=dft problem.size=N searcher=random budget.evaluations=120
executor=serial seed=R``, once per round with each code tree (``--before``: e.g. the main branch before a fix;
``--after``: this tree), interleaved and in an order flipped every round, so the machine's drift hits both
alike. Per run: the command's wall time and, from its ``results.db``, the samples (timed runs) of every search
evaluation and of the confirm phase. Reported: the median samples per measurement, the wall times, and the
per-round ratio after / before with its range (few rounds: the order-statistic interval is the range). Run it
under ``cpuslot --exclusive``.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import REPO, searchlab_cli
from bench.harness import Benchmark, Context, UsageError
from bench.provenance import git


@dataclass(frozen=True)
class Options:
    before: str = ""  # the code tree before (its checkout root, put first on PYTHONPATH), e.g. /work/main
    after: str = str(REPO)  # the code tree after (default: this one)
    rounds: int = 3
    size: int = 65536
    evaluations: int = 120
    timeout: float = 1200.0


def _samples(db: Path) -> dict[str, list[float]]:
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


def one_run(tree: Path, seed: int, o: Options, run_dir: Path) -> dict[str, Any]:
    args = ["problem=dft", f"problem.size={o.size}", "searcher=random", f"budget.evaluations={o.evaluations}",
            "executor=serial", f"seed={seed}", "plot=false", "progress=off", f"hydra.run.dir={run_dir}"]
    _, wall = searchlab_cli(args, cwd=run_dir.parent, timeout=o.timeout, env={"PYTHONPATH": str(tree)})
    runs = _samples(run_dir / "results.db")
    return {"wall_s": wall, "seed": seed, "search_runs": runs["search"], "confirm_runs": runs["confirm"],
            "median_runs": statistics.median(runs["search"]), "evaluations": len(runs["search"])}


def _range(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def run(ctx: Context, o: Options) -> dict[str, Any]:
    if not o.before:
        raise UsageError("dft_measure: give --before TREE (the code tree to compare this one with)")
    trees = {"before": Path(o.before).resolve(), "after": Path(o.after).resolve()}
    ctx.used_seeds(range(o.rounds))
    results: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="dft_measure_") as tmp:
        for r in range(o.rounds):
            for side in ("before", "after") if r % 2 == 0 else ("after", "before"):
                res = one_run(trees[side], r, o, Path(tmp) / f"{side}_{r}")
                results[side].append(res)
                ctx.log(f"round {r} {side}: {res['wall_s']:.1f} s, median {res['median_runs']:.0f} samples per "
                        f"measurement over {res['evaluations']} evaluations")
    ratios = [a["wall_s"] / b["wall_s"] for a, b in zip(results["after"], results["before"])]
    summary = {side: {"wall_s": _range([x["wall_s"] for x in rs]),
                      "samples_per_measurement_median": statistics.median([v for x in rs for v in x["search_runs"]]),
                      "samples_per_confirm_measurement_median": statistics.median(confirm) if (
                          confirm := [v for x in rs for v in x["confirm_runs"]]) else None,
                      "share_at_max_runs": sum(v >= 30 for x in rs for v in x["search_runs"])
                      / max(1, sum(len(x["search_runs"]) for x in rs))}
               for side, rs in results.items()}
    return {"what": "samples per DFT measurement and DFT search wall time, two code trees interleaved",
            "command": f"python -m searchlab problem=dft problem.size={o.size} searcher=random "
                       f"budget.evaluations={o.evaluations} executor=serial seed=<round>",
            "trees": {k: {"path": str(v), "commit": git("-C", str(v), "rev-parse", "--short", "HEAD") or "unknown"}
                      for k, v in trees.items()},
            "order": "interleaved, order flipped every round; same seed per round on both sides", "summary": summary,
            "wall_ratio_after_over_before": {"per_round": ratios, **_range(ratios)}, "runs": results}


BENCHMARK = Benchmark("dft_measure", "samples per DFT measurement and a DFT search's wall time, two code trees "
                      "interleaved", Options, run, cited_by=("docs/measurement.md",))
