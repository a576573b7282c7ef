"""The report: ``scores.json``, ``details.json``, ``table.{md,tex,csv}`` (written as soon as the scores are), then
the figures (SVG) and ``report.html`` (figures inline).

Every file is written whole or not at all (a temporary name, fsynced, renamed). ``scores.json`` is the package's
own two numbers per strategy, ``{"fevals" | "time": {name: {"score": P, "error": e}}}`` (a strategy that could not be
scored on an axis is absent there and listed under ``not_scored`` with the reason); ``details.json`` adds every
space, the per-repeat statistics, the paired tests, the marks, the seeds each repeat used and every repeat's own P
(``per_repeat``: axis -> space -> strategy -> P by repeat index), so a comparison the tables do not make (a
strategy held out on some spaces only, say) is recomputed from the file.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from pathlib import Path
from typing import Any

from searchlab.reproduce.store import atomic_write
from searchlab.reproduce.tables import cell, pooled

__all__ = ["write_report", "write_scores"]

AXES = ("fevals", "time")
AXIS_NAMES = {"fevals": "evaluations axis", "time": "time axis"}


def _num(v: float | None, digits: int = 3) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v:.{digits}f}"


def _rows(experiment: Any, scores: Any, rs: Any, marks: dict[tuple[str, str], str],
          keep: dict[str, list[str]]) -> list[dict[str, Any]]:
    from searchlab.reproduce.repeat_stats import bootstrap

    rows = []
    for axis in AXES:
        for name in experiment.strategies:
            for sp in experiment.spaces:
                rows.append({"axis": axis, "strategy": name, "space": sp.key,
                             **cell(scores, rs, axis, sp.key, name, marks.get((sp.key, name), ""))})
            agg = scores.aggregate.get(axis, {}).get(name)
            mean, lo, hi = bootstrap(pooled(rs.per_repeat.get(axis, {}), name, keep[name]))
            rows.append({"axis": axis, "strategy": name, "space": "all", "P": None if agg is None else agg[0],
                         "error": None if agg is None else agg[1], "repeat_mean": mean, "repeat_lo": lo,
                         "repeat_hi": hi, "mark": "", "pooled_spaces": len(keep[name]),
                         "not_scored": scores.errors.get(axis, {}).get(name, "")})
    return rows


def _clean(value: Any) -> Any:
    """JSON without NaN: a number that is not finite is null (its reason is beside it)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _text(row: dict[str, Any]) -> str:
    if row.get("not_scored"):
        return f"not scored ({str(row['not_scored'])[:80]})"
    star = " *" if row["mark"] else ""
    if row.get("pooled_spaces") == 0:
        return f"{_num(row['P'])} ± {_num(row['error'])}; no space held out to pool"
    return (f"{_num(row['P'])} ± {_num(row['error'])}; {_num(row['repeat_mean'], 2)} "
            f"[{_num(row['repeat_lo'], 2)}, {_num(row['repeat_hi'], 2)}]{star}")


def _markdown(experiment: Any, rows: list[dict[str, Any]], tests: dict[str, list[dict[str, Any]]],
              marks: dict[tuple[str, str], str], notes: list[str]) -> str:
    spaces = [sp.key for sp in experiment.spaces]
    md = [f"# {experiment.name}", "",
          "Each cell: the package's P ± its error (the spread of the curve along the range), then the mean per-repeat "
          "P [95 % bootstrap interval over repeats]. 0 = random search, 1 = the optimum. `*`: not held out (the "
          "space chose the searcher's shipped defaults); such cells are left out of the pooled per-repeat column and "
          "of the tests. The \"all spaces\" P is the package's aggregate over every space.", ""]
    for axis in AXES:
        md += [f"## P, {AXIS_NAMES[axis]}", "", "| strategy | " + " | ".join(spaces) + " | all spaces |",
               "|---" * (len(spaces) + 2) + "|"]
        for name in experiment.strategies:
            cells = [_text(r) for r in rows if r["axis"] == axis and r["strategy"] == name]
            md.append(f"| {experiment.display[name]} | " + " | ".join(cells) + " |")
        md.append("")
    for axis in AXES:
        md += [f"## Paired tests, {AXIS_NAMES[axis]}", "",
               "Wilcoxon signed-rank over repeat index of per-repeat P pooled over the held-out spaces both share, "
               "two-sided, Holm-corrected over the pairs.", "",
               "| A | B | mean P(A)-P(B) | pairs | p | p (Holm) | verdict |", "|---|---|---|---|---|---|---|"]
        for t in tests.get(axis, []):
            diff = "-" if t["mean_diff"] is None else f"{t['mean_diff']:+.3f}"
            md.append(f"| {experiment.display[t['a']]} | {experiment.display[t['b']]} | {diff} | {t['n']} | "
                      f"{_num(t['p'], 3)} | {_num(t['p_holm'], 3)} | {t['verdict']} |")
        md.append("")
    if marks:
        md += ["Not held out (`*`):", ""] + [f"- {experiment.display[n]} on {k}: {t}" for (k, n), t in marks.items()]
        md.append("")
    md += [f"- {n}" for n in notes]
    return "\n".join(md) + "\n"


def _csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    keys = ["axis", "strategy", "space", "P", "error", "repeat_mean", "repeat_lo", "repeat_hi", "mark", "not_scored"]
    writer = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row.get(k) is None or (isinstance(row.get(k), float) and not math.isfinite(row[k]))
                             else row.get(k, "")) for k in keys})
    return buf.getvalue()


