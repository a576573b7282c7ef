"""simulated_annealing before/after its budget-spanning schedule (issue 22, item 7), paired by (table, seed).

Reads four bench/peers.py outputs, made with the code before and after (seeds 0-9 and 10-29):

    python bench/peers.py --only ours --searchers simulated_annealing --seeds 10 --out peers_schedule_before
    python bench/peers.py --only ours --searchers simulated_annealing --seeds 20 --first-seed 10 \\
        --out peers_schedule_before_s10
    (the same with the new tree: peers_schedule_after, peers_schedule_after_s10)
    python bench/schedule_pairs.py   # writes bench/results/schedule_sa.json

Per checkpoint: the mean fraction of the optimum before and after with 95 % bootstrap intervals,
the paired mean difference with its bootstrap interval, and the two-sided Wilcoxon signed-rank p.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import wilcoxon

RESULTS = Path(__file__).resolve().parent / "results"
ROW = "ours:simulated_annealing"
CHECKPOINTS = (20, 40, 55, 100, 220)


def load(stems: list[str]) -> dict[tuple[str, int], list[float]]:
    runs: dict[tuple[str, int], list[float]] = {}
    for stem in stems:
        row = json.loads((RESULTS / f"{stem}.json").read_text())["results"][ROW]
        first = int(row.get("first_seed", 0))
        for table, rows in row["runs"].items():
            for k, fractions in enumerate(rows):
                runs[(table, first + k)] = fractions
    return runs


def boot_mean(x: np.ndarray, rng: np.random.Generator, n: int = 5000) -> list[float]:
    means = rng.choice(x, size=(n, len(x)), replace=True).mean(axis=1)
    return [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def main() -> None:
    before = load(["peers_schedule_before", "peers_schedule_before_s10"])
    after = load(["peers_schedule_after", "peers_schedule_after_s10"])
    keys = sorted(set(before) & set(after))
    rng = np.random.default_rng(0)
    out: dict[str, Any] = {}
    for i, c in enumerate(CHECKPOINTS):
        xb = np.array([before[k][i] for k in keys])
        xa = np.array([after[k][i] for k in keys])
        d = xa - xb
        out[f"@{c}"] = {"before_mean": float(xb.mean()), "before_ci95": boot_mean(xb, rng),
                        "after_mean": float(xa.mean()), "after_ci95": boot_mean(xa, rng),
                        "mean_difference": float(d.mean()), "difference_ci95": boot_mean(d, rng),
                        "wilcoxon_p": float(wilcoxon(xa, xb).pvalue), "pairs": len(keys)}
        o = out[f"@{c}"]
        print(f"@{c}: {o['before_mean']:.3f} -> {o['after_mean']:.3f}, difference {o['mean_difference']:+.3f} "
              f"[{o['difference_ci95'][0]:+.3f}, {o['difference_ci95'][1]:+.3f}], p = {o['wilcoxon_p']:.3g}")
    tables = json.loads((RESULTS / "peers_schedule_before.json").read_text())["meta"]["tables"]
    result = {"what": "simulated_annealing before/after the budget-spanning schedule (issue 22 item 7): fraction of the "
                      "optimum, bench/peers.py replays, paired by (table, seed)",
              "tables": tables, "seeds": "0-29", "budget": 220,
              "interval": "95 % bootstrap of the mean (5000 resamples); Wilcoxon signed-rank p, two-sided",
              "sources": ["peers_schedule_before", "peers_schedule_before_s10", "peers_schedule_after",
                          "peers_schedule_after_s10"], "checkpoints": out}
    (RESULTS / "schedule_sa.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
