"""Default versus tuned, for every knob searcher with Tunable settings: ``study=tuned_peers`` (issue 23, item 5).

Runs ``python -m searchlab.study study=tuned_peers --out STUDY_DIR`` (about 90 minutes on one core; the grid's
cells and tuning runs are kept, so a re-run resumes; ``--report-only`` reads a finished study), then keeps what
docs/baselines.md reports ("Default versus tuned, for every row"): the study's ``tuned.csv`` rows, its config,
and every fold's tuning result (chosen settings, training scores before and after, the meta-search's seed, wall
time, from each run's summary.json). The report is the markdown table (``<out>_table.md``).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import REPO, searchlab_cli
from bench.harness import Benchmark, Context

FOLDS = ("train_A100_MI250X", "train_A4000_W6600")


@dataclass(frozen=True)
class Options:
    study_dir: str = str(REPO / "outputs" / "study" / "tuned_peers")
    overrides: tuple[str, ...] = ()  # more study overrides (e.g. seeds=2; a smaller grid says so in the result)
    report_only: bool = False  # read a finished study, run nothing


def tuning(study: Path) -> dict[str, dict[str, Any]]:
    """label -> fold -> what its searcher_settings run chose (from each run's summary.json)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(study.glob("tuning/*/*/summary.json")):
        summary = json.loads(path.read_text())
        report = summary.get("report") or {}
        out.setdefault(path.parent.parent.name, {})[path.parent.name] = {
            "tuned_overrides": report.get("tuned_overrides"), "tuned_score": report.get("tuned_score"),
            "default_score": report.get("default_score"), "default_settings": report.get("default_settings"),
            "tuned_is_default": report.get("tuned_is_default"), "search_best_score": report.get("search_best_score"),
            "meta_seed": summary.get("seed"), "evaluations": summary.get("evaluations"),
            "wall_time_s": summary.get("wall_time_s")}
    return out


def _settings(fold: Mapping[str, Any] | None) -> str:
    if not fold or not fold.get("tuned_overrides"):
        return "—"
    return " ".join(o.split("searcher.", 1)[1] for o in fold["tuned_overrides"] if o.startswith("searcher."))


def _num(value: str, digits: int = 3, sign: bool = False) -> str:
    return f"{float(value):+.{digits}f}" if sign else f"{float(value):.{digits}f}"


def _p(value: str) -> str:
    p = float(value)
    return f"{p:.2g}" if p < 0.995 else "1"


def table(rows: list[Mapping[str, str]], tuned: Mapping[str, Mapping[str, Any]]) -> str:
    """The Markdown table: one row per tuned searcher, the fraction over the budget and at the last evaluation."""
    head = ("| searcher | settings tuned on A100 + MI250X (tested on A4000, W6600) | settings tuned on A4000 + W6600 "
            "(tested on A100, MI250X) | training score, default → tuned (fold 1; fold 2) | test: fraction over the "
            "budget, default → tuned | tuned - default [95 % CI] | Wilcoxon p | Holm p | at the budget: tuned - default "
            "[95 % CI] | verdict |")
    lines = [head, "| " + " | ".join(["---"] * 10) + " |"]
    by = {(r["metric"], r["tuned"]): r for r in rows if r["scope"] == "(all problems)"}
    for (metric, label), r in by.items():
        if metric != "fraction":
            continue
        final = next((v for (m, t), v in by.items() if t == label and m != "fraction"), None)
        folds = tuned.get(label, {})
        train = "; ".join(f"{_num(f['default_score'])} → {_num(f['tuned_score'])}" if f.get("tuned_score") is not None
                          else "—" for f in (folds.get(k) or {} for k in FOLDS))
        at_end = (f"{_num(final['tuned_minus_default'], sign=True)} [{_num(final['ci_low'], sign=True)}, "
                  f"{_num(final['ci_high'], sign=True)}]") if final else "—"
        lines.append(f"| `{r['default']}` | {_settings(folds.get(FOLDS[0]))} | {_settings(folds.get(FOLDS[1]))} | {train} "
                     f"| {_num(r['default_mean'])} → {_num(r['tuned_mean'])} | {_num(r['tuned_minus_default'], sign=True)} "
                     f"[{_num(r['ci_low'], sign=True)}, {_num(r['ci_high'], sign=True)}] | {_p(r['wilcoxon_p'])} "
                     f"| {_p(r['p_holm'])} | {at_end} | {r['verdict']} |")
    return "\n".join(lines)


def run(ctx: Context, o: Options) -> dict[str, Any]:
    study = Path(o.study_dir).resolve()
    if not o.report_only:
        ctx.log(f"study=tuned_peers into {study} (resumes what is there)")
        searchlab_cli(["study=tuned_peers", *o.overrides, "--out", str(study)], module="searchlab.study")
    with open(study / "tuned.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return {"study": str(study), "overrides": list(o.overrides), "study_yaml": (study / "study.yaml").read_text(), "tuned": rows,
            "tuning": tuning(study)}


def report(ctx: Context, results: Mapping[str, Any]) -> None:
    if "tuned" not in results:  # the historical directory bench/results/historical/tuned_peers/ holds csv files
        raise SystemExit("tuned_peers: this result has no tuned rows")
    text = table(results["tuned"], results["tuning"]) + "\n"
    ctx.artefact("_table.md").write_text(text, encoding="utf-8")
    print(text)


BENCHMARK = Benchmark("tuned_peers", "every knob searcher with Tunable settings, default vs tuned on tables it was "
                      "not tuned on (study=tuned_peers), the table of docs/baselines.md", Options, run, report,
                      cited_by=("docs/baselines.md",))
