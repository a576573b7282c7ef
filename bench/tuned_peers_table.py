"""The default-versus-tuned table of ``study=tuned_peers`` (issue 23, item 5), from a finished study directory.

Copies the study's ``tuned.csv`` and ``study.yaml`` into ``bench/results/tuned_peers/``, gathers every fold's tuning
result (chosen settings, training scores before and after, the meta-search's seed, wall time) into ``tuning.json``,
and prints the Markdown table of docs/baselines.md ("Default versus tuned, for every row"):

    python -m searchlab.study study=tuned_peers --out DIR      # the study (resumes what DIR holds)
    python bench/tuned_peers_table.py DIR                       # the committed results and the table
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "tuned_peers"
FOLDS = ("train_A100_MI250X", "train_A4000_W6600")


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


def _settings(fold: dict[str, Any] | None) -> str:
    if not fold or not fold.get("tuned_overrides"):
        return "—"
    return " ".join(o.split("searcher.", 1)[1] for o in fold["tuned_overrides"] if o.startswith("searcher."))


def _num(value: str, digits: int = 3, sign: bool = False) -> str:
    return f"{float(value):+.{digits}f}" if sign else f"{float(value):.{digits}f}"


def _p(value: str) -> str:
    p = float(value)
    return f"{p:.2g}" if p < 0.995 else "1"


def table(rows: list[dict[str, str]], tuned: dict[str, dict[str, Any]]) -> str:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", type=Path, help="the study directory (python -m searchlab.study study=tuned_peers --out DIR)")
    parser.add_argument("--results", type=Path, default=OUT, help=f"where the results go (default {OUT})")
    args = parser.parse_args()
    args.results.mkdir(parents=True, exist_ok=True)
    for name in ("tuned.csv", "study.yaml"):
        shutil.copy(args.study / name, args.results / name)
    tuned = tuning(args.study)
    (args.results / "tuning.json").write_text(json.dumps(tuned, indent=1, sort_keys=True) + "\n")
    with open(args.study / "tuned.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    print(table(rows, tuned))


if __name__ == "__main__":
    main()
