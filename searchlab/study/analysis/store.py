"""The study store: every batched replay of a study in one SQLite file, ``<study>/replays.db``.

Why one store (issue 23, item 3): a ``results.db`` and a summary per replay cost more than the
replay. The driver alone writes here (searchlab.study.execution.replay, through
:class:`searchlab.study.execution.store.StudyStore`; this module is the format and the reader): each task's records go in with one
transaction (batched ``executemany``), a cell's row and its evaluations together, so a killed
driver leaves every cell complete or absent. A cell is keyed ``problem/searcher/seed_N``: writing
one again (a retried task, a second driver) replaces its evaluations, never appends; a study run
again into the same directory skips the cells already here (``StudyStore.done``).

Records are data: JSON columns are parsed, never instantiated; the reader
(:func:`read_store`) gives the same :class:`searchlab.study.analysis.collect.RunData` a run directory
gives, so reports, tests and splits read either.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searchlab.core.records import Direction
from searchlab.core.store import sqlite_uri
from searchlab.errors import ConfigError

STORE_NAME = "replays.db"
STORE_VERSION = "1"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
    key TEXT PRIMARY KEY, problem TEXT NOT NULL, searcher TEXT NOT NULL, seed INTEGER NOT NULL,
    fingerprint TEXT NOT NULL, direction TEXT NOT NULL, objective_name TEXT NOT NULL, known_optimum REAL,
    config TEXT NOT NULL, versions TEXT NOT NULL, devices TEXT NOT NULL, node TEXT NOT NULL,
    stop_reason TEXT NOT NULL, status TEXT NOT NULL, wall_time_s REAL, evaluations INTEGER NOT NULL,
    written REAL NOT NULL);
CREATE TABLE IF NOT EXISTS evaluations (
    cell TEXT NOT NULL, idx INTEGER NOT NULL, config TEXT NOT NULL, objective REAL, recorded REAL,
    status TEXT NOT NULL, failure_mode TEXT NOT NULL, charged REAL NOT NULL, subproblem INTEGER NOT NULL,
    PRIMARY KEY (cell, idx)) WITHOUT ROWID;
"""
CELL_COLUMNS = ("key", "problem", "searcher", "seed", "fingerprint", "direction", "objective_name", "known_optimum",
                 "config", "versions", "devices", "node", "stop_reason", "status", "wall_time_s", "evaluations",
                 "written")


def find_stores(paths: Iterable[str | Path]) -> list[Path]:
    """Study stores (``replays.db``) under each path: the file itself, or searched recursively."""
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_file() and path.name == STORE_NAME:
            found[path.resolve()] = None
        elif path.is_dir():
            for db in sorted(path.rglob(STORE_NAME)):
                found[db.resolve()] = None
    return list(found)


def _losses(rows: Sequence[tuple[Any, ...]], direction: Direction) -> np.ndarray:
    """A study's loss per evaluation: the recorded objective of a success (signed), +inf otherwise
    (as searchlab.study.analysis.collect scores a run directory's evaluations)."""
    sign = 1.0 if direction is Direction.MINIMIZE else -1.0
    out = np.full(len(rows), math.inf)
    for i, (objective, recorded, status, _, _, subproblem) in enumerate(rows):
        value = recorded if recorded is not None else objective
        if status == "ok" and value is not None and not subproblem:
            out[i] = sign * float(value)
    return out


def read_store(path: Path, run_data: Any) -> list[Any]:
    """Every cell of ``path`` as the study's ``run_data`` class (searchlab.study.analysis.collect.RunData,
    passed in: the reader imports this module, not the other way round)."""
    try:
        conn = sqlite3.connect(sqlite_uri(path, "ro"), uri=True, timeout=30.0)
    except sqlite3.Error as exc:
        raise ConfigError(f"study: {str(path)!r} cannot be opened ({exc})") from None
    try:
        cells = conn.execute(f"SELECT {', '.join(CELL_COLUMNS)} FROM cells ORDER BY key").fetchall()
        runs = []
        for row in cells:
            info = dict(zip(CELL_COLUMNS, row))
            evals = conn.execute("SELECT objective, recorded, status, failure_mode, charged, subproblem FROM evaluations"
                                 " WHERE cell=? ORDER BY idx", (info["key"],)).fetchall()
            runs.append(_run_data(run_data, path, info, evals))
        return runs
    except (sqlite3.DatabaseError, ValueError, KeyError) as exc:
        raise ConfigError(f"study: {str(path)!r} is not a readable study store ({exc})") from None
    finally:
        conn.close()


def _run_data(cls: Any, path: Path, info: dict[str, Any], evals: Sequence[tuple[Any, ...]]) -> Any:
    direction = Direction(info["direction"])
    kept = [e for e in evals if e[2] != "infeasible"]  # known-infeasible proposals are not on the evaluations axis
    devices = json.loads(info["devices"])
    return cls(
        path=Path(f"{path}#{info['key']}"), problem=str(info["problem"]), searcher=str(info["searcher"]),
        seed=int(info["seed"]), fingerprint=str(info["fingerprint"]), direction=direction,
        objective_name=str(info["objective_name"]),
        known_optimum=None if info["known_optimum"] is None else float(info["known_optimum"]),
        config=json.loads(info["config"]),
        devices=tuple(sorted(str(d.get("name", "")) for d in devices if isinstance(d, dict))),
        status=str(info["status"]), stop_reason=str(info["stop_reason"]),
        losses=_losses(kept, direction), charged=np.array([float(e[4]) for e in kept], dtype=float),
        statuses=tuple(str(e[2]) for e in kept), modes=tuple(str(e[3]) if e[2] != "ok" else "none" for e in kept),
        wall_time_s=info["wall_time_s"], infeasible=len(evals) - len(kept),
        nodes={str(info["node"]): len(evals)})
