"""Per-run statistics of a study: score intervals, the methodology's score, paired comparisons.

Kept apart from ``_aggregate.py`` (which makes the per-group tables and curves) so each stays
short. Definitions live in :mod:`searchlab.study.analysis.stats` (tests, bands) and
:mod:`searchlab.study.analysis.methodology` (Kernel Tuner's score).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import searchlab.study.analysis.metrics as M
import searchlab.study.analysis.stats as S
from searchlab.core.records import Direction
from searchlab.study.analysis.collect import RunData

if TYPE_CHECKING:
    from searchlab.study.analysis.aggregate import Instance

METRICS = {"auc": "area under the best-so-far curve (mean fraction of peak over the budget)",
           "final": "fraction of peak at the full budget"}


def run_scores(runs: Sequence[RunData], instances: dict[tuple[str, str], Instance], n: int) -> np.ndarray | None:
    """Runs x n random-normalised score curves, one per run (None if an instance has no baseline).

    The group's score curve is their mean over runs: the score is linear in the searcher's
    mean best-so-far, so per-run curves give the same mean and an interval over runs."""
    rows = []
    for run in runs:
        inst = instances[run.instance]
        if inst.random_best is None:
            return None
        best = M.floor_failures(M.extend(M.best_so_far(run.losses), n), inst.worst_loss)
        rows.append(M.random_normalised_score(best, M.extend(inst.random_best, n), inst.reference_loss))
    return np.array(rows)


def _interval(values: np.ndarray) -> tuple[float, float, float]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return math.nan, math.nan, math.nan
    mean, lo, hi = S.bootstrap_band(values[:, None])
    return float(mean[0]), float(lo[0]), float(hi[0])


def score_columns(scores: np.ndarray | None) -> dict[str, Any]:
    """score_final / score_mean with their bootstrap intervals over runs (S.BAND_LEVEL)."""
    out: dict[str, Any] = {}
    if scores is None:
        finals = means = np.array([])
    else:
        finals = scores[:, -1]
        with np.errstate(all="ignore"):
            means = np.array([np.nanmean(s) if np.isfinite(s).any() else np.nan for s in scores])
    for name, values in (("score_final", finals), ("score_mean", means)):
        out[name], out[f"{name}_lo"], out[f"{name}_hi"] = _interval(values)
    return out


def methodology_columns(runs: Sequence[RunData], instances: dict[tuple[str, str], Instance],
                        notes: list[str]) -> dict[str, Any]:
    """Kernel Tuner's performance score, averaged over the table instances (as the package averages
    search spaces); NaN where no run replayed a table."""
    from searchlab.study.analysis.methodology import methodology_score

    by_inst: dict[tuple[str, str], list[RunData]] = defaultdict(list)
    for run in runs:
        by_inst[run.instance].append(run)
    scores, ranges = [], []
    for key, group in by_inst.items():
        inst = instances[key]
        if inst.table_values is None:
            continue
        n = max(r.evaluations for r in group)
        sign = 1.0 if inst.direction is Direction.MINIMIZE else -1.0
        best = np.array([M.extend(M.best_so_far(r.losses), n) for r in group])
        best = np.where(np.isfinite(best), sign * best, np.nan)
        try:
            score, _, rng = methodology_score(inst.table_values, inst.direction is Direction.MINIMIZE, best, budget=n)
        except ValueError as exc:
            notes.append(f"{key[0]} / {group[0].searcher}: no methodology score ({exc})")
            continue
        if rng.clipped_from is not None:
            note = (f"{key[0]}: the KT score's range ends at {rng.clipped_from} evaluations, beyond the runs' budget "
                    f"of {n}: the score is over {rng.start}-{rng.end} only (budget.evaluations={rng.clipped_from} "
                    f"scores the methodology's whole range)")
            if note not in notes:
                notes.append(note)
        scores.append(score)
        ranges.append(rng.text())
    return {"kt_score": float(np.mean(scores)) if scores else math.nan,
            "kt_range": ", ".join(sorted(set(ranges))) if ranges else ""}


def _run_metrics(run: RunData, inst: Instance, n: int) -> dict[str, float]:
    fractions = M.extend(M.fraction_of_peak(M.best_so_far(run.losses), inst.reference_loss, run.direction), n)
    return {"auc": float(np.mean(fractions)), "final": float(fractions[-1])}


def comparisons(runs: Sequence[RunData], instances: dict[tuple[str, str], Instance], budgets: dict[str, int],
                pooled: str | None) -> list[S.Comparison]:
    """Every pair of searchers on each problem (pairs = seeds) and, with ``pooled``, across problems
    (pairs = problem instance x seed); Holm within each (scope, metric) table."""
    per: dict[str, dict[str, dict[str, dict[tuple[object, ...], float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(dict)))
    for run in runs:
        values = _run_metrics(run, instances[run.instance], budgets[run.problem])
        key = (run.problem, run.fingerprint, run.seed)
        for metric, value in values.items():
            per[run.problem][metric][run.searcher][key] = value
            if pooled:
                per[pooled][metric][run.searcher][key] = value
    out: list[S.Comparison] = []
    for scope, by_metric in per.items():
        for metric in METRICS:
            if len(by_metric[metric]) > 1:
                out += S.compare_all(scope, metric, by_metric[metric])
    return out
