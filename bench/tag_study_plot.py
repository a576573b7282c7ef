"""The figure of bench/tag_study.py (docs/grammar.md, "Why TAG plays uniformly").

    python bench/tag_study_plot.py bench/results/tag_study.json
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

COLORS = {"tag": "C0", "tag_scaled": "C1"}


def _depth_per_eval(runs: list[dict[str, Any]]) -> tuple[list[int], list[float]]:
    """Median over runs of the deepest decision of each evaluation's descent."""
    per: dict[int, list[int]] = defaultdict(list)
    for r in runs:
        deepest: dict[int, int] = defaultdict(int)
        for e in r["log"]:
            deepest[e["eval"]] = max(deepest[e["eval"]], e["depth"])
        for ev, d in deepest.items():
            per[ev].append(d)
    xs = sorted(per)
    return xs, [sorted(per[x])[len(per[x]) // 2] for x in xs]


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size = results["sizes"][-1]
    fig, axes = plt.subplots(1, 4, figsize=(22, 4.6))
    for name, data in size["searchers"].items():
        c = COLORS.get(name)
        root = next((v for v in data["runs"][0]["vertices"] if v["root"]), None)
        if root:
            axes[0].bar([i + (0.4 if name == "tag_scaled" else 0.0) for i in range(len(root["counts"]))],
                        root["counts"], width=0.4, color=c, label=f"{name} ({root['played']} of {root['arms']} arms)")
        depths = list(data["by_depth"])
        x = range(len(depths))
        off = 0.0 if name == "tag" else 0.4
        axes[1].bar([i + off for i in x], [data["by_depth"][d]["forced_unplayed"] for d in depths], width=0.2,
                    color=c, label=f"{name}: unplayed arm pulled")
        axes[1].bar([i + off + 0.2 for i in x], [data["by_depth"][d]["all_rewards_good"] for d in depths], width=0.2,
                    color=c, alpha=0.45, hatch="//", label=f"{name}: every reward 'good' (s_v >= L_v)")
        axes[1].set_xticks([i + 0.3 for i in x], [f"depth {d}" for d in depths])
        pts = [(e["eval"], e["explore"] / e["exploit"]) for r in data["runs"] for e in r["log"]
               if e["depth"] == 0 and not e["forced"] and e["exploit"] > 0]
        if pts:
            axes[2].scatter(*zip(*pts), s=4, color=c, alpha=0.3, label=name)
        axes[3].plot(*_depth_per_eval(data["runs"]), color=c, label=name)
    axes[0].set_title(f"n={size['n']}, seed 0: plays per root arm at the end", fontsize=9)
    axes[0].set_xlabel("arm (sorted by plays)")
    axes[1].set_title("share of decisions, by depth (all seeds)", fontsize=9)
    axes[2].set_title("root: chosen arm's exploration ÷ exploitation term", fontsize=9)
    axes[2].set_yscale("log")
    axes[2].axhline(1.0, color="k", lw=1)
    axes[2].set_xlabel("evaluation")
    axes[3].set_title("deepest decision of each descent (median over seeds)", fontsize=9)
    axes[3].set_xlabel("evaluation")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.suptitle(f"TAG (paper 002 §3.1) vs tag_scaled on the DFT library, {results['seeds']} seeds, "
                 f"{results['budget']} evaluations", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


if __name__ == "__main__":
    src = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "results" / "tag_study.json")
    plot(json.loads(src.read_text()), src.with_suffix(".png"))
