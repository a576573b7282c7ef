"""The confirm phase: re-measure the best k configurations at the end of a run.

A search keeps the configuration whose *one* measurement was best, and the minimum of many
noisy measurements is biased low (the winner's curse): the reported best is often a lucky
draw. Like a careful benchmark report, the run ends by re-measuring the best ``k``
configurations, interleaved round-robin for ``rounds`` rounds on the run's own workers (so a
slow phase of the machine hits every candidate alike), and reports the confirmed best: the
candidate with the best median over its pooled confirmation samples, with that median's 95 %
interval (docs/measurement.md, "Confirm phase").

Never worse than doing nothing: the problem's default configuration (``Problem.default_config``:
Futhark's untuned thresholds, a spec's default) is measured in every round beside the
candidates, and the confirmed best is compared with it *paired by round* (the ratio of the two
measurements of one round, so a slow minute of the machine cancels out). That speed-up and
its distribution-free 95 % interval decide whether a configuration is recommended at all
(:func:`recommended`: the interval's lower end above 1). Where the problem has validation
datasets, the adapter repeats the comparison on them and that one decides (docs/futhark.md).

Confirmation measurements are recorded in ``results.db`` (negative candidate ids and
``meta.phase = "confirm"``), never told to the searcher and never charged to the budget. A
resumed run whose confirm phase was interrupted re-measures only the (round, configuration)
pairs it has no record of.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from searchlab.core.measure import Samples, median_ci
from searchlab.errors import ConfigError
from searchlab.execution import Executor
from searchlab.records import Candidate, Config, Direction, Result, loss
from searchlab.tables import samples_are_objective

PHASE = "confirm"


@dataclass
class ConfirmConfig:
    """``confirm.k`` best configurations x ``confirm.rounds`` rounds; 0 in either disables.

    The phase runs for problems whose measurements are noisy (``Problem.noisy``: device
    problems, replays with ``sample_noise``); ``confirm.force=true`` runs it for any problem.
    """

    k: int = 3
    rounds: int = 5
    force: bool = False

    def __post_init__(self) -> None:
        for name in ("k", "rounds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"confirm.{name}={value!r}: must be an integer >= 0")

    def enabled(self, noisy: bool) -> bool:
        return self.k > 0 and self.rounds > 0 and (noisy or self.force)


class Recorder(Protocol):
    def record(self, result: Result) -> None: ...


def is_confirmation(result: Result) -> bool:
    return result.candidate.meta.get("phase") == PHASE


def top_k(results: Iterable[Result], direction: Direction, k: int, exclude: str | None = None) -> list[Result]:
    """The ``k`` best distinct configurations the search measured (first measurement wins ties),
    leaving out the configuration keyed ``exclude`` (the default, measured on its own)."""
    best: dict[str, Result] = {}
    for r in results:
        if is_confirmation(r) or not math.isfinite(loss(r.measurement, direction)) or r.config.key == exclude:
            continue
        known = best.get(r.config.key)
        if known is None or loss(r.measurement, direction) < loss(known.measurement, direction):
            best[r.config.key] = r
    ranked = sorted(best.values(), key=lambda r: (loss(r.measurement, direction), r.id))
    return ranked[:k]


def plan(configs: Sequence[Config], rounds: int, done: Iterable[Result]) -> list[tuple[int, Config]]:
    """(round, configuration) pairs still to measure, round-robin: round 0 of every
    configuration, then round 1, ..., each round's order rotated by one (no configuration is
    always measured first). Pairs with a record (an interrupted phase) are skipped."""
    have = {(int(r.candidate.meta.get("round", -1)), r.config.key) for r in done}
    todo = []
    for n in range(rounds):
        shift = n % max(len(configs), 1)
        todo += [(n, c) for c in [*configs[shift:], *configs[:shift]] if (n, c.key) not in have]
    return todo


def confirm_configs(search: Sequence[Result], direction: Direction, k: int, default: Config | None) -> list[Config]:
    """What the phase measures: the default (when the problem has one), then the best ``k`` others."""
    top = [r.config for r in top_k(search, direction, k, default.key if default is not None else None)]
    return [default, *top] if default is not None else top


def run_confirm(executor: Executor, search: Sequence[Result], prior: Sequence[Result], direction: Direction,
                options: ConfirmConfig, store: Recorder | None = None,
                default: Config | None = None) -> tuple[list[Result], bool]:
    """Measure the plan on ``executor``; returns (every confirmation result, completed).

    ``prior``: confirmation results already recorded (resume). An interrupt (Ctrl-C) ends
    the phase early; what was measured is kept and reported.
    """
    configs = confirm_configs(search, direction, options.k, default)
    todo = plan(configs, options.rounds, prior)
    results = list(prior)
    next_id = min([r.id for r in prior] + [0]) - 1
    pending: dict[int, Candidate] = {}
    try:
        while todo or pending:
            while todo and executor.free() > 0:
                round_, config = todo.pop(0)
                meta: dict[str, Any] = {"phase": PHASE, "round": round_}
                if default is not None and config.key == default.key:
                    meta["default"] = True
                candidate = Candidate(next_id, config, config, meta)
                next_id -= 1
                pending[candidate.id] = candidate
                executor.submit(candidate)
            for result in executor.collect(timeout=0.25):
                if store is not None:
                    store.record(result)
                pending.pop(result.id, None)
                results.append(result)
    except KeyboardInterrupt:
        return results, False
    return results, True


def _values(results: Sequence[Result]) -> list[float]:
    """Pooled samples when they are draws of the objective, else one objective per round."""
    values: list[float] = []
    for r in results:
        m = r.measurement
        if samples_are_objective(m):
            values.extend(m.samples)
        elif m.objective is not None:
            values.append(m.objective)
    return values


def _entry(mine: Sequence[Result]) -> dict[str, Any]:
    """Counts, pooled median and its 95 % interval of one configuration's confirmations."""
    ok = [r for r in mine if r.ok]
    values = _values(ok)
    entry: dict[str, Any] = {"measurements": len(mine), "failed": len(mine) - len(ok), "samples": len(values)}
    if values:
        lo, hi = median_ci(values)
        entry.update(median=float(statistics.median(values)), ci95=[lo, hi], cv=Samples(tuple(values)).cv)
    return entry


