"""The study's figures, each as SVG (vector, what report.html embeds and a paper takes) and PNG (200 dpi), written
beside the report in ``figures/``; drawn on the one figure stack (:mod:`searchlab.core.figures`, issue 52), which
a run's plot and a reproduce's figures share.

Sized for a paper (issue 45): 6.5 x 3.4 inches (a text width), 8-point text, titles wrapped and, if a line
would still run past the figure's edge, set smaller until it fits, so no title is cut off.

- anytime curves: mean best-so-far fraction of peak vs evaluations, shaded with the seeded
  bootstrap confidence band of the mean over runs (level in the title, ``_stats.BAND_LEVEL``;
  the runs' 10th/90th percentiles of paper 001 Fig. 11 are in the tables), and the same vs
  charged time;
- tests to level: evaluations needed to reach each fraction of peak, median with the
  30th-70th percentile band (paper 001 Fig. 12); a level not reached by the percentile's
  runs is not drawn;
- random-normalised score vs evaluations with its bootstrap band (Kernel Tuner's methodology);
- failure shares per searcher and failure mode.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

import searchlab.study.analysis.stats as S
from searchlab.core.figures import WIDTH_IN, paper_style, render, write
from searchlab.core.figures import axes as _axes
from searchlab.study.analysis.aggregate import LEVEL_GRID, Curves

if TYPE_CHECKING:  # matplotlib is imported lazily (start-up time); these are for the checker only
    from matplotlib.axes import Axes


@dataclass(frozen=True)
class Figure:
    kind: str  # anytime | time | levels | score | failures
    problem: str
    title: str
    png: bytes
    svg: str
    band: str = ""  # what the shaded band is (its level), repeated under the figure in the report

    @property
    def svg_base64(self) -> str:
        return base64.b64encode(self.svg.encode("utf-8")).decode("ascii")

    @property
    def stem(self) -> str:
        """The file name (no suffix) in ``figures/``: kind and problem, in characters any file system takes."""
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in self.problem) or "study"
        return f"{safe}_{self.kind}"


BAND = f"{round(S.BAND_LEVEL * 100)} % bootstrap CI of the mean over runs"


def _banded(ax: Axes, x: np.ndarray, runs: np.ndarray, label: str) -> None:
    """Mean line and the shaded bootstrap band of the mean (the runs' spread is in the tables:
    dotted percentile lines of four searchers made the figure unreadable)."""
    mean, lo, hi = S.bootstrap_band(runs)
    (line,) = ax.plot(x, mean, label=label, lw=1.6)
    ax.fill_between(x, lo, hi, alpha=0.2, color=line.get_color(), lw=0)


def _anytime(problem: str, curves: Sequence[Curves]) -> Figure:
    fig, ax = _axes(f"{problem}: best so far vs evaluations\nmean; shaded: {BAND}",
                    "evaluations", "fraction of peak")
    for c in curves:
        _banded(ax, np.arange(1, c.fractions.shape[1] + 1), c.fractions, f"{c.searcher} ({len(c.fractions)} runs)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="lower right")
    return Figure("anytime", problem, "best so far vs evaluations", *render(fig), BAND)


def _time(problem: str, curves: Sequence[Curves]) -> Figure | None:
    timed = [(c.searcher, c.time_grid, c.time_fractions) for c in curves
             if c.time_grid is not None and c.time_fractions is not None]
    if not timed:
        return None
    fig, ax = _axes(f"{problem}: best so far vs charged time\nmean; shaded: {BAND}",
                    "charged time (s)", "fraction of peak")
    for searcher, grid, fractions in timed:
        _banded(ax, grid, fractions, searcher)
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.legend(loc="lower right")
    return Figure("time", problem, "best so far vs charged time", *render(fig), BAND)


def _levels(problem: str, curves: Sequence[Curves]) -> Figure:
    fig, ax = _axes(f"{problem}: evaluations to reach a fraction of peak (median, 30th-70th)",
                    "fraction of peak", "evaluations")
    for c in curves:
        p30, p50, p70 = (np.where(np.isfinite(c.level_percentiles[:, i]), c.level_percentiles[:, i], np.nan)
                         for i in range(3))
        (line,) = ax.plot(LEVEL_GRID, p50, marker=".", label=c.searcher)
        ax.fill_between(LEVEL_GRID, p30, p70, alpha=0.15, color=line.get_color())
    ax.set_xlim(0, 1.0)
    ax.legend(loc="upper left")
    return Figure("levels", problem, "tests to level", *render(fig))


def _score(problem: str, curves: Sequence[Curves]) -> Figure | None:
    scored = [(c, c.score) for c in curves if c.score is not None and np.isfinite(c.score).any()]
    if not scored:
        return None
    low = min(float(np.nanmin(score)) for _, score in scored)
    cut = " (axis cut at -1)" if low < -1.0 else ""
    fig, ax = _axes(f"{problem}: random-normalised score (S - R) / (opt - R){cut}\nmean; shaded: {BAND}",
                    "evaluations", "score")
    for c, score in scored:
        x = np.arange(1, len(score) + 1)
        if c.run_scores is not None and np.isfinite(c.run_scores).all(axis=0).any():
            ok = np.isfinite(c.run_scores).all(axis=0)
            _banded(ax, x[ok], c.run_scores[:, ok], c.searcher)
        else:
            ax.plot(x, score, label=c.searcher)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_ylim(max(-1.0, low - 0.05), 1.05)
    ax.legend(loc="lower right")
    return Figure("score", problem, "random-normalised score", *render(fig), BAND)


def _failures(curves: Sequence[Curves]) -> Figure | None:
    shown = [c for c in curves if not c.problem.startswith("(")]
    modes = sorted({m for c in shown for m in c.failures})
    if not shown:
        return None
    fig, ax = _axes("share of evaluations that failed, by mode", "share of evaluations", "")
    labels = [f"{c.problem} / {c.searcher}" for c in shown]
    left = np.zeros(len(shown))
    for mode in modes:
        share = np.array([c.failures.get(mode, 0.0) for c in shown])
        ax.barh(labels, share, left=left, label=mode)
        left += share
    if not modes:
        ax.barh(labels, left)
        ax.text(0.5, 0.5, "no failed evaluation", transform=ax.transAxes, ha="center")
    ax.set_xlim(0, max(0.05, float(left.max()) * 1.1))
    if modes:
        ax.legend(loc="lower right")
    fig.set_size_inches(WIDTH_IN, 1.2 + 0.3 * len(shown))
    return Figure("failures", "", "failure shares", *render(fig))


def make_figures(curves: Sequence[Curves]) -> list[Figure]:
    """Every figure of the report, problem by problem, failure shares last."""
    with paper_style():
        return _figures(curves)


def _figures(curves: Sequence[Curves]) -> list[Figure]:
    figures: list[Figure] = []
    for problem in dict.fromkeys(c.problem for c in curves):
        group = [c for c in curves if c.problem == problem]
        figures.append(_anytime(problem, group))
        for extra in (_time(problem, group), _levels(problem, group), _score(problem, group)):
            if extra is not None:
                figures.append(extra)
    failures = _failures(curves)
    if failures is not None:
        figures.append(failures)
    return figures


def write_figures(figures: Sequence[Figure], folder: Path) -> list[tuple[Path, Path]]:
    """Each figure as ``folder/<problem>_<kind>.svg`` and ``.png`` (a second figure of one stem gets ``_2``)."""
    folder.mkdir(parents=True, exist_ok=True)
    out: list[tuple[Path, Path]] = []
    seen: set[str] = set()
    for fig in figures:
        stem, k = fig.stem, 2
        while stem in seen:
            stem, k = f"{fig.stem}_{k}", k + 1
        seen.add(stem)
        svg, png = folder / f"{stem}.svg", folder / f"{stem}.png"
        write(svg, fig.svg)
        write(png, fig.png)
        out.append((svg, png))
    return out
