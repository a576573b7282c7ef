"""Write a study's outputs: report.html (self-contained), summary.md, metrics.csv and Parquet files.

- ``metrics.csv`` / ``metrics.parquet``: one row per (problem, searcher), every metric;
- ``pairwise.csv``: every paired comparison (Wilcoxon, Holm, rank-biserial; ``_stats.py``);
- ``evaluations.parquet``: one row per recorded evaluation of every run (long form, with
  best-so-far and fraction of peak), for analyses the report does not make;
- ``report.html``: tables and figures (the SVGs, embedded), readable offline from one file;
- ``figures/``: every figure as SVG (vector, for a paper) and PNG (200 dpi);
- ``summary.md``: the same tables as Markdown.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import searchlab.study.analysis.metrics as M
import searchlab.study.analysis.nodes as N
import searchlab.study.analysis.report_pairs as P
import searchlab.study.analysis.tuned as T
from searchlab.study.analysis.aggregate import StudyData
from searchlab.study.analysis.headline import headlines
from searchlab.study.analysis.stats import BAND_LEVEL

DEFINITIONS = [
    ("fraction of peak", "minimised objective: optimum / value; maximised: value / optimum; 0 before the first "
     "success. The optimum (reference) per problem is shown in the table."),
    ("best so far", f"mean over runs; shaded: the {round(BAND_LEVEL * 100)} % percentile-bootstrap confidence band of "
     "the mean (runs resampled whole, 2000 resamples, fixed seed); the runs' spread (10th-90th percentile, paper 001 "
     "Fig. 11) is in the 'fraction' column. Failed and sub-problem evaluations never count as a best; known-infeasible "
     "proposals (never measured) are not evaluations."),
    ("evals to L %", "evaluations until the best so far reaches L % of peak: median [30th-70th percentile] over runs "
     "(paper 001 Fig. 12); 'not reached' when that percentile's runs never got there."),
    ("success", "share of runs that reached the optimum (within 1e-9) by the end of their budget."),
    ("score", "random-normalised score (S - R) / (opt - R) (Willemsen et al., FGCS 2024) with R the exact expected "
     "best of random search without repeats over the table's configurations (failures count as the worst success): "
     "0 = random search, 1 = optimum; 'final' at the full budget, 'mean' averaged over the budget; "
     f"[brackets]: {round(BAND_LEVEL * 100)} % bootstrap interval over runs."),
    ("KT score", "the performance score as the autotuning-methodology package computes it on the evaluations axis: "
     "R = the rank approximation over valid configurations only, S = the median-rank curve, averaged over the "
     "evaluations until random search is expected to reach 95 % of the way from the median to the optimum "
     "(the range is shown; a range past the runs' budget is clipped to it and says from where). See docs/study.md "
     "for every difference from 'score'."),
    ("failed", "share of all evaluations that failed (any mode; the figure splits by mode)."),
    ("held out", "NO where the searcher's shipped defaults were chosen on this very table or problem instance "
     "(Searcher.defaults_chosen_on, matched by the table file's content digest): such a cell is not a held-out "
     "result. The Provenance table lists what each searcher's defaults were chosen on."),
]



def _fmt(value: Any, digits: int = 3) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            return "not reached"
        return f"{0.0 if abs(value) < TINY else value:.{digits}g}"  # no -1.7e-16 from a difference of equals
    return str(value)


TINY = 1e-9  # below this a metric is rounding error (fractions and scores are of order 1)


def _or_why(value: float, text: str, why: str) -> str:
    """An empty cell says why it is empty."""
    return f"n/a ({why})" if isinstance(value, float) and math.isnan(value) else text


def applicable_notes(data: StudyData) -> list[str]:
    """The notes, less "no time curves" on a problem that never records time (a registered problem that
    needs no device and replays no table: its evaluations cost nothing by design)."""
    from searchlab import registry
    from searchlab.core.problem import DeviceNeed

    def never_timed(problem: str) -> bool:
        if problem not in registry.entries("problem"):
            return False
        replay = any(i.table_values is not None for i in data.instances.values() if i.problem == problem)
        try:
            return not replay and getattr(registry.problem_class(problem), "device_need", None) is DeviceNeed.NONE
        except Exception:
            return False

    return [n for n in data.notes if not (n.endswith("no time curves") and never_timed(n.split(":")[0]))]


def display_rows(rows: Sequence[Mapping[str, Any]], problem: str) -> list[dict[str, str]]:
    """The headline columns of one problem's rows, formatted."""
    out = []
    for r in rows:
        if r["problem"] != problem:
            continue
        d = {"searcher": str(r["searcher"]), "runs": str(r["runs"]), "budget": str(r["budget"]),
             "fraction (mean [p10, p90])": _or_why(r["final_fraction_mean"], f"{_fmt(r['final_fraction_mean'])} "
                                                   f"[{_fmt(r['final_fraction_p10'])}, {_fmt(r['final_fraction_p90'])}]",
                                                   "objective not positive"),
             "success": _fmt(r["success_optimum"])}
        for level in M.LEVELS:
            k = f"evals_to_{round(level * 100)}"
            d[f"evals to {round(level * 100)} %"] = ("not reached" if math.isinf(r[k + "_p50"]) else
                                                     f"{_fmt(r[k + '_p50'])} [{_fmt(r[k + '_p30'])}, "
                                                     f"{_fmt(r[k + '_p70'])}]")
        d["failed"] = _fmt(r["failed_share"])
        d["score final [CI]"] = _or_why(r["score_final"], f"{_fmt(r['score_final'], 2)} [{_fmt(r['score_final_lo'], 2)}, "
                                        f"{_fmt(r['score_final_hi'], 2)}]", "no random baseline")
        d["score mean [CI]"] = _or_why(r["score_mean"], f"{_fmt(r['score_mean'], 2)} [{_fmt(r['score_mean_lo'], 2)}, "
                                       f"{_fmt(r['score_mean_hi'], 2)}]", "no random baseline")
        d["KT score (range)"] = _or_why(r["kt_score"], f"{_fmt(r['kt_score'])} ({r['kt_range']})",
                                        "needs a replayed table")
        d["best value"] = _fmt(r["best_value"], 6)
        mark = r.get("defaults_chosen_on") or ""
        d["held out"] = f"NO: defaults chosen on {mark}" if mark else "yes"
        out.append(d)
    return out


