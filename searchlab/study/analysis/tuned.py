"""Default versus tuned settings in a study, pooled over the folds (issue 23, items 4 and 5).

A study searcher given with ``tune:`` (searchlab.study.execution.split) is tuned on each fold's training
problems and run on that fold's test problems. Its runs therefore carry different settings per
fold; the collector would label each set of settings as its own row (``genetic_tuned[maxiter=..]``),
and no row would be the *method* "tune genetic on the other tables, then use it". Here:

- :func:`pool` relabels the runs of every tuned searcher with its study label, over all folds
  (the settings each fold chose stay in the report's notes);
- :func:`tuned_table` pairs every tuned row with its default row (the study searcher with the same
  overrides and no ``tune:``) on the (problem, seed) runs both have, all of them test runs, and
  reports the mean of each, the mean paired difference with a 95 % bootstrap interval, Wilcoxon's
  signed-rank p and Holm's correction over the tuned rows of a table (per metric and scope).

Metrics (higher is better, per run): ``fraction``, the mean over the budget's evaluations of the
best-so-far fraction of the optimum -- the score the tuning maximised on the training tables
(searchlab.tuning.searcher_settings, ``score=fraction``) -- and ``final``, the fraction at the full
budget. A tuned default is worth shipping only where the tuned row is *better* after Holm's
correction and its interval excludes 0; anything else is reported as no difference (or worse).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

import searchlab.study.analysis.metrics as M
import searchlab.study.analysis.stats as S

if TYPE_CHECKING:
    from searchlab.study.analysis.aggregate import StudyData
    from searchlab.study.analysis.collect import RunData

ALL = "(all problems)"
METRICS = ("fraction", "final")


@dataclass(frozen=True)
class TunedRow:
    """One tuned searcher against its default, on one scope and metric (test runs only)."""

    scope: str
    metric: str
    tuned: str
    default: str
    pairs: int
    default_mean: float
    tuned_mean: float
    difference: float  # mean of tuned - default over the pairs
    low: float  # 95 % bootstrap interval of the mean difference
    high: float
    p_value: float  # Wilcoxon signed-rank, two-sided
    p_holm: float  # Holm over the tuned rows of this scope and metric

    @property
    def verdict(self) -> str:
        if not (self.p_holm < S.ALPHA) or (self.low <= 0.0 <= self.high):
            return "no difference"
        return "tuned better" if self.difference > 0 else "tuned worse"

    def as_row(self) -> dict[str, Any]:
        return {"scope": self.scope, "metric": self.metric, "tuned": self.tuned, "default": self.default,
                "pairs": self.pairs, "default_mean": self.default_mean, "tuned_mean": self.tuned_mean,
                "tuned_minus_default": self.difference, "ci_low": self.low, "ci_high": self.high,
                "wilcoxon_p": self.p_value, "p_holm": self.p_holm, "verdict": self.verdict}


def defaults_of(searchers: Mapping[str, tuple[Any, Any]]) -> tuple[dict[str, str], list[str]]:
    """tuned label -> its default label (same overrides, no tune), and notes for tuned rows without one.

    ``searchers``: label -> (overrides spec, tune options or None), as searchlab.study.execution.split.tune_spec gives."""
    from searchlab.study.analysis.spec import overrides_of

    plain = {label: tuple(overrides_of(spec, "searcher", label)) for label, (spec, tune) in searchers.items()
             if tune is None}
    pairs, notes = {}, []
    for label, (spec, tune) in searchers.items():
        if tune is None:
            continue
        key = tuple(overrides_of(spec, "searcher", label))
        match = next((d for d, o in plain.items() if o == key), None)
        if match is None:
            notes.append(f"{label}: no untuned searcher with the overrides {list(key)} in the study, "
                         "so no default-versus-tuned row")
        else:
            pairs[label] = match
    return pairs, notes


def pool(runs: Sequence[RunData], tuned: Sequence[str]) -> list[RunData]:
    """Runs of a tuned searcher relabelled with its study label, whatever settings their fold chose."""
    out = []
    for run in runs:
        base = run.searcher.split("[", 1)[0]
        out.append(replace(run, searcher=base) if base in tuned and run.searcher != base else run)
    return out


def _per_run(data: StudyData) -> dict[str, dict[str, dict[tuple[object, ...], float]]]:
    """metric -> searcher -> (problem, fingerprint, seed) -> value."""
    budgets: dict[str, int] = {}
    for run in data.runs:
        budgets[run.problem] = max(budgets.get(run.problem, 0), run.evaluations)
    out: dict[str, dict[str, dict[tuple[object, ...], float]]] = {m: {} for m in METRICS}
    for run in data.runs:
        inst = data.instances[run.instance]
        curve = M.extend(M.fraction_of_peak(M.best_so_far(run.losses), inst.reference_loss, run.direction),
                         budgets[run.problem])
        key = (run.problem, run.fingerprint, run.seed)
        out["fraction"].setdefault(run.searcher, {})[key] = float(np.mean(curve))
        out["final"].setdefault(run.searcher, {})[key] = float(curve[-1])
    return out


def _row(scope: str, metric: str, tuned: str, default: str, a: Mapping[tuple[object, ...], float],
         b: Mapping[tuple[object, ...], float]) -> TunedRow | None:
    keys = sorted((k for k in a if k in b and (scope == ALL or k[0] == scope)), key=repr)
    if not keys:
        return None
    t = np.array([a[k] for k in keys])
    d = np.array([b[k] for k in keys])
    mean, lo, hi = S.bootstrap_band((t - d)[:, None])
    _, p = S.wilcoxon_pair(t, d)
    return TunedRow(scope, metric, tuned, default, len(keys), float(d.mean()), float(t.mean()),
                    float(mean[0]), float(lo[0]), float(hi[0]), p, math.nan)


def tuned_table(data: StudyData, pairs: Mapping[str, str]) -> list[TunedRow]:
    """Every tuned row against its default, per problem and pooled, per metric (module docstring)."""
    values = _per_run(data)
    problems = sorted({r.problem for r in data.runs})
    scopes = [ALL, *problems] if len(problems) > 1 else problems
    rows: list[TunedRow] = []
    for scope in scopes:
        for metric in METRICS:
            found = [r for tuned, default in pairs.items()
                     if tuned in values[metric] and default in values[metric]
                     and (r := _row(scope, metric, tuned, default, values[metric][tuned], values[metric][default]))]
            adjusted = S.holm([r.p_value for r in found])
            rows += [replace(r, p_holm=p) for r, p in zip(found, adjusted)]
    return rows


def verdict_line(rows: Sequence[TunedRow]) -> str | None:
    """One line for the report's verdict: how many tuned searchers beat their defaults on unseen problems."""
    pooled = [r for r in rows if r.metric == "fraction" and r.scope == (ALL if any(x.scope == ALL for x in rows)
                                                                          else r.scope)]
    if not pooled:
        return None
    groups: dict[str, list[str]] = {}
    for r in pooled:
        groups.setdefault(r.verdict, []).append(f"{r.tuned} {r.difference:+.3f} [{r.low:+.3f}, {r.high:+.3f}]")
    parts = [f"{verdict} for {len(names)} ({'; '.join(names)})" for verdict, names in sorted(groups.items())]
    return (f"Default versus tuned on test problems only ({pooled[0].scope}, mean fraction of the optimum over the "
            f"budget, {pooled[0].pairs} pairs each, Holm over {len(pooled)}): " + "; ".join(parts) + ".")


