"""The one reader of records: every run of a records file, whoever wrote it (issue 52, "one record format").

A run directory's ``results.db`` holds one run; a study's and a reproduce's ``results.db`` hold many (the
batch writer's, :mod:`searchlab.core._batch`); a study made before issue 52 kept its cells in ``replays.db``
(its own schema, :data:`LEGACY_STORE`), read here as it is, never converted in place. Each run comes back as a
:class:`RecordedRun`: its ``runs`` row (JSON columns parsed, never instantiated: records are data) and its
search-phase evaluations as :class:`Outcomes`, the columns a study scores, read by SQLite (``json_extract``
of the one ``extra`` key it needs) rather than by decoding every measurement in Python: a study of 100,000
evaluations reads in well under a second. What a run's own readers need whole (resume, export, a run read
as a table) is :func:`searchlab.core.store.read_run`.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchlab.core._rows import check_cells, holds_many, read_connection, select_results
from searchlab.core.jsondata import TooDeep, loads
from searchlab.core.records import FailureMode, Result, Status
from searchlab.errors import ConfigError, StoreError

DB_NAME = "results.db"
LEGACY_STORE = "replays.db"  # a study's cells before issue 52
NAMES = (DB_NAME, LEGACY_STORE)
JSON_COLUMNS = ("config", "space", "versions", "devices", "nodes")


@dataclass(frozen=True)
class Outcomes:
    """A run's search-phase evaluations, column by column, in recorded (= told) order."""

    objective: tuple[float | None, ...]  # what the searcher was shown
    recorded: tuple[float | None, ...]  # a replay's recorded objective where it showed a drawn sample
    status: tuple[str, ...]
    failure_mode: tuple[str, ...]
    charged: tuple[float, ...]  # seconds charged to the budget
    subproblem: tuple[bool, ...]  # a sub-problem's measurement: never the run's best
    node: tuple[str, ...]  # the Ray node that evaluated it ("" unknown)


@dataclass(frozen=True)
class RecordedRun:
    """One run of a records file: where it is, its ``runs`` row (``info``) and its :class:`Outcomes`."""

    source: Path  # the records file
    name: str
    info: Mapping[str, Any]
    outcomes: Outcomes
    many: bool  # the file holds many runs: the run is ``source#name``, not a run directory

    @property
    def location(self) -> Path:
        """What names the run: its run directory, or ``FILE#NAME`` for a run of a file of many."""
        return Path(f"{self.source}#{self.name}") if self.many else self.source.parent

    @property
    def wall_time_s(self) -> float | None:
        info = self.info
        if info.get("wall_time_s") is not None:
            return float(info["wall_time_s"])
        if self.many and info.get("ended") and info.get("started"):
            return float(info["ended"]) - float(info["started"])
        return None


def find_records(paths: Iterable[str | Path]) -> list[Path]:
    """Every records file under ``paths``: a ``results.db`` or ``replays.db`` given as a file, a run directory
    (its ``results.db``), or any directory searched recursively. Anything else is one ConfigError line."""
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_file() and path.name in NAMES:
            found[path.resolve()] = None
        elif path.is_dir():
            for db in sorted(p for name in NAMES for p in path.rglob(name)):
                found[db.resolve()] = None
        else:
            raise ConfigError(f"{str(path)!r} is neither a directory nor a {DB_NAME} file")
    return list(found)


def read_runs(path: str | Path) -> list[RecordedRun]:
    """Every run of one records file (``path``: the file, or a directory holding ``results.db``), in the order
    written; a file that is not a readable searchlab records file is one StoreError line naming it."""
    db = Path(path)
    db = db / DB_NAME if db.is_dir() else db
    if not db.is_file():
        raise StoreError(f"{path}: no {DB_NAME}")
    try:
        conn = read_connection(db)
    except sqlite3.Error as exc:
        raise StoreError(f"{db} is not a readable searchlab database ({exc})") from None
    try:
        check_cells(conn, db)
        tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "cells" in tables:
            return _legacy(conn, db)
        return _runs(conn, db, "meta" in tables)
    except (sqlite3.DatabaseError, TypeError, ValueError, KeyError) as exc:
        raise StoreError(f"{db} is not a readable searchlab database ({type(exc).__name__}: {str(exc)[:120]})") from None
    finally:
        conn.close()


