"""Transfer across devices, leave one device out (issue 25): the study and its report, one command.

Runs ``python -m searchlab.study study=transfer_lodo`` (each of the four shared convolution
tables tuned with the other three as ``prior=``; 7 searchers x 20 seeds x 100 evaluations,
replayed with recorded-sample noise) into ``--out``, then reports per held-out device and
searcher the mean fraction of the optimum after 5/10/20/50/100 evaluations with 95 %
percentile-bootstrap intervals over seeds, paired Wilcoxon signed-rank tests against cold
``auto`` (Holm over the four devices, per searcher and budget), the issue's goals for
``searcher=transfer``, and the cases where a transfer method is significantly worse than cold
``auto``. A run's fraction at n is the table optimum over the *recorded table value* of the
best configuration among its first n evaluations (noise-free, as the top-k numbers in the
issue), so replay noise does not inflate it.

Writes bench/results/transfer.json and bench/results/transfer.md. Usage:
    python bench/transfer.py [--out outputs/study/transfer_lodo] [--seeds 20] [--only transfer,auto]
    python bench/transfer.py --report-only     # re-read the runs already in --out
Re-running into the same --out keeps finished runs (the study resumes).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DATA = ROOT.parent / "shared" / "data" / "kernel_tuner"
DEVICES = ("A100", "A4000", "MI250X", "W6600")
SEARCHERS = ("transfer", "transfer_topk", "transfer_warm", "transfer_prune", "transfer_gp", "auto", "random")
BUDGETS = (5, 10, 20, 50, 100)
GOALS = {10: 0.95, 20: 0.985, 100: 0.99}
ALPHA = 0.05


def run_study(out: Path, seeds: int, only: list[str]) -> float:
    cmd = [sys.executable, "-m", "searchlab.study", "study=transfer_lodo", f"seeds={seeds}"]
    cmd += [f"~searchers.{s}" for s in SEARCHERS if only and s not in only]
    cmd += ["--out", str(out)]
    started = time.time()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, cwd=ROOT, env=env)
    if proc.returncode != 0:
        sys.exit(f"study failed ({proc.returncode}): {' '.join(cmd)}")
    return time.time() - started


def curves(out: Path, budget: int) -> dict[tuple[str, str], dict[int, np.ndarray]]:
    """(device, searcher) -> seed -> fraction-of-optimum curve (noise-free table values)."""
    from searchlab.adapters.knobs.kernel_tuner import load_kernel_tuner_cache
    from searchlab.core.store import read_run

    found: dict[tuple[str, str], dict[int, np.ndarray]] = {}
    for device in DEVICES:
        table = load_kernel_tuner_cache(DATA / f"convolution_{device}.json.gz")
        value = {c: m.objective for c, m in table.rows.items() if m.objective is not None}
        optimum = min(value.values())
        for run_dir in sorted((out / "runs" / device).glob("*/seed_*")):
            if not (run_dir / "summary.json").is_file():
                continue
            info, results = read_run(run_dir)
            best, curve = math.inf, []
            for r in results[:budget]:
                best = min(best, value.get(r.config, math.inf))
                curve.append(optimum / best if math.isfinite(best) else 0.0)
            curve += [curve[-1] if curve else 0.0] * (budget - len(curve))
            found.setdefault((device, run_dir.parent.name), {})[int(info["seed"])] = np.array(curve)
    return found


def summarise(found: dict[tuple[str, str], dict[int, np.ndarray]]) -> dict[str, Any]:
    from searchlab.study._stats import bootstrap_band, holm, wilcoxon_pair

    cells: dict[str, dict[str, Any]] = {}
    for (device, searcher), runs in sorted(found.items()):
        matrix = np.array([runs[s] for s in sorted(runs)])
        mean, lo, hi = bootstrap_band(matrix)
        cells[f"{device}/{searcher}"] = {"device": device, "searcher": searcher, "seeds": len(runs), **{
            str(b): {"mean": round(float(mean[b - 1]), 4), "lo": round(float(lo[b - 1]), 4),
                     "hi": round(float(hi[b - 1]), 4)} for b in BUDGETS if b <= matrix.shape[1]}}
    tests: list[dict[str, Any]] = []
    for searcher in sorted({s for _, s in found} - {"auto"}):
        for b in BUDGETS:
            raw: list[dict[str, Any]] = []
            for device in DEVICES:
                a, c = found.get((device, searcher), {}), found.get((device, "auto"), {})
                seeds = sorted(set(a) & set(c))
                if not seeds:
                    continue
                x, y = np.array([a[s][b - 1] for s in seeds]), np.array([c[s][b - 1] for s in seeds])
                raw.append({"searcher": searcher, "device": device, "budget": b, "pairs": len(seeds),
                            "mean_diff_vs_auto": round(float((x - y).mean()), 4), "p": wilcoxon_pair(x, y)[1]})
            for row, padj in zip(raw, holm([r["p"] for r in raw])):
                row["p_holm"] = padj
                row["verdict"] = ("no difference" if not padj < ALPHA else
                                  "better than auto" if row["mean_diff_vs_auto"] > 0 else "WORSE than auto")
                tests.append(row)
    goals: list[dict[str, Any]] = []
    for device in DEVICES:
        cell = cells.get(f"{device}/transfer")
        if cell is None:
            continue
        for b, level in GOALS.items():
            got = cell.get(str(b))
            if isinstance(got, dict):
                goals.append({"device": device, "budget": b, "goal": level, **got, "met": got["mean"] >= level})
        worse = [t for t in tests if t["searcher"] == "transfer" and t["device"] == device and t["budget"] == 100]
        goals.append({"device": device, "budget": 100, "goal": "not significantly worse than auto",
                      "met": bool(worse) and worse[0]["verdict"] != "WORSE than auto"})
    hurts = [t for t in tests if t["verdict"] == "WORSE than auto"]
    return {"cells": cells, "tests_vs_auto": tests, "goals": goals, "transfer_hurts": hurts}


def markdown(report: dict[str, Any]) -> str:
    cells = report["cells"]
    lines = ["| device | searcher | seeds | " + " | ".join(f"after {b}" for b in BUDGETS) + " |",
             "|---|---|---|" + "---|" * len(BUDGETS)]
    for device in DEVICES:
        for searcher in SEARCHERS:
            cell = cells.get(f"{device}/{searcher}")
            if cell is None:
                continue
            vals = [cell.get(str(b)) for b in BUDGETS]
            text = [f"{v['mean']:.3f} [{v['lo']:.3f}, {v['hi']:.3f}]" if isinstance(v, dict) else "" for v in vals]
            lines.append(f"| {device} | {searcher} | {cell['seeds']} | " + " | ".join(text) + " |")
    lines += ["", "Goals of `searcher=transfer`:", "", "| device | after | goal | mean [95 % CI] | met |",
              "|---|---|---|---|---|"]
    for g in report["goals"]:
        shown = f"{g['mean']:.3f} [{g['lo']:.3f}, {g['hi']:.3f}]" if "mean" in g else "paired test vs auto"
        lines.append(f"| {g['device']} | {g['budget']} | {g['goal']} | {shown} | {'yes' if g['met'] else 'NO'} |")
    lines += ["", "Significantly different from cold `auto` (Wilcoxon signed-rank, Holm over devices, p < 0.05):", ""]
    for t in report["tests_vs_auto"]:
        if t["verdict"] != "no difference":
            lines.append(f"- {t['searcher']} on {t['device']} after {t['budget']}: {t['verdict']} "
                         f"(mean difference {t['mean_diff_vs_auto']:+.3f}, p_holm = {t['p_holm']:.2g}, {t['pairs']} pairs)")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "outputs" / "study" / "transfer_lodo"))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--only", default="", help="comma-separated searcher labels to run (default: all)")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    wall = None if args.report_only else run_study(out, args.seeds, [s for s in args.only.split(",") if s])
    report = summarise(curves(out, max(BUDGETS)))
    record = {"command": "python bench/transfer.py " + " ".join(sys.argv[1:]), "study": str(out),
              "study_wall_s": wall, "load_avg": os.getloadavg(), "metric": "fraction of optimum (noise-free table value "
              "of the best configuration evaluated so far); intervals: 95 % percentile bootstrap over seeds", **report}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "transfer.json").write_text(json.dumps(record, indent=1, default=float) + "\n")
    (RESULTS / "transfer.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