def _cells(row: TunedRow) -> list[str]:
    return [row.tuned, row.default, str(row.pairs), f"{row.default_mean:.3f}", f"{row.tuned_mean:.3f}",
            f"{row.difference:+.3f} [{row.low:+.3f}, {row.high:+.3f}]", f"{row.p_value:.2g}", f"{row.p_holm:.2g}",
            row.verdict]


HEADER = ["tuned", "default", "pairs", "default", "tuned", "tuned - default [95 % CI]", "Wilcoxon p", "Holm p",
          "verdict"]
EXPLAIN = ("Test problems only: each tuned row's settings were chosen on its fold's training problems. Pairs: "
           "(problem, seed) runs of both rows. fraction: mean best-so-far fraction of the optimum over the budget "
           "(the tuning score); final: the fraction at the full budget. Holm over the tuned rows of each table.")


def markdown(rows: Sequence[TunedRow]) -> list[str]:
    if not rows:
        return []
    lines = ["## Default versus tuned (test problems only)", "", EXPLAIN, ""]
    for scope in dict.fromkeys(r.scope for r in rows):
        for metric in METRICS:
            chosen = [r for r in rows if r.scope == scope and r.metric == metric]
            if chosen:
                lines += [f"### {scope}: {metric}", "", "| " + " | ".join(HEADER) + " |",
                          "|" + " --- |" * len(HEADER)]
                lines += ["| " + " | ".join(_cells(r)) + " |" for r in chosen] + [""]
    return lines


def html_section(rows: Sequence[TunedRow]) -> str:
    import html

    if not rows:
        return ""
    parts = [f"<section id='tuned'><h2>Default versus tuned (test problems only)</h2><p>{html.escape(EXPLAIN)}</p>"]
    for scope in dict.fromkeys(r.scope for r in rows):
        for metric in METRICS:
            chosen = [r for r in rows if r.scope == scope and r.metric == metric]
            if not chosen:
                continue
            head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
            body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in _cells(r)) + "</tr>" for r in chosen)
            parts.append(f"<h3>{html.escape(scope)}: {metric}</h3><table class='tuned'><tr>{head}</tr>{body}</table>")
    return "".join(parts) + "</section>"
