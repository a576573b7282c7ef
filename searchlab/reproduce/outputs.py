"""The paper's figures (SVG and PNG), the table, ``report.html`` (vector figures inline) and ``scores.json``.

Figures follow Willemsen et al. (FGCS 2024, Figs. 5-7): P over evaluations and over time per space with the
package's 95 % band (its ``confidence_level``), the aggregate curve over the normalised time range, and a
spaces x strategies heatmap of P. Everything is written to a temporary name and renamed, so a crash never
leaves a half-written file.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np

from searchlab.reproduce.store import RepeatStore
from searchlab.reproduce.tables import pair_tests, table_files

__all__ = ["write_outputs"]


def _save(fig: Any, root: Path, stem: str) -> list[str]:
    out: list[str] = []
    for ext in ("svg", "png"):
        path = root / "figures" / f"{stem}.{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        fig.savefig(tmp, format=ext, dpi=200 if ext == "png" else None, bbox_inches="tight")
        tmp.replace(path)
        out.append(str(path))
    return out


def _space_figure(scores: Any, space: str, names: list[str], display: dict[str, str], root: Path) -> list[str]:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for ax, axis, label in ((axes[0], "fevals", "function evaluations"), (axes[1], "time", "time (s)")):
        for n in names:
            x, c, lo, hi = scores.curves[axis][space][n]
            (line,) = ax.plot(x, c, label=display[n], lw=1.4)
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.15, lw=0)
        ax.axhline(0.0, color="grey", lw=0.8, ls="--")
        ax.set_xlabel(label)
        ax.set_ylabel("performance score P (random = 0, optimum = 1)")
        ax.set_title(f"{space.replace('+', ' / ')}: over {axis}", fontsize=10)
    axes[1].legend(fontsize=7, loc="lower right")
    paths = _save(fig, root, f"space_{space.replace('+', '_')}")
    plt.close(fig)
    return paths


def _aggregate_figure(scores: Any, names: list[str], display: dict[str, str], root: Path) -> list[str]:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for ax, axis in zip(axes, ("fevals", "time")):
        for n in names:
            curve = scores.aggregate_curves[axis][n]
            p, e = scores.aggregate[axis][n]
            ax.plot(np.linspace(0, 1, len(curve)), curve, label=f"{display[n]} (P={p:.3f} ± {e:.3f})", lw=1.4)
        ax.axhline(0.0, color="grey", lw=0.8, ls="--")
        ax.set_xlabel(f"fraction of each space's cutoff range ({axis})")
        ax.set_ylabel("P, mean over spaces")
        ax.set_title(f"aggregate over {len(scores.per_space[axis])} spaces: {axis}", fontsize=10)
        ax.legend(fontsize=7, loc="lower right")
    paths = _save(fig, root, "aggregate")
    plt.close(fig)
    return paths


def _heatmap(scores: Any, names: list[str], display: dict[str, str], root: Path) -> list[str]:
    import matplotlib.pyplot as plt

    spaces = list(scores.per_space["time"])
    fig, axes = plt.subplots(1, 2, figsize=(4 + 1.6 * len(names), 1.2 + 0.5 * len(spaces)), constrained_layout=True)
    for ax, axis in zip(axes, ("fevals", "time")):
        grid = np.array([[scores.per_space[axis][s][n][0] for n in names] for s in spaces])
        im = ax.imshow(grid, cmap="RdYlGn", vmin=min(-0.5, float(grid.min())), vmax=1.0, aspect="auto")
        ax.set_xticks(range(len(names)), [display[n] for n in names], rotation=35, ha="right", fontsize=8)
        ax.set_yticks(range(len(spaces)), [s.replace("+", " / ") for s in spaces], fontsize=8)
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7)
        ax.set_title(f"P over {axis}", fontsize=10)
        fig.colorbar(im, ax=ax, shrink=0.8)
    paths = _save(fig, root, "heatmap")
    plt.close(fig)
    return paths


def _html(experiment: Any, root: Path, figures: list[str], table_md: str, meta: dict[str, Any]) -> str:
    svgs = [Path(f) for f in figures if f.endswith(".svg")]
    parts = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(experiment.name)}</title>",
             "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px}svg{max-width:100%;height:auto}</style>",
             f"<h1>{html.escape(experiment.name)}</h1>",
             f"<p>Experiment file <code>{html.escape(str(experiment.path))}</code> (schema 1.2.0), run by "
             "<code>searchlab reproduce</code>: Kernel Tuner 1.5 simulation mode, scored with autotuning-methodology "
             "1.1.0's own functions (P against the calculated random-search baseline; 0 = random, 1 = optimum).</p>",
             "<ul>" + "".join(f"<li>{html.escape(str(k))}: {html.escape(str(v))}</li>" for k, v in meta.items())
             + "</ul>"]
    for svg in svgs:
        text = svg.read_text(encoding="utf-8")
        parts.append(f"<figure>{text[text.find('<svg'):]}<figcaption>{html.escape(svg.stem)}</figcaption></figure>")
    rows = [r for r in table_md.splitlines() if r.startswith("|") and not r.startswith("|---")]
    for chunk in ("\n".join(rows),):
        cells = [[c.strip() for c in r.strip("|").split("|")] for r in chunk.splitlines()]
        parts.append("<table>" + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
                                         for r in cells) + "</table>")
    return "\n".join(parts)


def write_outputs(experiment: Any, scores: Any, root: Path, meta: dict[str, Any]) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    names, display = list(experiment.strategies), experiment.display
    figures: list[str] = []
    for space in scores.per_space["time"]:
        figures += _space_figure(scores, space, names, display, root)
    figures += _aggregate_figure(scores, names, display, root)
    figures += _heatmap(scores, names, display, root)
    tests = pair_tests(scores, names) if scores.per_repeat else {}
    tables = table_files(scores, names, display, tests)
    paths = {"figures": ", ".join(figures)}
    for ext, text in tables.items():
        RepeatStore._write(root / f"table.{ext}", text.encode())
        paths[f"table_{ext}"] = str(root / f"table.{ext}")
    doc = {axis: {n: {"score": scores.aggregate[axis][n][0], "error": scores.aggregate[axis][n][1]} for n in names}
           for axis in ("fevals", "time")}
    detail = {"scores": doc, "per_space": {a: {s: {n: {"score": v[n][0], "error": v[n][1]} for n in names}
                                               for s, v in scores.per_space[a].items()} for a in scores.per_space},
              "tests": tests, "meta": meta}
    RepeatStore._write(root / "scores.json", json.dumps(doc, indent=1).encode())
    RepeatStore._write(root / "details.json", json.dumps(detail, indent=1).encode())
    RepeatStore._write(root / "report.html", _html(experiment, root, figures, tables["md"], meta).encode())
    paths.update(scores=str(root / "scores.json"), html=str(root / "report.html"), details=str(root / "details.json"))
    return paths
