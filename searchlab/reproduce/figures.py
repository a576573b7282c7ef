"""The figures an experiment file's ``visualization_settings.plots`` asks for, drawn on the one figure stack.

Each entry of ``plots`` is drawn as the reference's visualizer draws it (Willemsen et al., FGCS 2024, Figs. 5-7),
on the one figure stack (:mod:`searchlab.core.figures`: 6.5 x 3.4 in, 8-point text), as SVG:

- ``scope: searchspace``, ``style: line``: per space and per x axis (``fevals``, ``time``) and y axis
  (``baseline``: P, the random-search baseline at 0; ``normalized``: (value - median) / (optimum - median);
  ``absolute``: the objective), each strategy's curve with the package's band, the baseline curve, the optimum
  (1, or its value) as a dash-dot line, and the part past the real runs' stopping point dashed (extrapolated);
  evaluation axes take integer ticks only;
- ``scope: search_strategy``, ``style: heatmap``: per strategy, P of each GPU x application (``applications`` x
  ``gpus``), or of each space over ``bins`` time bins (``time`` x ``searchspaces``), on the colour range
  ``cmin``..``cmax`` (``annotate`` writes the values); one strategy works as well as many;
- ``scope: aggregate``, ``style: line``: P averaged over spaces against the fraction of each space's time range,
  the band the spaces' bands averaged, baseline 0 and optimum 1, dashed past the median real stopping point;
  ``tmin`` (``real``: up to the last real stopping point; a fraction: up to it), ``xlabel`` and ``ylabel``.

Other styles (``scatter``, ``head2head``, ``compare_heatmaps``) are not drawn; the report lists them and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from searchlab.core.figures import axes, fit_title, paper_style
from searchlab.study.analysis.plots import Figure

__all__ = ["figures"]

LABELS = {"fevals": "function evaluations", "time": "time (s)"}
YLABELS = {"baseline": "performance score P (random = 0, optimum = 1)", "absolute": "best objective value",
           "normalized": "(best - median) / (optimum - median)"}


def _figure(kind: str, problem: str, title: str, draw: Any, xlabel: str, ylabel: str, band: str = "") -> Figure:
    """One figure in the paper style, as SVG only (vector, what report.html embeds and a paper takes; the
    study's PNG copy doubled the drawing time of a small experiment's report)."""
    import io

    with paper_style():
        fig, ax = axes(title, xlabel, ylabel)
        draw(fig, ax)
        fig.draw_without_rendering()  # constrained layout, so the title's extent is known
        fit_title(fig)
        svg = io.StringIO()
        fig.savefig(svg, format="svg", metadata={"Date": None})
    return Figure(kind, problem, title, b"", svg.getvalue(), band)


def _y(curve: Any, y: str, stats: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if y == "baseline":
        return curve.p, curve.lo, curve.hi
    if y == "absolute":
        return curve.raw, curve.raw_lo, curve.raw_hi
    opt, median = stats.total_performance_absolute_optimum(), stats.total_performance_median()
    return (curve.raw - median) / (opt - median), (curve.raw_lo - median) / (opt - median), \
        (curve.raw_hi - median) / (opt - median)


def _searchspace(experiment: Any, scores: Any, stats: Mapping[str, Any], x: str, y: str) -> list[Figure]:
    from matplotlib.ticker import MaxNLocator

    out = []
    for sp in experiment.spaces:
        curves = scores.curves.get(x, {}).get(sp.key, {})
        if not curves:
            continue
        st = stats[sp.key]

        def draw(fig: Any, ax: Any, curves: Mapping[str, Any] = curves, st: Any = st) -> None:
            first = next(iter(curves.values()))
            base = np.asarray(st_baseline(st, first.x, x))
            opt = st.total_performance_absolute_optimum()
            if y == "baseline":
                ax.axhline(0.0, color="black", ls="--", lw=0.9, label="random search (baseline)")
            else:
                shown = base if y == "absolute" else (base - st.total_performance_median()) / (
                    opt - st.total_performance_median())
                ax.plot(first.x, shown, color="black", ls="--", lw=0.9, label="random search (baseline)")
            ax.axhline(opt if y == "absolute" else 1.0, color="black", ls="-.", lw=0.9, label="optimum")
            for name, c in curves.items():
                yv, lo, hi = _y(c, y, st)
                cut = max(1, min(len(c.x), round(c.stop * len(c.x))))
                (line,) = ax.plot(c.x[:cut], yv[:cut], lw=1.4, label=experiment.display[name])
                ax.fill_between(c.x, lo, hi, color=line.get_color(), alpha=0.15, lw=0)
                if cut < len(c.x):
                    ax.plot(c.x[cut - 1:], yv[cut - 1:], lw=1.2, ls="--", color=line.get_color())
            if x == "fevals":
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.legend(fontsize=6, loc="lower right")

        title = f"{sp.application} on {sp.gpu}: {y} over {LABELS[x]}\n(dashed: extrapolated past the real runs' end)"
        out.append(_figure(f"space_{x}_{y}", sp.key.replace("+", "_"), title, draw, LABELS[x], YLABELS[y],
                           f"{round(experiment.confidence_level * 100)} % band of the package's curve"))
    return out


def st_baseline(stats: Any, x: np.ndarray, axis: str) -> np.ndarray:
    from searchlab.reproduce.fastcurve import FastBaseline

    curve: np.ndarray = FastBaseline(stats).get_curve(x, axis)
    return curve


def _heatmaps(experiment: Any, scores: Any, plot: Mapping[str, Any]) -> list[Figure]:
    xs, ys = list(plot.get("x_axis_value_types") or ["applications"]), list(plot.get("y_axis_value_types") or ["gpus"])
    x, y = xs[0], ys[0]
    cmin, cmax = float(plot.get("cmin", plot.get("vmin", -0.5))), float(plot.get("cmax", plot.get("vmax", 1.0)))
    gpus = list(dict.fromkeys(sp.gpu for sp in experiment.spaces))
    apps = list(dict.fromkeys(sp.application for sp in experiment.spaces))
    out = []
    for name in experiment.strategies:
        per = scores.per_space.get("time", {})
        if {x, y} == {"applications", "gpus"}:
            grid = np.array([[per.get(f"{g}+{a}", {}).get(name, (np.nan,))[0] for a in apps] for g in gpus])
            rows, cols = gpus, apps
            if x == "gpus":
                grid, rows, cols = grid.T, apps, gpus
        elif {x, y} == {"time", "searchspaces"}:
            bins = int(plot.get("bins", 10))
            rows = [f"{sp.application} on {sp.gpu}" for sp in experiment.spaces]
            cols = [f"{v:.2f}" for v in np.linspace(0, 1, bins)]
            grid = np.array([[float(np.mean(part)) if len(part) else np.nan for part in np.array_split(
                scores.curves.get("time", {}).get(sp.key, {}).get(name).p, bins)] if name in
                scores.curves.get("time", {}).get(sp.key, {}) else [np.nan] * bins for sp in experiment.spaces])
            if x == "searchspaces":
                grid, rows, cols = grid.T, cols, rows
        else:
            continue

        def draw(fig: Any, ax: Any, grid: np.ndarray = grid, rows: list[str] = rows, cols: list[str] = cols) -> None:
            im = ax.imshow(grid, cmap="RdYlGn", vmin=cmin, vmax=cmax, aspect="auto", interpolation="nearest")
            ax.set_xticks(range(len(cols)), cols, rotation=30 if len(cols) > 4 else 0, ha="right", fontsize=6)
            ax.set_yticks(range(len(rows)), rows, fontsize=6)
            ax.grid(False)
            if plot.get("annotate", True) and grid.size <= 400:
                for (i, j), v in np.ndenumerate(grid):
                    ax.text(j, i, "-" if np.isnan(v) else f"{v:.2f}", ha="center", va="center", fontsize=6)
            fig.colorbar(im, ax=ax, shrink=0.85, label="performance score P")

        title = f"{experiment.display[name]}: P per {y} and {x} (time axis)"
        out.append(_figure(f"heatmap_{x}_{y}", name, title, draw, str(plot.get("xlabel", x)),
                           str(plot.get("ylabel", y))))
    return out


def _aggregate(experiment: Any, scores: Any, plot: Mapping[str, Any]) -> list[Figure]:
    curves = scores.aggregate_curves.get("time", {})
    if not curves:
        return []
    tmin = plot.get("tmin", 1.0)
    stops = {n: float(np.median([scores.curves["time"][sp.key][n].stop for sp in experiment.spaces]))
             for n in curves}
    end = max(stops.values()) if tmin == "real" else float(tmin)

    def draw(fig: Any, ax: Any) -> None:
        ax.axhline(0.0, color="black", ls=":", lw=0.9, label="calculated baseline (random search)")
        ax.axhline(1.0, color="black", ls="-.", lw=0.9, label="absolute optimum")
        for name, perf in curves.items():
            x = np.linspace(0.0, 1.0, len(perf))
            keep = x <= end + 1e-12
            lo = np.mean([scores.curves["time"][sp.key][name].lo for sp in experiment.spaces], axis=0)
            hi = np.mean([scores.curves["time"][sp.key][name].hi for sp in experiment.spaces], axis=0)
            xb = np.linspace(0.0, 1.0, len(lo))
            stop = stops[name]
            p, e = scores.aggregate["time"][name]
            (line,) = ax.plot(x[keep & (x <= stop)], perf[keep & (x <= stop)], lw=1.4,
                              label=f"{experiment.display[name]} (P={p:.3f} ± {e:.3f})")
            ax.fill_between(xb[xb <= end + 1e-12], lo[xb <= end + 1e-12], hi[xb <= end + 1e-12],
                            color=line.get_color(), alpha=0.15, lw=0)
            ax.plot(x[keep & (x >= stop)], perf[keep & (x >= stop)], lw=1.2, ls="--", color=line.get_color())
        ax.set_ylim(top=1.02)
        ax.legend(fontsize=6, loc="lower right")

    start, stop_pct = experiment.cutoff_percentile_start * 100, experiment.cutoff_percentile * 100
    xlabel = str(plot.get("xlabel", "Relative time until the last strategy stopped" if tmin == "real" else
                          f"relative time ({start:g} % to {stop_pct:g} % cutoff)"))
    ylabel = str(plot.get("ylabel", "aggregate performance score P relative to the baseline"))
    title = f"{experiment.name}: aggregate over {len(experiment.spaces)} space(s)\n(dashed: extrapolated)"
    return [_figure("aggregate", "all", title, draw, xlabel, ylabel)]


def figures(experiment: Any, scores: Any, stats: Mapping[str, Any]) -> tuple[list[Figure], list[str]]:
    """The figures of every plot entry, and a line for each entry that is not drawn."""
    import matplotlib

    matplotlib.use("Agg")
    out: list[Figure] = []
    skipped: list[str] = []
    for i, plot in enumerate(experiment.plots):
        scope, style = plot.get("scope"), plot.get("style")
        if scope == "searchspace" and style == "line":
            for x in plot.get("x_axis_value_types") or ["fevals"]:
                for y in plot.get("y_axis_value_types") or ["baseline"]:
                    if x in LABELS and y in YLABELS:
                        out += _searchspace(experiment, scores, stats, x, y)
        elif scope == "search_strategy" and style == "heatmap":
            out += _heatmaps(experiment, scores, plot)
        elif scope == "aggregate" and style == "line":
            out += _aggregate(experiment, scores, plot)
        else:
            skipped.append(f"plots[{i}] ({scope}, {style}): not drawn by searchlab reproduce")
    vis = experiment.raw.get("visualization_settings", {})
    for flag in ("compare_baselines", "compare_split_times"):
        if vis.get(flag):
            skipped.append(f"visualization_settings.{flag}: the reference's extra comparison figures are not drawn")
    return out, skipped