def _html_table(rows: Sequence[Mapping[str, Any]], cls: str = "metrics") -> str:
    if not rows:
        return "<p>(none)</p>"
    cols = list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(r.get(c, '')))}</td>" for c in cols) + "</tr>"
                   for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _md_table(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return "(none)\n"
    cols = list(dict.fromkeys(k for r in rows for k in r))
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(r.get(c, "")).replace("|", "/") for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _provenance(data: StudyData) -> list[dict[str, str]]:
    from searchlab.study.analysis.aggregate import ALL
    from searchlab.study.analysis.provenance import provenance_rows

    return provenance_rows(data.runs, data.rows, ALL)


def _references(data: StudyData) -> list[dict[str, Any]]:
    out = []
    for inst in data.instances.values():
        sign = 1.0 if inst.direction.value == "minimize" else -1.0
        out.append({"problem": inst.problem, "fingerprint": inst.fingerprint, "direction": inst.direction.value,
                    "reference": inst.reference_source, "optimum": sign * inst.reference_loss,
                    "random baseline": inst.random_source or "none"})
    return out


_STYLE = """body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:0.5em 0}
td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px;text-align:left}th{background:#f0f0f0}
img{display:block;margin:0.5em 0;max-width:100%}.notes li{color:#7a4b00}
p.headline{font-size:15px;background:#eef4ff;padding:6px 10px;border-left:4px solid #3366cc}""" + P.STYLE

_CHECK = """<script>window.addEventListener('load',function(){var imgs=document.querySelectorAll('img.figure');
var ok=0;imgs.forEach(function(i){if(i.complete&&i.naturalWidth>0){ok++;}});
var s=document.getElementById('figures-status');s.textContent=ok+' of '+imgs.length+' figures rendered';
s.setAttribute('data-rendered',ok);s.setAttribute('data-total',imgs.length);});</script>"""


def render_html(data: StudyData, figures: Sequence[Any], meta: Mapping[str, Any]) -> str:
    from searchlab.study.analysis.aggregate import ALL

    title = f"searchlab study: {meta.get('name', 'study')}"
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    parts.append("<section id='verdict'><h2>Verdict</h2>" + "".join(
        f"<p class='headline' data-problem='{html.escape(h.problem)}'>{html.escape(h.text)}</p>" for h in headlines(data))
        + (f"<p class='headline tuned'>{html.escape(line)}</p>" if (line := T.verdict_line(data.tuned)) else "")
        + "</section>")
    parts.append(_html_table([{k: v for k, v in meta.items() if not isinstance(v, (dict, list)) and k != "config_yaml"}],
                             "meta"))
    if applicable_notes(data):
        parts.append("<h2>Notes</h2><ul class='notes'>" +
                     "".join(f"<li>{html.escape(n)}</li>" for n in applicable_notes(data)) + "</ul>")
    parts.append("<h2>References (the optimum each problem is normalised to)</h2>" + _html_table(_references(data)))
    parts.append("<h2 id='provenance'>Provenance (what each searcher's shipped defaults were chosen on)</h2>"
                 + _html_table(_provenance(data), "provenance"))
    parts.append(T.html_section(data.tuned))
    problems = list(dict.fromkeys(r["problem"] for r in data.rows))
    for problem in problems:
        parts.append(f"<h2 id='problem-{html.escape(problem)}'>{html.escape(problem)}</h2>")
        if problem == ALL:
            parts.append("<p>Every instance normalised to its own reference, then pooled per searcher.</p>")
        parts.append(_html_table(display_rows(data.rows, problem)))
        for fig in figures:
            if fig.problem == problem:
                parts.append(f"<figure><img class='figure' data-kind='{fig.kind}' data-band='{html.escape(fig.band)}' "
                             f"alt='{html.escape(fig.title)}: {html.escape(problem)}' "
                             f"src='data:image/svg+xml;base64,{fig.svg_base64}'>")
                if fig.band:
                    parts.append(f"<figcaption>Line: mean over runs. Shaded: {html.escape(fig.band)} (seeded).</figcaption>")
                parts.append("</figure>")
    parts.append(P.html_tables(data.comparisons))
    for fig in figures:
        if fig.problem == "":
            parts.append(f"<h2>{html.escape(fig.title)}</h2><img class='figure' data-kind='{fig.kind}' "
                         f"alt='{html.escape(fig.title)}' src='data:image/svg+xml;base64,{fig.svg_base64}'>")
    if data.validation:
        parts.append("<h2>Validation (threshold problems; medians over runs, as paper 003 Table 6.2)</h2>")
        for problem, vrows in data.validation.items():
            parts.append(f"<h3>{html.escape(problem)}</h3>" + _html_table(vrows))
    parts.append(N.html_section(data.runs, _html_table))  # issue 24: work per node
    parts.append("<h2>Definitions</h2><dl>" + "".join(
        f"<dt><b>{html.escape(k)}</b></dt><dd>{html.escape(v)}</dd>" for k, v in DEFINITIONS) + "</dl>")
    parts.append("<details><summary>All metrics</summary>" + _html_table(data.rows) + "</details>")
    if meta.get("config_yaml"):
        parts.append(f"<details><summary>Study config</summary><pre>{html.escape(str(meta['config_yaml']))}</pre></details>")
    runs = [{"problem": r.problem, "searcher": r.searcher, "seed": r.seed, "evaluations": r.evaluations,
             "stop": r.stop_reason, "fingerprint": r.fingerprint, "path": str(r.path)} for r in data.runs]
    parts.append(f"<details><summary>Runs ({len(runs)})</summary>" + _html_table(runs) + "</details>")
    parts.append(f"<p id='figures-status'>{len(figures)} figures</p>{_CHECK}</body></html>")
    return "".join(parts)


def render_markdown(data: StudyData, meta: Mapping[str, Any]) -> str:
    lines = [f"# searchlab study: {meta.get('name', 'study')}", "", "## Verdict", ""]
    lines += [f"- {h.text}" for h in headlines(data)]
    lines += [f"- {line}" for line in [T.verdict_line(data.tuned)] if line] + [""]
    lines += [f"- {k}: {v}" for k, v in meta.items() if not isinstance(v, (dict, list)) and k != "config_yaml"]
    if applicable_notes(data):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in applicable_notes(data)]
    lines += ["", "## References", "", _md_table(_references(data)), ""]
    lines += ["## Provenance (what each searcher's shipped defaults were chosen on)", "",
              _md_table(_provenance(data)), ""]
    lines += T.markdown(data.tuned)
    for problem in dict.fromkeys(r["problem"] for r in data.rows):
        lines += [f"## {problem}", "", _md_table(display_rows(data.rows, problem))]
    lines += P.markdown(data.comparisons)
    for problem, vrows in data.validation.items():
        lines += [f"## Validation: {problem}", "", _md_table(vrows)]
    lines += N.markdown_section(data.runs, _md_table)  # issue 24: work per node
    lines += ["## Definitions", ""] + [f"- **{k}**: {v}" for k, v in DEFINITIONS]
    return "\n".join(lines) + "\n"


