"""``best_so_far.png``: a single run shows itself next to its ``summary.json``.

Why a picture per run: a person opening a run directory should see at a glance whether
the search was still improving when the budget ran out, how scattered the evaluations
were and how many failed, without starting a study. The plot uses only what
``summary.json`` and the results hold (every evaluation, its status, the best so far);
matplotlib is imported lazily with the Agg backend (no display, safe in Ray workers and CI).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from searchlab.core.records import Direction, Result, loss

FILENAME = "best_so_far.png"


def _series(results: Sequence[Result], direction: Direction) -> tuple[list[int], list[float], list[int], list[float]]:
    """(evaluation numbers, objectives) of successful evaluations, and the best-so-far steps."""
    xs, ys, best_x, best_y = [], [], [], []
    best = math.inf
    for n, r in enumerate(results, start=1):
        value = loss(r.measurement, direction)
        if math.isfinite(value):
            xs.append(n)
            ys.append(r.objective or 0.0)  # finite loss: an objective
            if value < best:
                best = value
                best_x.append(n)
                best_y.append(r.objective or 0.0)  # finite loss: an objective
    return xs, ys, best_x, best_y


def plot_run(run_dir: str | Path, summary: Mapping[str, Any], results: Sequence[Result]) -> Path:
    """Write ``<run_dir>/best_so_far.png`` (best objective so far vs evaluation) and return its path."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    direction = Direction(summary["direction"])
    xs, ys, best_x, best_y = _series(results, direction)
    n = len(results)
    failed = [i for i, r in enumerate(results, start=1) if not r.ok]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    try:
        if xs:
            ax.scatter(xs, ys, s=10, color="tab:blue", alpha=0.35, label=f"evaluations ({len(xs)} ok)")
            # a step line to the last evaluation: a flat tail shows the search stopped improving
            ax.step([*best_x, n], [*best_y, best_y[-1]], where="post", color="tab:red", lw=2, label="best so far")
        optimum = summary.get("known_optimum")
        if isinstance(optimum, (int, float)) and math.isfinite(optimum):
            ax.axhline(optimum, color="black", ls="--", lw=1, label=f"known optimum {optimum:.4g}")
        if failed:
            ax.plot(failed, [0.0] * len(failed), "|", color="tab:gray", ms=8, transform=ax.get_xaxis_transform(),
                    label=f"failed / infeasible ({len(failed)})")
        if ys and min(ys) > 0 and max(ys) / min(ys) > 10:  # keep the best-so-far steps readable
            ax.set_yscale("log")
        ax.set_xlim(0.5, max(n, 1) + 0.5)
        ax.set_xlabel("evaluation")
        better = "lower" if direction is Direction.MINIMIZE else "higher"
        ax.set_ylabel(f"{summary.get('objective_name', 'objective')} ({better} is better)")
        ax.set_title(f"{summary.get('problem')} / {summary.get('searcher')} (seed {summary.get('seed')}): "
                     f"{n} evaluations, stopped on {summary.get('stop_reason')}", fontsize=10)
        if not xs:
            ax.text(0.5, 0.5, "no successful evaluation", transform=ax.transAxes, ha="center", va="center")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="best")
        fig.tight_layout()
        path = Path(run_dir) / FILENAME
        tmp = path.with_name(path.stem + ".tmp.png")
        fig.savefig(tmp, format="png")
        tmp.replace(path)  # atomic, like summary.json
        return path
    finally:
        plt.close(fig)