def _by_round(results: Iterable[Result]) -> dict[int, Result]:
    return {int(r.candidate.meta.get("round", -1)): r for r in results if r.ok and r.objective is not None}


def ratio_interval(ratios: Sequence[float]) -> dict[str, Any]:
    """Median of paired ratios with its distribution-free 95 % interval (``median_ci``; with 5
    pairs that is their range, ≈ 94 % coverage)."""
    lo, hi = median_ci(ratios)
    return {"speedup": float(statistics.median(ratios)), "ci95": [lo, hi], "pairs": len(ratios)}


def speedup(default: float, other: float, direction: Direction) -> float:
    """How many times better ``other`` is than ``default`` (> 1: better), for either direction."""
    num, den = (default, other) if direction is Direction.MINIMIZE else (other, default)
    return num / den if den > 0 else math.inf


def paired_speedup(candidate: Sequence[Result], default: Sequence[Result], direction: Direction,
                   basis: str = "tuning") -> dict[str, Any] | None:
    """The candidate's speed-up over the default, paired by round (both measured in that round),
    in total (the objective) and per dataset where the measurements name datasets."""
    mine, base = _by_round(candidate), _by_round(default)
    rounds = sorted(set(mine) & set(base))
    if not rounds:
        return None
    out = {"basis": basis, **ratio_interval([speedup(base[n].objective, mine[n].objective, direction)  # type: ignore[arg-type]
                                             for n in rounds]), "datasets": {}}
    names = [d for d in mine[rounds[0]].measurement.datasets if d in base[rounds[0]].measurement.datasets]
    for d in names:
        ratios = [speedup(base[n].measurement.datasets[d], mine[n].measurement.datasets[d], Direction.MINIMIZE)
                  for n in rounds if d in mine[n].measurement.datasets and d in base[n].measurement.datasets]
        out["datasets"][d] = ratio_interval(ratios)
    return out


def recommended(comparison: Mapping[str, Any] | None) -> bool:
    """Whether a tuned configuration measurably beats the default: the lower end of the paired
    95 % interval of its speed-up is above 1 (never worse than doing nothing)."""
    return comparison is not None and float(comparison["ci95"][0]) > 1.0