def _runs(conn: sqlite3.Connection, db: Path, has_meta: bool) -> list[RecordedRun]:
    conn.row_factory = sqlite3.Row
    try:
        rows = [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY id")]
    finally:
        conn.row_factory = None
    many = len(rows) > 1 or (has_meta and _meta(conn, "records") == "runs")
    columns = _outcomes(conn, db)
    out = []
    for row in rows:
        info = _parsed(row, db)
        if not many:
            info["inputs"] = _inputs(conn, db) if has_meta else None
        name = str(row.get("name") or "") if many else db.parent.name
        out.append(RecordedRun(db, name, info, columns.get(int(row["id"]), _EMPTY), many))
    return out


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _parsed(row: dict[str, Any], db: Path) -> dict[str, Any]:
    for key in JSON_COLUMNS:
        if row.get(key):
            try:
                row[key] = loads(row[key])
            except ValueError as exc:
                why = str(exc) if isinstance(exc, TooDeep) else f"not JSON ({str(row[key])[:40]!r})"
                raise StoreError(f"{db}: runs.{key} is {why}; the record is damaged") from None
    return row


def _inputs(conn: sqlite3.Connection, db: Path) -> dict[str, Any] | None:
    text = _meta(conn, "inputs")
    try:
        value = loads(text) if text else None
    except ValueError as exc:
        why = str(exc) if isinstance(exc, TooDeep) else "not JSON"
        raise StoreError(f"{db}: meta.inputs is {why}; the record is damaged") from None
    return value if isinstance(value, dict) else None


_EMPTY = Outcomes((), (), (), (), (), (), ())
_FALSE = (None, 0, 0.0, "", "[]", "{}")


def _outcomes(conn: sqlite3.Connection, db: Path) -> dict[int, Outcomes]:
    """Every run's search-phase evaluations (confirm-phase rows have negative candidate ids), by run id."""
    node = "COALESCE(node, '')" if "node" in {str(r[1]) for r in conn.execute("PRAGMA table_info(evaluations)")} \
        else "''"  # schema 1: where it ran is unknown
    try:
        rows = conn.execute(
            "SELECT run_id, objective, json_extract(extra, '$.recorded_objective'), status, failure_mode,"
            " COALESCE(charged_s, COALESCE(compile_s, 0) + COALESCE(run_s, 0)),"
            f" json_extract(extra, '$.subproblem'), {node} FROM evaluations WHERE candidate_id >= 0 ORDER BY id")
        by_run: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
        for r in rows:
            by_run[int(r[0])].append(r[1:])
    except sqlite3.OperationalError as exc:  # malformed JSON in extra
        raise StoreError(f"{db}: an evaluation's extra cannot be read ({exc}); the record is damaged") from None
    return {run: _columns(found, db) for run, found in by_run.items()}


_STATUSES = frozenset(s.value for s in Status)
_MODES = frozenset(m.value for m in FailureMode)


def _columns(rows: Sequence[tuple[Any, ...]], db: Path) -> Outcomes:
    objective, recorded, status, mode, charged, sub, node = zip(*rows)
    for value, known, what in ((status, _STATUSES, "status"), (mode, _MODES, "failure mode")):
        bad = set(value) - known
        if bad:
            raise StoreError(f"{db}: an evaluation's {what} {sorted(map(str, bad))[0]!r} is not one of "
                             f"{sorted(known)}; the record is damaged")
    try:
        return Outcomes(
            tuple(None if v is None else float(v) for v in objective),
            tuple(None if v is None else float(v) for v in recorded), tuple(map(str, status)), tuple(map(str, mode)),
            tuple(float(v or 0.0) for v in charged), tuple(v not in _FALSE for v in sub), tuple(map(str, node)))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{db}: an evaluation cannot be read ({exc}); the record is damaged") from None


LEGACY_CELLS = ("key", "problem", "searcher", "seed", "fingerprint", "direction", "objective_name", "known_optimum",
                "config", "versions", "devices", "node", "stop_reason", "status", "wall_time_s", "evaluations",
                "written")


def _legacy(conn: sqlite3.Connection, db: Path) -> list[RecordedRun]:
    """A study store of before issue 52 (``replays.db``: ``cells`` and compact ``evaluations``), read as is."""
    out = []
    cells = conn.execute(f"SELECT {', '.join(LEGACY_CELLS)} FROM cells ORDER BY key").fetchall()
    for row in cells:
        info = _parsed({**dict(zip(LEGACY_CELLS, row)), "name": row[0]}, db)
        info["nodes"] = [info["node"]] if info["node"] else []
        evals = conn.execute("SELECT objective, recorded, status, failure_mode, charged, subproblem, ? FROM evaluations"
                             " WHERE cell=? ORDER BY idx", (str(info["node"]), info["key"])).fetchall()
        out.append(RecordedRun(db, str(info["key"]), info, _columns(evals, db) if evals else _EMPTY, True))
    return out


def read_run(run_dir: str | Path, name: str | None = None) -> tuple[dict[str, Any], list[Result]]:
    """A run's row and its results, whole (resume, export, a run read as a table); ``name``: which run of a
    records file of many (a study's, a reproduce's). A study reads runs through :func:`read_runs`."""
    path = Path(run_dir) / DB_NAME
    if not path.is_file():
        raise StoreError(f"{run_dir}: no {DB_NAME}")
    try:
        conn = read_connection(path)
    except sqlite3.Error as exc:
        raise StoreError(f"{path} is not a readable searchlab database ({exc})") from None
    try:
        check_cells(conn, path)
        run_id = _run_id(conn, path, name)
        conn.row_factory = sqlite3.Row
        try:
            info = _parsed(dict(conn.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()), path)
        finally:
            conn.row_factory = None
        info["inputs"] = _inputs(conn, path) if _has_meta(conn) else None
        return info, select_results(conn, path, run_id, "candidate_id >= 0")
    except (sqlite3.DatabaseError, TypeError) as exc:
        raise StoreError(f"{path} is not a readable searchlab database ({exc})") from None
    finally:
        conn.close()


def _run_id(conn: sqlite3.Connection, path: Path, name: str | None) -> int:
    if name is not None:
        row = conn.execute("SELECT id FROM runs WHERE name=?", (name,)).fetchone()
        if row is None:
            raise StoreError(f"{path}: holds no run named {name!r}")
        return int(row[0])
    if holds_many(conn):
        count = int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
        raise StoreError(f"{path}: holds the records of {count} runs (a study's or a reproduce's), not one run "
                         f"directory's; read it with searchlab.study, or name one run")
    return int(conn.execute("SELECT id FROM runs ORDER BY id LIMIT 1").fetchone()[0])


def _has_meta(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone() is not None


def node_counts(run_dir: str | Path) -> dict[str, int]:
    """Evaluations of a run per node ("" for unknown: a schema-1 run or one outside Ray)."""
    path = Path(run_dir) / DB_NAME
    conn = read_connection(path)
    try:
        if "node" not in {str(r[1]) for r in conn.execute("PRAGMA table_info(evaluations)")}:
            return {"": int(conn.execute("SELECT COUNT(*) FROM evaluations WHERE candidate_id >= 0").fetchone()[0])}
        rows = conn.execute("SELECT COALESCE(node, ''), COUNT(*) FROM evaluations WHERE candidate_id >= 0"
                            " GROUP BY 1").fetchall()
        return {str(n): int(c) for n, c in rows}
    finally:
        conn.close()
