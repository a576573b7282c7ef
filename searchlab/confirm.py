"""The confirm phase: re-measure the best k configurations at the end of a run.

A search keeps the configuration whose *one* measurement was best, and the minimum of many
noisy measurements is biased low (the winner's curse): the reported best is often a lucky
draw. Like a careful benchmark report, the run ends by re-measuring the best ``k``
configurations, interleaved round-robin for ``rounds`` rounds on the run's own workers (so a
slow phase of the machine hits every candidate alike), and reports the confirmed best: the
candidate with the best median over its pooled confirmation samples, with that median's 95 %
interval (docs/measurement.md, "Confirm phase").

Confirmation measurements are recorded in ``results.db`` (negative candidate ids and
``meta.phase = "confirm"``), never told to the searcher and never charged to the budget. A
resumed run whose confirm phase was interrupted re-measures only the (round, configuration)
pairs it has no record of.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from searchlab.errors import ConfigError
from searchlab.execution import Executor
from searchlab.measure import Samples, median_ci
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


def top_k(results: Iterable[Result], direction: Direction, k: int) -> list[Result]:
    """The ``k`` best distinct configurations the search measured (first measurement wins ties)."""
    best: dict[str, Result] = {}
    for r in results:
        if is_confirmation(r) or not math.isfinite(loss(r.measurement, direction)):
            continue
        known = best.get(r.config.key)
        if known is None or loss(r.measurement, direction) < loss(known.measurement, direction):
            best[r.config.key] = r
    ranked = sorted(best.values(), key=lambda r: (loss(r.measurement, direction), r.id))
    return ranked[:k]


def plan(top: Sequence[Result], rounds: int, done: Iterable[Result]) -> list[tuple[int, Config]]:
    """(round, configuration) pairs still to measure, round-robin: round 0 of every
    candidate, then round 1, ... Pairs with a record (an interrupted phase) are skipped."""
    have = {(int(r.candidate.meta.get("round", -1)), r.config.key) for r in done}
    return [(n, r.config) for n in range(rounds) for r in top if (n, r.config.key) not in have]


def run_confirm(executor: Executor, search: Sequence[Result], prior: Sequence[Result], direction: Direction,
                options: ConfirmConfig, store: Recorder | None = None) -> tuple[list[Result], bool]:
    """Measure the plan on ``executor``; returns (every confirmation result, completed).

    ``prior``: confirmation results already recorded (resume). An interrupt (Ctrl-C) ends
    the phase early; what was measured is kept and reported.
    """
    top = top_k(search, direction, options.k)
    todo = plan(top, options.rounds, prior)
    results = list(prior)
    next_id = min([r.id for r in prior] + [0]) - 1
    pending: dict[int, Candidate] = {}
    try:
        while todo or pending:
            while todo and executor.free() > 0:
                round_, config = todo.pop(0)
                candidate = Candidate(next_id, config, config, {"phase": PHASE, "round": round_})
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


def confirm_report(search: Sequence[Result], confirmations: Sequence[Result], direction: Direction,
                   options: ConfirmConfig, complete: bool) -> dict[str, Any]:
    """``summary.json``'s ``confirm`` section: every candidate and the confirmed best."""
    candidates = []
    for rank, found in enumerate(top_k(search, direction, options.k), start=1):
        mine = [r for r in confirmations if r.config.key == found.config.key]
        ok = [r for r in mine if r.ok]
        values = _values(ok)
        entry: dict[str, Any] = {"rank": rank, "config": dict(found.config), "search_objective": found.objective,
                                 "measurements": len(mine), "failed": len(mine) - len(ok), "samples": len(values)}
        if values:
            lo, hi = median_ci(values)
            entry.update(median=float(statistics.median(values)), ci95=[lo, hi], cv=Samples(tuple(values)).cv)
        candidates.append(entry)
    measured = [c for c in candidates if "median" in c]
    sign = 1.0 if direction is Direction.MINIMIZE else -1.0
    best = min(measured, key=lambda c: (sign * c["median"], c["rank"])) if measured else None
    return {"k": options.k, "rounds": options.rounds, "complete": complete, "candidates": candidates,
            "best": best, "search_best_confirmed": bool(best and best["rank"] == 1)}


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
                         store: Recorder | None = None) -> Mapping[str, Any] | None:
    """The app's one call: run the phase if enabled, return the ``confirm`` summary section."""
    if not options.enabled(noisy):
        return None
    started = time.time()
    confirmations, complete = run_confirm(executor, search, prior, direction, options, store)
    report = confirm_report(search, confirmations, direction, options, complete)
    return {**report, "wall_time_s": time.time() - started}
