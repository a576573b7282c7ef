"""The PNG of ``bench/proposal_time.py``: ask time over evaluations; parallel replays' wall and threads."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plot(data: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    colour = 0
    for key, result in sorted(data.items()):
        if "runs" not in result:
            continue
        for name in sorted({r["searcher"] for r in result["runs"]}):
            colour += 1
            mine = [r for r in result["runs"] if r["searcher"] == name]
            for column, style, what in ((2, "-", "CPU"), (1, ":", "wall")):
                curves: dict[int, list[float]] = {}
                for r in mine:
                    for ask in r["asks"]:
                        curves.setdefault(ask[0], []).append(ask[column])
                x = np.array(sorted(curves))
                med = np.array([np.median(curves[t]) for t in x])
                hi = np.array([max(curves[t]) for t in x])
                label = f"{name} {what} ({key}, {len(mine)} seeds)"
                (line,) = left.plot(x, med, style, lw=1, color=f"C{colour - 1}", label=label)
                if what == "CPU":
                    left.fill_between(x, med, hi, color=line.get_color(), alpha=0.2)
    left.axhline(0.5, color="k", ls=":", label="0.5 s bound")
    left.axvspan(200, 220, color="grey", alpha=0.1)
    left.set_yscale("log")
    left.set_xlabel("evaluations told before the ask")
    left.set_ylabel("ask time, s: process CPU (solid, band to max) and wall (dotted)")
    left.set_title("one core, 10-knob space of 9,680 valid configurations")
    left.legend(fontsize=7)
    par = data.get("parallel", {}).get("variants", {})
    if par:
        names = list(par)
        walls = [np.mean(par[n]["wall_per_run_s"]) if par[n].get("wall_per_run_s") else par[n]["wall_total_s"] for n in names]
        busy = [max(par[n]["busy_threads_per_worker"] or [0]) for n in names]
        bars = right.bar(range(len(names)), walls, color="tab:blue")
        for bar, b in zip(bars, busy):
            right.annotate(f"{b} busy thr.", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center",
                           va="bottom", fontsize=7)
        right.set_xticks(range(len(names)), [n.replace("_", "\n") + ("\n(stopped)" if par[n].get("timed_out") else "")
                                             for n in names], fontsize=7)
        right.set_ylabel("mean wall time per replay, s")
        first = next(iter(par.values()))
        right.set_title(f"{first['runs']} optuna_gp replays at once, {first['evals']} evaluations", fontsize=9)
    else:
        right.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
