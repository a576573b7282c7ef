"""From runs to the study's tables and curves: references, per-run curves, per-group metrics.

A *group* is (problem, searcher label); an *instance* is (problem, fingerprint): the unit
that is normalised. Reference per instance (``reference="auto"``): a replayed table's
optimum (exact), else the problem's ``known_optimum`` (when every run recorded the same),
else the best value seen in the study for that instance (paper 001 §8.2 normalises to the
best found "across all experiments"). ``table``, ``known`` or ``study`` force one and fail
where it is unavailable. With two or more problems an ``(all problems)`` group pools every
instance's normalised curves per searcher, as paper 001 Figs. 11-12 do.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import searchlab.study.analysis.metrics as M
from searchlab.core.records import Direction, loss
from searchlab.errors import ConfigError
from searchlab.study.analysis.collect import RunData
from searchlab.study.analysis.compare import comparisons, methodology_columns, run_scores, score_columns
from searchlab.study.analysis.provenance import row_mark
from searchlab.study.analysis.stats import Comparison

ALL = "(all problems)"
REFERENCES = ("auto", "table", "known", "study")
TableLookup = Callable[[Mapping[str, Any]], Any]  # a problem config -> its parsed table, or None
LEVEL_GRID = np.round(np.arange(0.05, 1.0 + 1e-9, 0.025), 3)
TIME_POINTS = 200


@dataclass
class Instance:
    problem: str
    fingerprint: str
    direction: Direction
    reference_loss: float
    reference_source: str
    worst_loss: float
    random_best: np.ndarray | None = None  # R(n), n = 1.. (loss)
    random_source: str = ""
    table_values: np.ndarray | None = None  # a replayed table's objective per configuration (NaN: failed)


@dataclass
class Curves:
    """What the plots need for one group."""

    problem: str
    searcher: str
    fractions: np.ndarray  # runs x evaluations: best fraction of peak so far
    level_percentiles: np.ndarray  # len(LEVEL_GRID) x 3 (30/50/70)
    time_grid: np.ndarray | None = None
    time_fractions: np.ndarray | None = None  # runs x len(time_grid)
    score: np.ndarray | None = None  # random-normalised score per evaluation (mean over runs)
    run_scores: np.ndarray | None = None  # runs x evaluations: each run's score curve
    failures: dict[str, float] = field(default_factory=dict)


@dataclass
class StudyData:
    runs: list[RunData]
    instances: dict[tuple[str, str], Instance]
    rows: list[dict[str, Any]]
    curves: list[Curves]
    notes: list[str]
    validation: dict[str, list[dict[str, Any]]]
    comparisons: list[Comparison] = field(default_factory=list)
    tuned: list[Any] = field(default_factory=list)  # searchlab.study.analysis.tuned.TunedRow: default versus tuned


def _table_losses(run: RunData, notes: list[str], tables: TableLookup | None) -> np.ndarray | None:
    """Every member's loss when the run replayed a table (+inf: failed or missing); None otherwise.

    This is the population of the exact random baseline (docs/study.md, "The random baseline"):
    the members the space's known constraints allow -- what ``random`` samples uniformly,
    without repeats -- with their recorded outcome, failures included."""
    from searchlab.adapters.table import TableProblem

    cfg = run.config.get("problem")
    if not isinstance(cfg, dict) or "_target_" not in cfg:
        return None
    from searchlab.recompose import UntrustedTargetError, is_registered, recompose, registered_class

    if not is_registered("problem", cfg["_target_"]):  # a record is data: nothing else is imported or built
        return None
    try:
        cls = registered_class("problem", cfg["_target_"], f"{run.path}: problem")
        if not issubclass(cls, TableProblem):
            return None
        table = tables(cfg) if tables is not None else None  # replayed in this process: parsed already
        if table is None:  # the table itself, read as the problem reads it; no problem is built (issue 52)
            table = cls.replayed_table(recompose("problem", cfg, str(run.path)))
    except UntrustedTargetError:
        raise
    except Exception as exc:
        notes.append(f"{run.problem}: the replayed table could not be reopened ({exc}); "
                     "reference and random baseline fall back")
        return None
    space = table.space
    # the members random search draws from: every configuration the known constraints allow; one a
    # partial table lacks replays as a failure (FAILED(invalid)), so it is a failure here too
    members = [loss(m, run.direction) for c, m in table.rows.items() if space.check(c) is None]
    meta = table.meta if isinstance(table.meta, dict) else {}
    missing = meta.get("missing", 0)  # table_from_run: a count; a Kernel Tuner cache: its policy
    if missing == "invalid" and isinstance(meta.get("product"), int):  # absent members replay as FAILED(invalid)
        missing = meta["product"] - len(members)
    missing = missing if isinstance(missing, int) and not isinstance(missing, bool) else 0
    return np.array(members + [np.inf] * missing)


def _instance(key: tuple[str, str], runs: Sequence[RunData], reference: str, notes: list[str],
              tables: TableLookup | None) -> Instance:
    first = runs[0]
    sign = 1.0 if first.direction is Direction.MINIMIZE else -1.0
    table = _table_losses(first, notes, tables) if reference in ("auto", "table") else None
    seen = np.concatenate([r.losses for r in runs])
    finite_seen = seen[np.isfinite(seen)]
    knowns = {r.known_optimum for r in runs}
    known = next(iter(knowns)) if len(knowns) == 1 else None
    if table is not None and np.isfinite(table).any():
        ref, source = float(np.min(table)), "table optimum"
        worst = float(np.max(table[np.isfinite(table)]))
    elif reference == "table":
        raise ConfigError(f"reference=table: problem {key[0]!r} (fingerprint {key[1]}) is not a table replay")
    elif reference in ("auto", "known") and known is not None and math.isfinite(known):
        ref, source = sign * known, "known optimum"
    elif reference == "known":
        raise ConfigError(f"reference=known: problem {key[0]!r} (fingerprint {key[1]}) records no single known_optimum")
    elif finite_seen.size:
        ref, source = float(finite_seen.min()), "best seen in the study"
    else:
        ref, source = math.nan, "none (no successful evaluation)"
    if table is None:
        worst = float(finite_seen.max()) if finite_seen.size else math.nan
    if finite_seen.size and finite_seen.min() < ref - 1e-12 * max(1.0, abs(ref)):
        notes.append(f"{key[0]}: runs beat the {source} ({first.objective(float(finite_seen.min())):.6g} vs "
                     f"{first.objective(ref):.6g}): fractions above 1 (noise, or a stale optimum)")
    if math.isfinite(ref) and (sign * ref <= 0 or np.any(sign * finite_seen <= 0)):
        notes.append(f"{key[0]}: objective values are not all positive: fraction of peak is undefined (NaN)")
    inst = Instance(key[0], key[1], first.direction, ref, source, worst)
    budget = max(r.evaluations for r in runs)
    if table is not None:
        inst.random_best, inst.random_source = M.expected_random_best(table, budget), "exact, from the table"
        inst.table_values = np.where(np.isfinite(table), sign * table, np.nan)
    else:
        randoms = [r for r in runs if r.searcher == "random"]
        if randoms:
            n = max(r.evaluations for r in randoms)
            best = np.array([M.floor_failures(M.extend(M.best_so_far(r.losses), n), worst) for r in randoms])
            inst.random_best = np.concatenate([best.mean(axis=0), np.full(max(0, budget - n), np.nan)])
            inst.random_source = f"mean of the study's {len(randoms)} random run(s)"
    return inst


def _level_percentiles(fractions: np.ndarray) -> np.ndarray:
    out = np.empty((len(LEVEL_GRID), len(M.LEVEL_PERCENTILES)))
    for i, level in enumerate(LEVEL_GRID):
        hits = [M.evaluations_to_level(row, level) for row in fractions]
        out[i] = [M.percentile(hits, q) for q in M.LEVEL_PERCENTILES]
    return out


def _time_grid(runs: Sequence[RunData]) -> np.ndarray | None:
    totals = [float(r.charged.sum()) for r in runs]
    cums = [np.cumsum(r.charged) for r in runs]
    firsts = [float(c[c > 0][0]) for c in cums if (c > 0).any()]
    if not totals or max(totals) <= 0 or not firsts:
        return None
    lo = min(firsts)
    return np.geomspace(lo, max(totals), TIME_POINTS) if max(totals) > lo else np.array([lo])


def _run_fraction(run: RunData, inst: Instance, n: int) -> np.ndarray:
    return M.extend(M.fraction_of_peak(M.best_so_far(run.losses), inst.reference_loss, run.direction), n)


def _group(problem: str, searcher: str, runs: Sequence[RunData], instances: dict[tuple[str, str], Instance],
           n: int, grid: np.ndarray | None, modes: Sequence[str], notes: list[str]) -> tuple[dict[str, Any], Curves]:
    fractions = np.array([_run_fraction(r, instances[r.instance], n) for r in runs])
    final = fractions[:, -1]
    failures = M.failure_shares([m for r in runs for m in r.modes])
    scores = run_scores(runs, instances, n)
    with np.errstate(all="ignore"):
        score = np.nanmean(scores, axis=0) if scores is not None else None
    insts = [instances[k] for k in dict.fromkeys(r.instance for r in runs)]
    bests = [r.objective(float(r.losses.min())) for r in runs if np.isfinite(r.losses).any()]
    sign = 1.0 if runs[0].direction is Direction.MINIMIZE else -1.0
    row: dict[str, Any] = {
        "problem": problem, "searcher": searcher, "instances": len(insts), "runs": len(runs),
        "seeds": ",".join(str(s) for s in sorted({r.seed for r in runs})),
        "evaluations_mean": float(np.mean([r.evaluations for r in runs])), "budget": n,
        "reference": "; ".join(sorted({i.reference_source for i in insts})),
        "reference_value": runs[0].objective(insts[0].reference_loss) if len(insts) == 1 else math.nan,
        "best_value": (min(bests, key=lambda v: sign * v) if bests else math.nan),
        "median_best_value": float(np.median(bests)) if bests else math.nan,
        "final_fraction_mean": float(np.mean(final)), "final_fraction_p10": M.percentile(final, 10.0),
        "final_fraction_p90": M.percentile(final, 90.0), "success_optimum": M.success_rate(final, 1.0),
    }
    for level in M.LEVELS:
        row[f"success_{round(level * 100)}"] = M.success_rate(final, level)
    for level in M.LEVELS:
        hits = [M.evaluations_to_level(f, level) for f in fractions]
        for q in M.LEVEL_PERCENTILES:
            row[f"evals_to_{round(level * 100)}_p{round(q)}"] = M.percentile(hits, q)
    row["infeasible_mean"] = float(np.mean([r.infeasible for r in runs]))  # proposals never measured
    if row["infeasible_mean"] > 0 and problem != ALL:
        notes.append(f"{problem} / {searcher}: {row['infeasible_mean']:.3g} known-infeasible proposals per run on "
                     f"average, not evaluations (never measured); {row['evaluations_mean']:.3g} evaluations per run")
    row["failed_share"] = float(sum(failures.values()))
    for mode in modes:
        row[f"failed_{mode}"] = failures.get(mode, 0.0)
    row.update(score_columns(scores))
    row.update(methodology_columns(runs, instances, notes))
    row["defaults_chosen_on"] = row_mark([r.config for r in runs])  # not held out (searchlab.study.analysis.provenance)
    if row["defaults_chosen_on"] and problem != ALL:
        notes.append(f"{problem} / {searcher}: NOT held out: {searcher}'s shipped defaults were chosen on this "
                     f"table ({row['defaults_chosen_on']})")
    row["score_baseline"] = "; ".join(sorted({i.random_source for i in insts})) if score is not None else "none"
    row["charged_s_mean"] = float(np.mean([r.charged.sum() for r in runs]))
    walls = [r.wall_time_s for r in runs if r.wall_time_s is not None]
    row["wall_s_mean"] = float(np.mean(walls)) if walls else math.nan
    curves = Curves(problem, searcher, fractions, _level_percentiles(fractions), score=score, run_scores=scores,
                    failures=failures)
    if grid is not None:
        curves.time_grid = grid
        curves.time_fractions = np.array([
            M.fraction_of_peak(M.best_at_times(np.cumsum(r.charged), M.best_so_far(r.losses), grid),
                               instances[r.instance].reference_loss, r.direction) for r in runs])
    return row, curves


def _validation(runs: Sequence[RunData]) -> dict[str, list[dict[str, Any]]]:
    """Paper 003 Table 6.2 style: per problem, per searcher, the median of each numeric
    entry of the runs' ``report["validation"]`` plus mean evaluations and tuning (charged) time."""
    from searchlab.study.analysis.collect import _flat

    out: dict[str, list[dict[str, Any]]] = {}
    groups: dict[tuple[str, str], list[RunData]] = defaultdict(list)
    for run in runs:
        if isinstance(run.report, dict) and run.report.get("validation") is not None:
            groups[(run.problem, run.searcher)].append(run)
    for (problem, searcher), group in sorted(groups.items()):
        flats = [_flat(r.report["validation"], "") if isinstance(r.report["validation"], dict)
                 else {"validation": r.report["validation"]} for r in group]
        keys = list(dict.fromkeys(k for f in flats for k in f))
        row: dict[str, Any] = {"searcher": searcher, "runs": len(group)}
        for k in keys:
            values = [f.get(k) for f in flats]
            numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            texts = {json.dumps(v, sort_keys=True, default=str) for v in values}
            row[k] = float(np.median(numbers)) if numbers else values[0] if len(texts) == 1 else "(varies)"
        row["evaluations_mean"] = float(np.mean([r.evaluations for r in group]))
        row["tuning_charged_s_mean"] = float(np.mean([r.charged.sum() for r in group]))
        out.setdefault(problem, []).append(row)
    return out