def evaluations_frame(data: StudyData) -> Any:
    import pandas as pd

    frames = []
    for run in data.runs:
        inst = data.instances[run.instance]
        best = M.best_so_far(run.losses)
        sign = 1.0 if run.direction.value == "minimize" else -1.0
        with np.errstate(all="ignore"):
            frames.append(pd.DataFrame({
                "problem": run.problem, "fingerprint": run.fingerprint, "searcher": run.searcher, "seed": run.seed,
                "run": str(run.path), "evaluation": np.arange(1, run.evaluations + 1), "status": list(run.statuses),
                "failure_mode": list(run.modes), "objective": np.where(np.isfinite(run.losses), sign * run.losses, np.nan),
                "best_objective": np.where(np.isfinite(best), sign * best, np.nan),
                "fraction_of_peak": M.fraction_of_peak(best, inst.reference_loss, run.direction),
                "charged_s": run.charged, "charged_cum_s": np.cumsum(run.charged)}))
    return pd.concat(frames, ignore_index=True)


def write_report(data: StudyData, out_dir: str | Path, meta: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """Write every output into ``out_dir``; returns their paths."""
    import pandas as pd

    from searchlab.study.analysis.plots import make_figures, write_figures

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta = dict(meta or {})
    meta.setdefault("runs", len(data.runs))
    figures = make_figures(data.curves)
    paths = {"html": out / "report.html", "markdown": out / "summary.md", "csv": out / "metrics.csv",
             "parquet": out / "metrics.parquet", "evaluations": out / "evaluations.parquet",
             "json": out / "study.json", "pairwise": out / "pairwise.csv", "tuned": out / "tuned.csv"}
    metrics = pd.DataFrame(data.rows)
    metrics.to_csv(paths["csv"], index=False)
    metrics.to_parquet(paths["parquet"], index=False)
    P.frame(data.comparisons).to_csv(paths["pairwise"], index=False)
    if data.tuned:  # a study with no tune: rows writes no empty tuned.csv (issue 35)
        pd.DataFrame([r.as_row() for r in data.tuned]).to_csv(paths["tuned"], index=False)
    else:
        del paths["tuned"]
    evaluations_frame(data).to_parquet(paths["evaluations"], index=False)
    files = write_figures(figures, out / "figures")
    paths["html"].write_text(render_html(data, figures, meta))
    paths["markdown"].write_text(render_markdown(data, meta))
    paths["json"].write_text(json.dumps({"meta": meta, "notes": data.notes, "figures": [
        {"kind": f.kind, "problem": f.problem, "title": f.title, "svg": str(files[i][0]), "png": str(files[i][1])}
        for i, f in enumerate(figures)]}, indent=2, default=str))
    return paths

