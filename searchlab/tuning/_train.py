"""The inner replays of ``problem=searcher_settings``: one searcher, one table, one seed.

Why a path of its own: the settings problem runs hundreds of replays per evaluation (tables x
seeds), so each must cost what the search costs, not what a run costs (issue 23, item 3: a run
from the CLI spends ~2.7 s on Hydra, imports and a second parse of the table around a search of a
few milliseconds). Here a table is parsed once per process (:func:`searchlab.interchange.open_table` caches
it by path, size and modification time, so a Ray worker parses it once for all the tasks it runs), and a replay
is :func:`searchlab.api.optimize` with the serial executor and no store: no Hydra, no run directory.

A replay is deterministic given (searcher, settings, table, seed, budget): the searcher is seeded,
the table replays its recorded objective (no sample noise), and the serial executor evaluates in
proposal order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searchlab.core.records import Direction, Status, loss
from searchlab.errors import ConfigError
from searchlab.interchange import open_table
from searchlab.interchange.table import Table


def train_table(path: str | Path) -> Table:
    """The table of one training file (any format :func:`searchlab.interchange.open_table` reads, which
    parses it once per process), with an optimum to score against."""
    table: Table = open_table(path, "problem.train")
    if table.best() is None:
        raise ConfigError(f"problem.train: {str(path)!r} holds no successful measurement: no optimum to score against")
    return table


def replay(searcher: str, settings: Mapping[str, Any], path: str, seed: int, budget: int) -> list[float]:
    """The best-so-far loss after each of ``budget`` evaluations of one seeded replay (``inf`` until a success).

    A searcher that stops early keeps its last best to the end of the budget."""
    from searchlab import registry
    from searchlab.adapters.table import TableProblem
    from searchlab.api import optimize
    from searchlab.run.loop import Budget
    from searchlab.run.prepare import make_searcher
    from searchlab.study.analysis.metrics import best_so_far, extend

    table = train_table(path)
    problem = TableProblem(table=table)
    node = {"_target_": registry.entry("searcher", searcher).target, **dict(settings)}
    instance = make_searcher(node, problem, seed, searcher)  # the run's own door (searchlab.run.prepare)
    outcome = optimize(problem, instance, Budget(evaluations=budget))
    losses = [loss(r.measurement, table.direction) for r in outcome.results if r.measurement.status is not Status.INFEASIBLE]
    return [float(v) for v in extend(best_so_far(np.array(losses, dtype=float)), budget)]


def replay_many(searcher: str, settings: Mapping[str, Any], jobs: Sequence[tuple[str, int]],
                budget: int) -> list[list[float]]:
    """:func:`replay` for each (table, seed) of ``jobs`` in this process: one Ray task runs a chunk of
    them (:func:`chunks`), so a task's cost is paid once per chunk, not once per replay."""
    from searchlab.core.threads import limit_pools

    limit_pools()  # a Ray task's num_cpus, whatever the worker inherited (docs/threads.md)
    return [replay(searcher, settings, path, seed, budget) for path, seed in jobs]


def chunks(jobs: Sequence[tuple[str, int]], cores: int, per_core: int = 2) -> list[list[tuple[str, int]]]:
    """``jobs`` in table order cut into about ``per_core`` chunks per core: every core busy, and a
    chunk's replays mostly of one table (which the worker has parsed once)."""
    ordered = sorted(jobs)
    size = max(1, math.ceil(len(ordered) / (per_core * max(1, cores))))
    return [ordered[i:i + size] for i in range(0, len(ordered), size)]


def fraction_score(table: Table, curves: Sequence[Sequence[float]]) -> float:
    """Mean over runs of the mean fraction of the optimum over the budget's evaluations (1 = optimum from the start)."""
    from searchlab.study.analysis.metrics import fraction_of_peak

    best = table.best()
    assert best is not None
    reference = loss(best[1], table.direction)
    scores = [float(np.nanmean(fraction_of_peak(np.array(c), reference, table.direction))) for c in curves]
    return float(np.mean(scores))


def methodology(table: Table, curves: Sequence[Sequence[float]]) -> float:
    """Kernel Tuner's methodology score of the runs on this table (searchlab.study.analysis.methodology)."""
    from searchlab.study.analysis.methodology import methodology_score

    minimize = table.direction is Direction.MINIMIZE
    sign = 1.0 if minimize else -1.0
    values = np.array([m.objective if m.status is Status.OK and m.objective is not None else math.nan
                       for m in table.rows.values()], dtype=float)
    best = np.array(curves, dtype=float)
    best = np.where(np.isfinite(best), sign * best, np.nan)
    try:
        score, _, _ = methodology_score(values, minimize, best)
    except ValueError as exc:
        raise ConfigError(f"problem.score=methodology: table {table.source!r}: {exc}") from None
    return score


SCORES = {"fraction": fraction_score, "methodology": methodology}