def _tex(experiment: Any, rows: list[dict[str, Any]]) -> str:
    esc = {"_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#", "$": r"\$", "{": r"\{", "}": r"\}", "~": r"\~{}",
           "^": r"\^{}", "\\": r"\textbackslash{}"}

    def tex(text: str) -> str:
        return "".join(esc.get(c, c) for c in text).replace("±", r"$\pm$")

    spaces = [sp.key for sp in experiment.spaces]
    lines = [r"\begin{tabular}{ll" + "r" * (len(spaces) + 1) + "}", r"\hline",
             " & ".join(["axis", "strategy", *map(tex, spaces), "all spaces"]) + r" \\", r"\hline"]
    for axis in AXES:
        for name in experiment.strategies:
            cells = [f"{_num(r['P'])} ± {_num(r['error'])}" + (" *" if r["mark"] else "")
                     for r in rows if r["axis"] == axis and r["strategy"] == name]
            lines.append(" & ".join([axis, tex(experiment.display[name]), *map(tex, cells)]) + r" \\")
    return "\n".join([*lines, r"\hline", r"\end{tabular}"]) + "\n"


def _html(experiment: Any, md: str, figures: list[Any], meta: dict[str, Any]) -> str:
    parts = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(experiment.name)}</title>",
             "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse;"
             "margin:1em 0}td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px}svg{max-width:100%;height:auto}"
             "</style>", f"<p>Experiment file <code>{html.escape(str(experiment.path))}</code> (version "
             f"{html.escape(str(experiment.version))}), run by <code>searchlab reproduce</code>: Kernel Tuner's own "
             "strategies in its simulation mode, scored with autotuning-methodology's own functions.</p>",
             "<ul>" + "".join(f"<li>{html.escape(str(k))}: {html.escape(str(v))}</li>" for k, v in meta.items())
             + "</ul>"]
    table: list[list[str]] = []
    for line in [*md.splitlines(), ""]:
        if line.startswith("|") and not line.startswith("|---"):
            table.append([c.strip() for c in line.strip("|").split("|")])
            continue
        if table:  # one <table> per markdown table: scores and tests stay apart
            head, *body = table
            parts.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head) + "</tr>" + "".join(
                "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in body) + "</table>")
            table = []
        if line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")), 4)
            parts.append(f"<h{level}>{html.escape(line.lstrip('#').strip())}</h{level}>")
        elif line.strip():
            parts.append(f"<p>{html.escape(line)}</p>")
    for fig in figures:
        text = fig.svg
        parts.append(f"<figure>{text[text.find('<svg'):]}<figcaption>{html.escape(fig.title)}"
                     f"{(' - ' + html.escape(fig.band)) if fig.band else ''}</figcaption></figure>")
    return "\n".join(parts)


def write_scores(experiment: Any, scores: Any, rs: Any, tests: dict[str, list[dict[str, Any]]],
                 marks: dict[tuple[str, str], str], keep: dict[str, list[str]], root: Path, meta: dict[str, Any],
                 seeds: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """``scores.json``, ``details.json`` and the tables (the report's text, returned for :func:`write_report`)."""
    rows = _rows(experiment, scores, rs, marks, keep)
    md = _markdown(experiment, rows, tests, marks, [f"{k}: {v}" for k, v in meta.items()])
    atomic_write(root / "table.md", md.encode())
    atomic_write(root / "table.csv", _csv(rows).encode())
    atomic_write(root / "table.tex", _tex(experiment, rows).encode())
    doc: dict[str, Any] = {axis: {n: {"score": v[0], "error": v[1]} for n, v in scores.aggregate.get(axis, {}).items()}
                           for axis in AXES}
    doc["not_scored"] = scores.errors
    per_repeat = {axis: {space: {n: [float(v) for v in values] for n, values in by_name.items()}
                         for space, by_name in spaces.items()} for axis, spaces in rs.per_repeat.items()}
    detail = {"scores": doc, "rows": rows, "tests": tests, "marks": {f"{k}/{n}": t for (k, n), t in marks.items()},
              "meta": meta, "seeds": seeds, "per_repeat": per_repeat}
    atomic_write(root / "scores.json", json.dumps(_clean(doc), indent=1, allow_nan=False).encode())
    atomic_write(root / "details.json", json.dumps(_clean(detail), indent=1, default=str, allow_nan=False).encode())
    return md, {"scores": str(root / "scores.json"), "table": str(root / "table.md")}


def write_report(experiment: Any, scores: Any, stats: dict[str, Any], root: Path, md: str,
                 meta: dict[str, Any]) -> dict[str, str]:
    """The figures the file's ``visualization_settings`` ask for (SVG) and ``report.html`` with them inline."""
    from searchlab.reproduce.figures import figures

    figs, skipped = figures(experiment, scores, stats)
    folder = root / "figures"
    written = []
    for fig in figs:
        path = folder / f"{fig.stem}.svg"
        atomic_write(path, fig.svg.encode())
        written.append(str(path))
    text = md + "".join(f"- {line}\n" for line in skipped)
    atomic_write(root / "report.html", _html(experiment, text, figs, meta).encode())
    return {"html": str(root / "report.html"), "figures": ", ".join(written)}
