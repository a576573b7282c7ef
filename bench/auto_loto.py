"""``searcher=auto``'s chosen defaults re-chosen leave-one-table-out (issue 22, item 6).

``auto``'s ``prior``, ``alignment`` (chosen on seeds 100-109 of the four shared Kernel Tuner
tables) and ``min_feasibility`` (chosen on the pocl tables) were then ranked on the same four
tables. Here every candidate setting (a grid over the three options) runs once on every table
(``grid``: seeds 200.., budget 100, one JSON line per run, appended as it finishes so an
interrupted grid resumes); ``report`` then, for each fold, picks the setting with the highest
mean fraction of the optimum (mean over the checkpoints <= the grid budget) on the *other
three* tables and reports the held-out table with the chosen setting against the current
defaults, paired on seeds 0-19 (``heldout`` runs what the stored peers rows lack), with a
paired-bootstrap interval and the Wilcoxon signed-rank p-value.

    .venv/bin/python bench/auto_loto.py grid [--seeds 5] [--budget 100]
    .venv/bin/python bench/auto_loto.py heldout [--seeds 20] [--budget 220]
    .venv/bin/python bench/auto_loto.py report
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from peers_kt import ours_run  # noqa: E402

TABLES = sorted((ROOT.parent / "shared" / "data" / "kernel_tuner").glob("*.json.gz"))
OUT = ROOT / "bench" / "results"
GRID = {"prior": (0.5, 1.0, 2.0), "alignment": (True, False), "min_feasibility": (0.0, 0.5)}
DEFAULTS = {"prior": 1.0, "alignment": True, "min_feasibility": 0.5}  # searchers/_auto/searcher.py today
CHECKPOINTS = (20, 40, 55, 100, 220)


def settings() -> list[dict[str, Any]]:
    return [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]


def label(setting: dict[str, Any]) -> str:
    return ",".join(f"{k}={setting[k]}" for k in GRID)


def _optimum(table: Path) -> float:
    import gzip

    with gzip.open(table, "rt") as fh:
        times = [e.get("time") for e in json.load(fh)["cache"].values()]
    return min(float(t) for t in times if isinstance(t, (int, float)))


def _fractions(table: Path, curve: list[float], budget: int) -> list[float]:
    best = np.full(budget, np.inf)
    best[:len(curve)] = curve
    if curve:
        best[len(curve):] = curve[-1]
    return [round(_optimum(table) / float(best[c - 1]), 6) for c in CHECKPOINTS if c <= budget]


def _done(path: Path) -> set[tuple[str, str, int]]:
    if not path.exists():
        return set()
    return {(r["setting"], r["table"], r["seed"]) for r in map(json.loads, path.read_text().splitlines())}


def run_lines(path: Path, jobs: list[tuple[dict[str, Any], Path, int]], budget: int) -> None:
    """Run what ``path`` lacks, one JSON line per finished run."""
    done = _done(path)
    for setting, table, seed in jobs:
        if (label(setting), table.name, seed) in done:
            continue
        curve = ours_run((str(table), "auto", seed, budget, "hidden"), options=setting)
        line = {"setting": label(setting), "table": table.name, "seed": seed, "budget": budget,
                "fractions": _fractions(table, curve, budget)}
        with path.open("a") as fh:
            fh.write(json.dumps(line) + "\n")
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("phase", choices=("grid", "heldout", "report"))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=200)
    parser.add_argument("--budget", type=int, default=100)
    args = parser.parse_args()
    if args.phase == "grid":
        jobs = [(s, t, args.first_seed + i) for i in range(args.seeds) for t in TABLES for s in settings()]
        run_lines(OUT / "auto_loto_grid.jsonl", jobs, args.budget)
    elif args.phase == "heldout":
        from auto_loto_report import heldout_jobs

        run_lines(OUT / "auto_loto_heldout.jsonl", heldout_jobs(args.seeds), args.budget)
    else:
        from auto_loto_report import report

        report()


if __name__ == "__main__":
    main()
