"""Replay many cells of a study in one process: the batched path of ``mode: replay`` (issue 23, item 3).

Why: a cell run through the whole run lifecycle (a run directory, a ``results.db``, a summary,
the driver copying its rows) costs about 1.5 s, where the search itself takes milliseconds. Here a
Ray task gets a batch of cells (:func:`replay_batch`) and replays each in process:

- the problem is built once per process and configuration (:func:`fresh_problem`): a replayed
  table is parsed once per worker, and each seed gets a copy with its own noise seed
  (``TableProblem.reseeded``); other problems are built per cell, as a run builds them;
- the searcher is built from the cell's composed config exactly as :func:`searchlab.run.prepare.prepare`
  builds it (same seed, same options, same prior), and driven by :func:`searchlab.api.optimize` with
  the serial executor and no store, so its trajectory is the one a run directory would record;
- the task writes nothing: it returns each replay as a :class:`searchlab.core.store.RunRecord` (frozen,
  its evaluations encoded as plain values, in the records format of every run: issue 52) and the driver
  alone writes them into the study's records file (:class:`searchlab.core.store.RecordWriter`), so a
  retried task (issue 24) duplicates nothing.

What a run directory holds besides these records (a confirm phase, ``finalize``'s report, a plot)
is not made on this path; ``run_dirs: true`` makes it (docs/study.md).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from searchlab.core.problem import Problem
from searchlab.core.store import RunRecord
from searchlab.study.execution.cells import Cell

_PROTOTYPES: dict[str, Problem] = {}  # per process: a replayed table's problem, built once per config and file
_OPTIMA: dict[int, tuple[Any, float | None]] = {}  # id(table) -> (table, its optimum), per process


def prototypes(cells: Sequence[Cell]) -> dict[str, Problem]:
    """The tables this process has parsed for ``cells`` (by :func:`fresh_problem`'s key): the
    driver sends them to its Ray tasks once (the object store), so no worker parses them again."""
    keys = {_proto_key(c.cfg["problem"]) for c in cells}
    return {k: p for k, p in _PROTOTYPES.items() if k in keys}


def _proto_key(node: Mapping[str, Any]) -> str:
    return json.dumps({k: v for k, v in node.items() if k != "noise_seed"}, sort_keys=True, default=str) + _stamp(node)


def parsed_table(node: Mapping[str, Any]) -> Any:
    """The table this process parsed for a problem config like ``node`` (its noise seed aside;
    the file unchanged since), or None: the report reuses it instead of parsing it again."""
    proto = _PROTOTYPES.get(_proto_key(node))
    return getattr(proto, "table", None)


def cell_key(cell: Cell) -> str:
    return f"{cell.problem}/{cell.searcher}/seed_{cell.seed}"


def _stamp(options: Mapping[str, Any]) -> str:
    path = options.get("path")
    if isinstance(path, str) and os.path.isfile(path):
        st = os.stat(path)
        return f"{st.st_size}:{st.st_mtime_ns}"
    return ""


def fresh_problem(node: Mapping[str, Any], seed: int) -> tuple[Problem, dict[str, Any]]:
    """The problem a run of ``seed`` builds from ``node`` (its config), and those seeded options."""
    from searchlab.adapters.table import TableProblem
    from searchlab.recompose import build_problem, registered_class
    from searchlab.run.prepare import seeded_options

    seeded = seeded_options(node, seed)
    cls = registered_class("problem", node.get("_target_"), "problem")
    if not (isinstance(cls, type) and issubclass(cls, TableProblem)):
        return build_problem(seeded), seeded
    key = _proto_key(node)
    proto = _PROTOTYPES.get(key)
    if proto is None:
        proto = _PROTOTYPES[key] = build_problem({**seeded, "noise_seed": 0})
    assert isinstance(proto, TableProblem)
    return proto.reseeded(int(seeded.get("noise_seed") or 0)), seeded


def replay_cell(cell: Cell, versions: Mapping[str, str], node: str) -> RunRecord:
    """Replay one cell in process (module docstring); nothing is written. The parts are built by the
    run's own first step (:func:`searchlab.run.prepare.build_parts`) and driven by
    :func:`searchlab.api.optimize`, the run lifecycle in memory."""
    from searchlab.api import optimize
    from searchlab.run.prepare import build_parts

    started, clock = time.time(), time.perf_counter()
    cfg = dict(cell.cfg)
    problem, seeded = fresh_problem(cfg["problem"], cell.seed)
    cfg["problem"] = seeded
    parts = build_parts({**cfg, "executor": _no_alarm(cfg["executor"], problem)}, problem=problem,
                        names=(cell.problem, cell.searcher))
    try:
        outcome = optimize(problem, parts.searcher, parts.budget, executor=parts.executor, started=False,
                           cache=parts.cache)
        if outcome.reason.value == "interrupted":  # Ctrl-C: this run was in flight, it is not a finished cell
            raise KeyboardInterrupt
    finally:
        if parts.cache is not None:
            parts.cache.close()
    devices = outcome.devices
    fingerprint = problem.fingerprint([str(d.get("name", "")) for d in devices])
    return RunRecord(
        name=cell_key(cell), problem=cell.problem, searcher=cell.searcher, seed=cell.seed, config=cfg,
        direction=problem.direction.value, objective_name=problem.objective_name, fingerprint=fingerprint,
        known_optimum=_optimum(problem), versions=dict(versions), devices=tuple(devices), node=node,
        stop_reason=outcome.reason.value, started=started, ended=started + time.perf_counter() - clock,
        evaluations=RunRecord.encode(outcome.results))


def _no_alarm(node: Mapping[str, Any], problem: Problem) -> dict[str, Any]:
    """A table look-up cannot hang: no per-evaluation timer (two signal calls per evaluation) for
    a replayed table; the stored config keeps the executor's options as composed."""
    from searchlab.adapters.table import TableProblem

    return {**node, "timeout_s": None} if isinstance(problem, TableProblem) else dict(node)


def _optimum(problem: Problem) -> float | None:
    """The problem's known optimum; a replayed table's is found once per table and process."""
    table = getattr(problem, "table", None)
    if table is not None and id(table) in _OPTIMA and _OPTIMA[id(table)][0] is table:
        return _OPTIMA[id(table)][1]
    try:
        value = problem.known_optimum
    except Exception:
        value = None
    if table is not None:
        _OPTIMA[id(table)] = (table, value)
    return value


def replay_batch(cells: Sequence[Cell], cwd: str, known: Mapping[str, Problem] | None = None) -> list[RunRecord]:
    """A Ray task: replay ``cells`` one after another in this worker; return their records.

    ``known``: tables the driver parsed already (:func:`prototypes`), used instead of parsing."""
    from searchlab.core.store import package_versions
    from searchlab.core.threads import limit_pools
    from searchlab.run.cluster import current_node

    limit_pools()  # this task's num_cpus, whatever the worker inherited (docs/threads.md)
    if os.path.isdir(cwd):  # relative paths in problem configs mean what they meant to the driver
        os.chdir(cwd)
    for key, problem in (known or {}).items():
        _PROTOTYPES.setdefault(key, problem)
    versions, node = package_versions(), current_node()
    return [replay_cell(cell, versions, node) for cell in cells]
