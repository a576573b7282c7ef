"""Wall time of a replay study, end to end, as a user runs it.

Runs ``python -m searchlab.study study=NAME`` in a fresh interpreter (its start, the table, Ray's start, every
replay, the report) into a fresh directory, with a fresh ``tables_dir`` too, so an exhaustive table is built
inside the measured time, and records the total wall time with the grid and report phases the study prints,
its headline metrics and pairwise tests. Target (issue 7): >= 3 searchers x 10 seeds x 100 evaluations in under
2 minutes on 2 cores (a missed target is written and exits 1).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import searchlab_cli
from bench.harness import Benchmark, Context

HEADLINE = ["problem", "searcher", "final_fraction_mean", "success_optimum", "score_final", "score_final_lo",
            "score_final_hi", "score_mean", "score_mean_lo", "score_mean_hi", "kt_score", "kt_range"]
PAIRWISE = ["scope", "metric", "a", "b", "pairs", "p_holm", "rank_biserial", "verdict"]


@dataclass(frozen=True)
class Options:
    study: str = "kt_replay"  # kt_replay (a Kernel Tuner cache), synthetic_replay, ...
    seeds: int = 10
    evaluations: int = 100
    workers: int = 0  # Ray CPUs (0: every core)
    target_s: float = 120.0


def run(ctx: Context, o: Options) -> dict[str, Any]:
    import pandas as pd

    ctx.used_seeds(range(o.seeds))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "study"
        args = [f"study={o.study}", f"seeds={o.seeds}", f"budget.evaluations={o.evaluations}",
                f"tables_dir={Path(tmp) / 'tables'}", *([f"workers={o.workers}"] if o.workers else []), "--out", str(out)]
        ctx.log(f"python -m searchlab.study {' '.join(args)}")
        proc, wall = searchlab_cli(args, module="searchlab.study")
        phases = {k: float(v) for k, v in re.findall(r"(grid|report) wall time \(s\): ([\d.]+)", proc.stdout)}
        metrics = pd.read_csv(out / "metrics.csv")
        record = {
            "command": "python -m searchlab.study " + " ".join(args[:3] + args[4:-2]), "study": o.study,
            "searchers": sorted(metrics["searcher"].unique().tolist()), "seeds": o.seeds,
            "evaluations_per_run": o.evaluations, "runs": int(metrics["runs"].sum()),
            "evaluations_total": int((metrics["runs"] * metrics["evaluations_mean"]).sum()),
            "wall_s": round(wall, 2), "grid_s": phases.get("grid"), "report_s": phases.get("report"),
            "target_s": o.target_s, "met": wall < o.target_s,
            "outputs": sorted(p.name for p in out.iterdir() if p.is_file()),
            "headline": metrics[HEADLINE].round(4).to_dict(orient="records"),
            "pairwise": pd.read_csv(out / "pairwise.csv")[PAIRWISE].round(4).to_dict(orient="records"),
            "intervals": "score_*_lo/hi: 95 % percentile bootstrap over runs (seeds), 2000 resamples, fixed seed; "
                         "pairwise: Wilcoxon signed-rank, Holm-corrected"}
    ctx.log(f"{record['runs']} runs in {wall:.1f} s (grid {record['grid_s']} s, report {record['report_s']} s)")
    ctx.failed = not record["met"]
    return record


BENCHMARK = Benchmark("study_replay", "wall time of a replay study end to end, as a user runs it", Options, run,
                      cited_by=("docs/study.md",))
