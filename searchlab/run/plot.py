"""``best_so_far.png``: a single run shows itself next to its ``summary.json``.

Why a picture per run: a person opening a run directory should see at a glance whether
the search was still improving when the budget ran out, how scattered the evaluations
were and how many failed, and where the confirm phase's re-measured best and the default lie
(the search's best single measurement is often a lucky draw), without starting a study. The plot uses only what
``summary.json`` and the results hold (every evaluation, its status, the best so far). It is drawn on the one
figure stack (:mod:`searchlab.core.figures`, a study's too): its own Agg canvas, no pyplot (no display, no
backend chosen for the caller's process, safe in Ray workers and CI), written atomically.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from searchlab.core.records import Direction, Result, loss
from searchlab.core.units import run_time_unit, seconds_per_unit

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


def y_axis(summary: Mapping[str, Any]) -> tuple[str, float]:
    """(y-axis label, factor from the objective's values to the plotted ones): a time objective in the
    run's time unit (searchlab.core.units, the unit the verdict prints), any other objective as it is."""
    name = str(summary.get("objective_name", "objective"))
    better = "lower" if summary.get("direction", "minimize") == Direction.MINIMIZE.value else "higher"
    per = seconds_per_unit(name)
    if per is None:
        return f"{name} ({better} is better)", 1.0
    best = (summary.get("best") or {}).get("objective")
    label, factor = run_time_unit(name, best)
    return f"{name.rsplit('_', 1)[0]}, {label} ({better} is better)", per * factor


DECISION_WORDS = {"faster": "faster than the default", "slower": "slower than the default",
                  "equivalent": "no different from the default", "undecided": "undecided against the default"}


def _label(confirm: Mapping[str, Any], key: str, entry: Mapping[str, Any]) -> str:
    """A marker's legend: what was measured and, for the best, what the comparison decided. Never
    "confirmed" (issue 54: a legend said "confirmed best" of a run that decided nothing)."""
    what = "measured once" if confirm.get("exact") else f"re-measured in {entry.get('rounds', '?')} rounds"
    if key == "default":
        return f"default ({what})"
    if confirm.get("exact") or not confirm.get("default"):
        return f"best of the search ({what})"
    decision = str(confirm.get("decision") or "undecided")
    return f"best of the search ({what}; {DECISION_WORDS.get(decision, decision)})"


def markers(summary: Mapping[str, Any]) -> list[tuple[str, float, tuple[float, float] | None]]:
    """What the confirm phase re-measured, as horizontal lines (label, objective, 95 % interval):
    the re-measured best and the default, so the picture does not show only the search's best single
    measurement, which is often a lucky draw (issue 46 items 2 and 3)."""
    confirm = summary.get("confirm") or {}
    out: list[tuple[str, float, tuple[float, float] | None]] = []
    for key in ("best", "default"):
        entry = confirm.get(key) or {}
        median = entry.get("median")
        if isinstance(median, (int, float)) and math.isfinite(median):
            ci = entry.get("ci95")
            out.append((_label(confirm, key, entry), float(median), (float(ci[0]), float(ci[1])) if ci else None))
    return out


def figure(summary: Mapping[str, Any], results: Sequence[Result]) -> Any:
    """The run's figure (matplotlib, Agg): evaluations, best so far, failures, the known optimum and the
    confirm phase's markers, in the run's unit, with whole-number evaluation ticks."""
    from matplotlib.ticker import MaxNLocator

    from searchlab.core.figures import axes

    direction = Direction(summary["direction"])
    label, k = y_axis(summary)
    xs, ys, best_x, best_y = _series(results, direction)
    ys, best_y = [y * k for y in ys], [y * k for y in best_y]
    n = len(results)
    failed = [i for i, r in enumerate(results, start=1) if not r.ok]
    title = (f"{summary.get('problem')} / {summary.get('searcher')} (seed {summary.get('seed')}): "
             f"{n} evaluations, stopped on {summary.get('stop_reason')}")
    fig, ax = axes(title, "evaluation", label, size=(7, 4))
    ax.title.set_fontsize(10)
    if xs:
        ax.scatter(xs, ys, s=10, color="tab:blue", alpha=0.35, label=f"evaluations ({len(xs)} ok)")
        # a step line to the last evaluation: a flat tail shows the search stopped improving
        ax.step([*best_x, n], [*best_y, best_y[-1]], where="post", color="tab:red", lw=2,
                label="best so far (single measurements)")
    optimum = summary.get("known_optimum")
    if isinstance(optimum, (int, float)) and math.isfinite(optimum):
        ax.axhline(optimum * k, color="black", ls="--", lw=1, label=f"known optimum {optimum * k:.4g}")
    for (what, value, ci), color, style in zip(markers(summary), ("tab:green", "tab:gray"), ("-", ":")):
        ax.axhline(value * k, color=color, ls=style, lw=1.5, label=f"{what} {value * k:.4g}")
        if ci is not None:
            ax.axhspan(ci[0] * k, ci[1] * k, color=color, alpha=0.12)
    if failed:
        ax.plot(failed, [0.0] * len(failed), "|", color="tab:gray", ms=8, transform=ax.get_xaxis_transform(),
                label=f"failed / infeasible ({len(failed)})")
    if ys and min(ys) > 0 and max(ys) / min(ys) > 10:  # keep the best-so-far steps readable
        ax.set_yscale("log")
    ax.set_xlim(0.5, max(n, 1) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # evaluations are counted: no 2.5th evaluation
    if not xs:
        ax.text(0.5, 0.5, "no successful evaluation", transform=ax.transAxes, ha="center", va="center")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="best")
    return fig


def plot_run(run_dir: str | Path, summary: Mapping[str, Any], results: Sequence[Result]) -> Path:
    """Write ``<run_dir>/best_so_far.png`` (best objective so far vs evaluation) and return its path."""
    import io

    from searchlab.core.figures import write

    png = io.BytesIO()
    figure(summary, results).savefig(png, format="png", dpi=100)
    return write(Path(run_dir) / FILENAME, png.getvalue())  # atomic, like summary.json