def aggregate(runs: Sequence[RunData], notes: Sequence[str] = (), reference: str = "auto",
              tables: TableLookup | None = None) -> StudyData:
    """Every metric of the study (see :mod:`searchlab.study.analysis.metrics` for definitions).

    ``tables`` gives the table a process has already parsed for a problem config (or None): the
    study's execution passes its own (``execution.batch.parsed_table``) so that analysis, which
    never runs anything, need not import execution to reuse it."""
    if reference not in REFERENCES:
        raise ConfigError(f"reference={reference!r}: must be one of {list(REFERENCES)}")
    notes = list(notes)
    by_instance: dict[tuple[str, str], list[RunData]] = defaultdict(list)
    for run in runs:
        by_instance[run.instance].append(run)
    instances = {k: _instance(k, v, reference, notes, tables) for k, v in sorted(by_instance.items())}
    modes = sorted({m for r in runs for m in r.modes if m != "none"})
    rows, curves = [], []
    problems = sorted({r.problem for r in runs})
    for problem in problems:
        prob_runs = [r for r in runs if r.problem == problem]
        n, grid = max(r.evaluations for r in prob_runs), _time_grid(prob_runs)
        if grid is None:
            notes.append(f"{problem}: no charged time recorded (compile_s + run_s are 0): no time curves")
        for searcher in sorted({r.searcher for r in prob_runs}):
            row, curve = _group(problem, searcher, [r for r in prob_runs if r.searcher == searcher],
                                instances, n, grid, modes, notes)
            rows.append(row)
            curves.append(curve)
    if len(problems) > 1:
        n = max(r.evaluations for r in runs)
        for searcher in sorted({r.searcher for r in runs}):
            row, curve = _group(ALL, searcher, [r for r in runs if r.searcher == searcher], instances, n, None, modes,
                                [])
            rows.append(row)
            curves.append(curve)
    budgets = {p: max(r.evaluations for r in runs if r.problem == p) for p in problems}
    pairs = comparisons(runs, instances, budgets, ALL if len(problems) > 1 else None)
    return StudyData(list(runs), instances, rows, curves, notes, _validation(runs), pairs)
