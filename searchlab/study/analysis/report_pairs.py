"""The paired comparisons in the report: "A beats B" matrices (HTML), a list (Markdown), a CSV.

One matrix per (scope, metric): the cell in row A, column B says whether A beats B,
loses to B, or shows no difference (Holm-adjusted p >= ALPHA), with the adjusted p, the
rank-biserial effect r (from the row's side) and the number of pairs.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from searchlab.study.analysis.compare import METRICS
from searchlab.study.analysis.stats import ALPHA, Comparison

if TYPE_CHECKING:  # pandas is imported lazily
    import pandas as pd

EXPLAIN = (f"Wilcoxon signed-rank test on paired runs (same problem and seed), two-sided, Holm-corrected over the "
           f"pairs of each table; 'beats' needs p(Holm) < {ALPHA}. r: matched-pairs rank-biserial correlation from "
           f"the row's side (1: better in every pair that differs); n: pairs.")

STYLE = """table.pairwise td.win{background:#d8f0d8}table.pairwise td.loss{background:#f6dada}
table.pairwise td.same{color:#666}table.pairwise td{white-space:nowrap}"""


def _p(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.2g}" if value >= 0.001 else f"{value:.1e}"


def _cell(c: Comparison, row: str) -> tuple[str, str, str]:
    """(css class, verdict word, text) of comparison ``c`` seen from searcher ``row``."""
    sign = 1.0 if row == c.a else -1.0
    r = sign * c.effect
    detail = f"p={_p(c.p_holm)}, r={r:+.2f}, n={c.pairs}"
    if c.verdict == "no difference":
        return "same", "no difference", f"no difference ({detail})"
    won = (c.effect > 0) == (row == c.a)
    return ("win", "beats", f"beats ({detail})") if won else ("loss", "loses to", f"loses to ({detail})")


def too_few(comparisons: Sequence[Comparison]) -> str:
    """Why "no difference" may only mean "too few seeds": the exact test's floor (searchlab.study.analysis.headline)."""
    from searchlab.study.analysis.headline import pairs_needed

    short = {c.pairs for c in comparisons if c.pairs < pairs_needed()}
    if not short:
        return ""
    return (f" With {', '.join(map(str, sorted(short)))} pairs no difference can be significant: an exact two-sided "
            f"Wilcoxon signed-rank test needs at least {pairs_needed()} pairs for p < {ALPHA}.")


def html_tables(comparisons: Sequence[Comparison]) -> str:
    if not comparisons:
        return ""
    parts = [f"<h2 id='pairwise'>Paired comparisons</h2><p>{html.escape(EXPLAIN)}</p>"]
    wins = [f"{c.verdict} ({c.scope}, {c.metric}, p(Holm)={_p(c.p_holm)})" for c in comparisons
            if c.verdict != "no difference"]
    parts.append("<p class='verdicts'><b>Differences that hold:</b> " +
                 (html.escape("; ".join(wins)) if wins else "none") + ". Every other pair: no difference."
                 + html.escape(too_few(comparisons)) + "</p>")
    for scope in dict.fromkeys(c.scope for c in comparisons):
        for metric, meaning in METRICS.items():
            table = [c for c in comparisons if c.scope == scope and c.metric == metric]
            if not table:
                continue
            labels = sorted({c.a for c in table} | {c.b for c in table})
            by_pair = {(c.a, c.b): c for c in table} | {(c.b, c.a): c for c in table}
            head = "".join(f"<th>{html.escape(b)}</th>" for b in labels)
            body = []
            for a in labels:
                cells = []
                for b in labels:
                    if a == b:
                        cells.append("<td>-</td>")
                        continue
                    cls, word, text = _cell(by_pair[a, b], a)
                    cells.append(f"<td class='{cls}' data-verdict='{word}'>{html.escape(text)}</td>")
                body.append(f"<tr><th>{html.escape(a)}</th>{''.join(cells)}</tr>")
            parts.append(f"<h3>{html.escape(scope)}: {html.escape(metric)} ({html.escape(meaning)})</h3>"
                         f"<table class='pairwise' data-scope='{html.escape(scope)}' data-metric='{metric}'>"
                         f"<thead><tr><th>row vs column</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")
    return "".join(parts)


def verdict_lines(comparisons: Sequence[Comparison]) -> list[str]:
    """One line per comparison, for summary.md."""
    out = []
    for c in comparisons:
        out.append(f"{c.scope}, {c.metric}: **{c.verdict}** (p = {_p(c.p_value)}, p(Holm) = {_p(c.p_holm)}, "
                   f"r = {c.effect:+.2f} for {c.a}, {c.pairs} pairs: {c.a} better in {c.a_better}, "
                   f"{c.b} in {c.b_better}, {c.ties} tied)")
    return out


def markdown(comparisons: Sequence[Comparison]) -> list[str]:
    if not comparisons:
        return []
    return ["## Paired comparisons", "", EXPLAIN + too_few(comparisons), "",
            *[f"- {line}" for line in verdict_lines(comparisons)], ""]


def frame(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    import pandas as pd

    columns = list(Comparison("", "", "", "", 0, 0, 0, 0, math.nan, math.nan, math.nan, math.nan, 0.0).as_row())
    return pd.DataFrame([c.as_row() for c in comparisons], columns=columns)