def confirm_report(search: Sequence[Result], confirmations: Sequence[Result], direction: Direction,
                   options: ConfirmConfig, complete: bool, default: Config | None = None) -> dict[str, Any]:
    """``summary.json``'s ``confirm`` section: every candidate, the confirmed best, the default and
    the confirmed best's paired speed-up over it (``versus_default``)."""
    candidates = []
    exclude = default.key if default is not None else None
    for rank, found in enumerate(top_k(search, direction, options.k, exclude), start=1):
        mine = [r for r in confirmations if r.config.key == found.config.key]
        candidates.append({"rank": rank, "config": dict(found.config), "search_objective": found.objective,
                           **_entry(mine)})
    measured = [c for c in candidates if "median" in c]
    sign = 1.0 if direction is Direction.MINIMIZE else -1.0
    best = min(measured, key=lambda c: (sign * c["median"], c["rank"])) if measured else None
    report = {"k": options.k, "rounds": options.rounds, "complete": complete, "candidates": candidates,
              "best": best, "search_best_confirmed": bool(best and best["rank"] == 1),
              "default": None, "versus_default": None}
    if default is not None:
        base = [r for r in confirmations if r.config.key == default.key]
        report["default"] = {"config": dict(default), **_entry(base)}
        if best is not None:
            mine = [r for r in confirmations if r.config.key == Config(best["config"]).key]
            report["versus_default"] = paired_speedup(mine, base, direction)
    return report


def noise_report(results: Sequence[Result]) -> dict[str, Any] | None:
    """The noise of a run's measurements: median CV of the measurements with >= 2 samples."""
    cvs = [Samples(r.measurement.samples).cv for r in results if r.ok and len(r.measurement.samples) >= 2]
    if not cvs:
        return None
    return {"median_cv": float(statistics.median(cvs)), "max_cv": float(max(cvs)), "measurements": len(cvs),
            "median_samples": float(statistics.median(len(r.measurement.samples) for r in results
                                                      if r.ok and len(r.measurement.samples) >= 2))}


def confirm_after_search(executor: Executor, search: Sequence[Result], prior: Sequence[Result],
                         direction: Direction, options: ConfirmConfig, noisy: bool,
                         store: Recorder | None = None, default: Config | None = None) -> Mapping[str, Any] | None:
    """The app's one call: run the phase if enabled, return the ``confirm`` summary section.

    Exact (not noisy) problems run no phase; one with a default gets it measured once, if the
    search did not, and an exact comparison (:func:`exact_versus_default`)."""
    if not options.enabled(noisy):
        if default is None or noisy or options.k == 0 or options.rounds == 0:
            return None
        return exact_versus_default(executor, [*search, *prior], direction, options, default, store)
    started = time.time()
    confirmations, complete = run_confirm(executor, search, prior, direction, options, store, default)
    report = confirm_report(search, confirmations, direction, options, complete, default)
    return {**report, "wall_time_s": time.time() - started}


def exact_versus_default(executor: Executor, search: Sequence[Result], direction: Direction,
                         options: ConfirmConfig, default: Config, store: Recorder | None) -> dict[str, Any]:
    """A deterministic problem's best against its default: one measurement each is exact, so the
    interval is the point (a ratio of 1 is "no gain")."""
    started = time.time()
    measured = [r for r in search if r.config.key == default.key and r.ok]
    complete = True
    if not measured:
        done, complete = run_confirm(executor, [], [], direction, ConfirmConfig(k=0, rounds=1), store, default)
        measured = [r for r in done if r.ok]
    top = top_k(search, direction, 1, default.key)
    report: dict[str, Any] = {"k": 1, "rounds": 0, "complete": complete, "candidates": [], "best": None,
                              "search_best_confirmed": False, "exact": True,
                              "default": {"config": dict(default), **_entry(measured[:1])}, "versus_default": None}
    if top:
        best = top[0]
        report["best"] = {"rank": 1, "config": dict(best.config), "search_objective": best.objective,
                          **_entry([best])}
        if measured:
            pair = [replace_round(best), replace_round(measured[0])]
            report["versus_default"] = paired_speedup([pair[0]], [pair[1]], direction, basis="tuning (exact)")
    return {**report, "wall_time_s": time.time() - started}


def replace_round(result: Result, round_: int = 0) -> Result:
    """``result`` as confirmation round ``round_`` (pairs a search measurement with the default's)."""
    meta = {**result.candidate.meta, "round": round_}
    return dataclasses.replace(result, candidate=dataclasses.replace(result.candidate, meta=meta))
