"""The table of P +- error per strategy and per space, with paired Holm-corrected tests across repeats.

Each cell is the package's P on that space (mean of the standardised curve) +- its ``np.std`` over the range
(the package's "error"); the aggregate column is the file's overall score. The tests: for every pair of
strategies, the per-repeat P (each repeat scored alone, :mod:`.scoring`) averaged over spaces for repeat
index r gives one pair of numbers per r; a two-sided Wilcoxon signed-rank test over the r pairs them by
repeat index (the repeats are independent runs, so the pairing removes no shared noise, it only fixes the
sample), and Holm's step-down correction covers all pairs of an axis. A difference with corrected p >= 0.05
is reported as "no difference".
"""

from __future__ import annotations

import csv
import io
import itertools
from typing import Any

import numpy as np

__all__ = ["holm", "pair_tests", "table_files"]


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input's order."""
    order = np.argsort(pvalues)
    adjusted = np.empty(len(pvalues))
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return [float(a) for a in adjusted]


def _per_repeat_mean(scores: Any, axis: str, name: str) -> np.ndarray:
    per = [v[name] for v in scores.per_repeat[axis].values()]
    n = min(len(p) for p in per)
    out: np.ndarray = np.mean([p[:n] for p in per], axis=0)
    return out


def pair_tests(scores: Any, names: list[str]) -> dict[str, list[dict[str, Any]]]:
    from scipy.stats import wilcoxon

    out: dict[str, list[dict[str, Any]]] = {}
    for axis in ("fevals", "time"):
        rows: list[dict[str, Any]] = []
        for a, b in itertools.combinations(names, 2):
            x, y = _per_repeat_mean(scores, axis, a), _per_repeat_mean(scores, axis, b)
            n = min(len(x), len(y))
            diff = x[:n] - y[:n]
            p = 1.0 if n < 2 or np.allclose(diff, 0) else float(wilcoxon(x[:n], y[:n]).pvalue)
            rows.append({"a": a, "b": b, "mean_diff": float(np.mean(diff)), "n": n, "p": p})
        for row, adj in zip(rows, holm([r["p"] for r in rows])):
            row["p_holm"] = adj
            row["verdict"] = ("no difference" if adj >= 0.05 else
                              f"{row['a'] if row['mean_diff'] > 0 else row['b']} ahead")
        out[axis] = rows
    return out


def _rows(scores: Any, names: list[str], display: dict[str, str]) -> tuple[list[str], list[list[str]]]:
    spaces = list(scores.per_space["fevals"])
    header = ["axis", "strategy", *spaces, "all spaces"]
    rows: list[list[str]] = []
    for axis in ("fevals", "time"):
        for n in names:
            cells = [f"{scores.per_space[axis][s][n][0]:.3f} ± {scores.per_space[axis][s][n][1]:.3f}" for s in spaces]
            p, e = scores.aggregate[axis][n]
            rows.append([axis, display[n], *cells, f"{p:.3f} ± {e:.3f}"])
    return header, rows


def table_files(scores: Any, names: list[str], display: dict[str, str], tests: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    """``{"md": ..., "tex": ..., "csv": ...}`` texts."""
    header, rows = _rows(scores, names, display)
    md = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    md += ["", "Paired tests (Wilcoxon signed-rank over repeat index, per-repeat P averaged over spaces; "
               "Holm-corrected per axis):", "", "| axis | A | B | mean P(A)-P(B) | n | p | p (Holm) | verdict |",
           "|---|---|---|---|---|---|---|---|"]
    md += [f"| {ax} | {display[t['a']]} | {display[t['b']]} | {t['mean_diff']:+.3f} | {t['n']} | {t['p']:.3g} | "
           f"{t['p_holm']:.3g} | {t['verdict']} |" for ax, ts in tests.items() for t in ts]
    esc = {"_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#"}

    def tex(text: str) -> str:
        return "".join(esc.get(c, c) for c in text).replace("±", r"$\pm$")

    lines = [r"\begin{tabular}{ll" + "r" * (len(header) - 2) + "}", r"\hline",
             " & ".join(tex(h) for h in header) + r" \\", r"\hline"]
    lines += [" & ".join(tex(c) for c in r) + r" \\" for r in rows]
    lines += [r"\hline", r"\end{tabular}"]
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["axis", "strategy", "space", "P", "error"])
    for axis in ("fevals", "time"):
        for n in names:
            for s, v in scores.per_space[axis].items():
                writer.writerow([axis, n, s, f"{v[n][0]:.6f}", f"{v[n][1]:.6f}"])
            writer.writerow([axis, n, "all", f"{scores.aggregate[axis][n][0]:.6f}",
                             f"{scores.aggregate[axis][n][1]:.6f}"])
    return {"md": "\n".join(md) + "\n", "tex": "\n".join(lines) + "\n", "csv": buf.getvalue()}
