"""The one figure stack (issue 52, item 4): how every figure of searchlab is made, styled and written.

A run's ``best_so_far.png`` (:mod:`searchlab.run.plot`), a study's report figures
(:mod:`searchlab.study.analysis.plots`) and a reproduce's figures draw on the same parts:

- :func:`axes`: a figure with its own Agg canvas and one titled, labelled, gridded axes -- never pyplot, so no
  backend is chosen and no global figure is left in the user's process (a notebook, Kernel Tuner's, a Ray
  worker), and nothing needs a display;
- :func:`paper_style`: sized for a paper's text width, 8-point text, text kept as text in SVG, a fixed SVG hash
  salt (issue 45); titles wrapped, and shrunk if a line still runs past the figure's edge (:func:`fit_title`,
  which :func:`render` calls);
- :func:`render`: the laid-out figure as PNG bytes and SVG text (vector, what a paper takes; no date in it, so
  a report is reproducible); :func:`write`: either written atomically (a full disk leaves no half-made file).

matplotlib is imported inside these functions only (start-up time).
"""

from __future__ import annotations

import io
import os
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # matplotlib is imported lazily (start-up time); these are for the checker only
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

WIDTH_IN, HEIGHT_IN = 6.5, 3.4  # a paper's text width; 8-point text (RC) stays legible at that size
DPI = 200
RC: dict[str, Any] = {"font.size": 8, "axes.titlesize": 9, "legend.fontsize": 7, "svg.fonttype": "none",
                      "svg.hashsalt": "searchlab"}
TITLE_CHARS = 90  # a title line is wrapped at this many characters (about the width of the axes at 9 points)


@contextmanager
def paper_style() -> Iterator[None]:
    """The figures' style (:data:`RC`) while figures are drawn; the caller's own rc settings are restored after."""
    import matplotlib

    with matplotlib.rc_context(cast(Any, RC)):  # matplotlib types the keys as a Literal of every rc name
        yield


def axes(title: str, xlabel: str, ylabel: str, size: tuple[float, float] = (WIDTH_IN, HEIGHT_IN)) -> tuple[Figure, Axes]:
    """A new figure (constrained layout, its own Agg canvas) with one axes: the title wrapped at
    :data:`TITLE_CHARS`, both labels, a light grid."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)  # its own canvas: a renderer to measure the title with, no pyplot state
    ax = fig.subplots()
    ax.set_title("\n".join(textwrap.fill(line, TITLE_CHARS) for line in title.split("\n")))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def fit_title(fig: Figure) -> None:
    """Shrink a title whose line still runs past the figure's edge after wrapping (one draw per step)."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    width = fig.bbox.width
    for ax in fig.axes:
        title = ax.title
        size = float(title.get_fontsize())
        while size > 5.0 and (title.get_window_extent(renderer).x0 < 0 or title.get_window_extent(renderer).x1 > width):
            size -= 0.5
            title.set_fontsize(size)
            fig.draw_without_rendering()


def render(fig: Figure, dpi: int = DPI) -> tuple[bytes, str]:
    """(PNG bytes, SVG text) of a laid-out figure; the SVG without a date, so a report is reproducible."""
    fig.draw_without_rendering()  # constrained layout, so the title's extent is known
    fit_title(fig)
    png, svg = io.BytesIO(), io.StringIO()
    fig.savefig(png, format="png", dpi=dpi)
    fig.savefig(svg, format="svg", metadata={"Date": None})
    return png.getvalue(), svg.getvalue()


def write(path: Path, data: bytes | str) -> Path:
    """``data`` (a rendered PNG or SVG) at ``path``, atomically: written beside it, then renamed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
