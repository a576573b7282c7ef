"""Durable run records: one SQLite database (WAL) per run directory, ``results.db``.

Every finished evaluation is committed before the searcher hears of it (the loop calls
:meth:`RunStore.record` first), so a SIGKILL loses nothing that finished. WAL with
``synchronous=NORMAL`` survives a killed process; it would take a power cut to lose the
last commits. A resumed run appends a row to ``sessions`` and continues the same run.

Schema 2 (issue 24) adds where work ran: ``evaluations.node`` (the Ray node id of the
process that evaluated it; empty outside Ray) and ``runs.nodes`` (the distinct nodes, set
when the run finishes). A schema-1 database is read as is (its nodes are unknown) and is
migrated in place (two ``ALTER TABLE ... ADD COLUMN``) when it is opened to resume.

Confirm-phase measurements (searchlab.run.confirm) are rows of ``evaluations`` with negative
candidate ids (``meta.phase = "confirm"``): :meth:`RunStore.results` (what the searcher is
replayed on resume, what studies read) leaves them out, :meth:`RunStore.confirmations` has them.

The one record format (issue 52): the same schema holds one run (this store's, a run directory) or many
(a study's cells, a reproduce's repeats), written whole by :class:`RecordWriter`
(:mod:`searchlab.core._batch`) and read, whoever wrote them, by :func:`read_runs`
(:mod:`searchlab.core._read`). This module is their public face.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from searchlab.core._batch import RecordWriter as RecordWriter
from searchlab.core._batch import RunRecord as RunRecord
from searchlab.core._read import LEGACY_STORE as LEGACY_STORE
from searchlab.core._read import Outcomes as Outcomes
from searchlab.core._read import RecordedRun as RecordedRun
from searchlab.core._read import find_records as find_records
from searchlab.core._read import node_counts as node_counts
from searchlab.core._read import read_run as read_run
from searchlab.core._read import read_runs as read_runs
from searchlab.core._rows import _SCHEMA as _SCHEMA
from searchlab.core._rows import INSERT_EVALUATION, check_cells, encode, holds_many, select_results, writable
from searchlab.core._rows import SCHEMA_VERSION as SCHEMA_VERSION
from searchlab.core._rows import is_disk_full as is_disk_full
from searchlab.core._rows import migrate as migrate
from searchlab.core._rows import read_connection as read_connection
from searchlab.core._rows import sqlite_uri as sqlite_uri
from searchlab.core.commands import override
from searchlab.core.jsondata import TooDeep, loads
from searchlab.core.records import Result
from searchlab.core.runlock import RunLock
from searchlab.errors import StoreError, WriteError

DB_NAME = "results.db"
# Space kept while a run writes and given back to write its final status when the disk fills up
# (issue 37, item 8: a full disk at the end left the run at 'running'); removed when the run closes.
RESERVE = ".results.db.reserve"
RESERVE_BYTES = 256 * 1024
READABLE_VERSIONS = (1, 2)  # schema 1: before the node columns (issue 24)

VERSIONED = ("searchlab", "numpy", "scipy", "ray", "optuna", "pyopencl", "hydra-core", "omegaconf")


def package_versions() -> dict[str, str]:
    import platform

    found = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def _no_node(worker: str) -> str:
    return ""


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str)


class RunStore:
    """The records of one run."""

    def __init__(self, path: Path, conn: sqlite3.Connection, run_id: int, session_id: int,
                 lock: RunLock | None = None) -> None:
        self.path, self._conn, self.run_id, self.session_id = path, conn, run_id, session_id
        self._lock = lock  # one writer per run (searchlab.core.runlock); None: read-only access
        self._reserve = path.with_name(RESERVE) if lock is not None else None
        if self._reserve is not None:
            self._reserve.write_bytes(bytes(RESERVE_BYTES))  # the disk is full: no run left at 'running'
        # worker name -> the node it runs on; the executor's (app.py sets it), "" when unknown
        self.node_of: Callable[[str], str] = _no_node

    @classmethod
    def create(cls, run_dir: str | Path, run: Mapping[str, Any], hydra_dir: str = "",
               inputs: Mapping[str, Any] | None = None) -> RunStore:
        """A new ``results.db`` in ``run_dir``; refuses to overwrite an existing one. ``inputs``:
        what the run read (content hashes; searchlab.run.inputs), checked by a resume."""
        path = Path(run_dir) / DB_NAME
        if path.exists():
            raise StoreError(f"{path} already exists: use {override('resume', run_dir)} to continue that run")
        conn: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(path)
            lock = RunLock(path)
            run_id = cls._insert_run(conn, run)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('inputs', ?)", (_dumps(dict(inputs or {})),))
            return cls(path, conn, run_id, cls._new_session(conn, run_id, hydra_dir), lock)
        except (sqlite3.Error, OSError) as exc:  # e.g. a full disk: leave no half-made database
            if conn is not None:
                conn.close()
            for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", RESERVE):
                path.with_name(name).unlink(missing_ok=True)
            error = WriteError if is_disk_full(exc) else StoreError  # a full disk: status 1, as documented
            what = "the disk is full" if is_disk_full(exc) else str(exc)
            raise error(f"{path} could not be created ({what}); nothing was kept; free space and run again") from None

    @staticmethod
    def _insert_run(conn: sqlite3.Connection, run: Mapping[str, Any]) -> int:
        conn.executescript(_SCHEMA)
        conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        cols = ("name", "problem", "searcher", "seed", "fingerprint", "direction", "objective_name",
                "known_optimum", "config", "space", "versions", "devices")
        values = [run.get(c) if not isinstance(run.get(c), (dict, list)) else _dumps(run.get(c)) for c in cols]
        cur = conn.execute(
            f"INSERT INTO runs ({', '.join(cols)}, host, started, status) VALUES ({', '.join('?' * len(cols))}, ?, ?, 'running')",
            (*values, socket.gethostname(), time.time()),
        )
        return int(cur.lastrowid or 1)

    @classmethod
    def open(cls, run_dir: str | Path, hydra_dir: str = "", inputs: Mapping[str, Any] | None = None,
             changed: str = "") -> RunStore:
        """An existing run, for resume (a new session row is added). ``changed``: the inputs that
        changed since the run was recorded and a ``resume_changed=true`` accepted; the new
        session's record says so (meta ``session:<id>:changed``) and ``inputs`` replaces the stored."""
        path = Path(run_dir) / DB_NAME
        if not path.is_file():
            raise StoreError(f"resume={run_dir}: no {DB_NAME} there")
        if not writable(path):  # read-only media: migrate and the session row would fail mid-way (issue 47, item 8)
            raise StoreError(f"resume={run_dir}: the run is on read-only media ({DB_NAME} or its directory is not "
                             f"writable); copy the run directory somewhere writable and resume the copy")
        lock = RunLock(path)  # before anything is written: a live writer is named, the run untouched
        try:
            conn = connect(path)
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            run = conn.execute("SELECT id FROM runs ORDER BY id LIMIT 1").fetchone()
            check_cells(conn, path)
            if holds_many(conn):
                raise StoreError(f"resume={run_dir}: {DB_NAME} holds the records of many runs (a study's or a "
                                 f"reproduce's); resume works on one run's directory")
        except StoreError:
            conn.close()
            lock.release()
            raise
        except sqlite3.DatabaseError as exc:
            lock.release()
            raise StoreError(f"resume={run_dir}: {DB_NAME} is not a readable searchlab database ({exc})") from None
        if row is None or int(row[0]) not in READABLE_VERSIONS or run is None:
            conn.close()
            lock.release()
            raise StoreError(f"resume={run_dir}: {DB_NAME} has no run of schema version {SCHEMA_VERSION}")
        migrate(conn)
        conn.execute("UPDATE runs SET status='running', ended=NULL WHERE id=?", (run[0],))
        try:
            store = cls(path, conn, int(run[0]), cls._new_session(conn, int(run[0]), hydra_dir), lock)
        except (OSError, sqlite3.Error) as exc:
            conn.close()
            lock.release()
            path.with_name(RESERVE).unlink(missing_ok=True)
            what = "the disk is full" if is_disk_full(exc) else str(exc)
            raise (WriteError if is_disk_full(exc) else StoreError)(
                f"resume={run_dir}: the run could not be reopened ({what}); its records are unchanged") from None
        if changed:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('inputs', ?)", (_dumps(dict(inputs or {})),))
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"session:{store.session_id}:changed", changed))
        return store

    @staticmethod
    def _new_session(conn: sqlite3.Connection, run_id: int, hydra_dir: str) -> int:
        cur = conn.execute("INSERT INTO sessions (run_id, pid, host, hydra_dir, started) VALUES (?, ?, ?, ?, ?)",
                           (run_id, os.getpid(), socket.gethostname(), hydra_dir, time.time()))
        return int(cur.lastrowid or 0)

    def run_info(self) -> dict[str, Any]:
        self._conn.row_factory = sqlite3.Row
        try:
            row = dict(self._conn.execute("SELECT * FROM runs WHERE id=?", (self.run_id,)).fetchone())
        finally:
            self._conn.row_factory = None
        for key in ("config", "space", "versions", "devices", "nodes"):
            if row.get(key):
                try:
                    row[key] = loads(row[key])
                except ValueError as exc:
                    why = str(exc) if isinstance(exc, TooDeep) else f"not JSON ({str(row[key])[:40]!r})"
                    raise StoreError(f"{self.path}: runs.{key} is {why}; the record is damaged") from None
        return row

    def update_config(self, config: Mapping[str, Any]) -> None:
        """A resumed session's config (its budget, executor, ...) as the run's (issue 37, item 11: a second
        resume without a budget override went back to the first budget: "stopped at 40 of 30")."""
        self._conn.execute("UPDATE runs SET config=? WHERE id=?", (_dumps(dict(config)), self.run_id))

    def inputs(self) -> dict[str, Any] | None:
        """What the run read when it was recorded (meta ``inputs``); None for a run from before."""
        row = self._conn.execute("SELECT value FROM meta WHERE key='inputs'").fetchone()
        try:
            value = loads(row[0]) if row else None
        except ValueError as exc:
            why = str(exc) if isinstance(exc, TooDeep) else "not JSON"
            raise StoreError(f"{self.path}: meta.inputs is {why}; the record is damaged") from None
        return value if isinstance(value, dict) else None

    def record(self, result: Result) -> None:
        """Insert one finished evaluation and commit (autocommit mode)."""
        try:
            self._conn.execute(INSERT_EVALUATION, (self.run_id, self.session_id, *encode(result),
                                                   self.node_of(result.worker) or None))
        except sqlite3.Error as exc:
            raise WriteError(self.write_failure(exc)) from None

    def write_failure(self, exc: BaseException) -> str:
        """One line for a failed write: why, and what the database keeps (issue 10, item 12)."""
        try:
            kept = int(self._conn.execute("SELECT COUNT(*) FROM evaluations WHERE run_id=?",
                                          (self.run_id,)).fetchone()[0])
        except sqlite3.Error:
            kept = -1
        what = "the disk is full" if is_disk_full(exc) else f"a write failed ({exc})"
        count = f"the {kept} evaluations recorded before are kept" if kept >= 0 else "earlier commits are kept"
        return (f"{self.path}: {what}; {count} (each was committed when it finished); "
                f"free space and continue with {override('resume', self.path.parent)}")

    def results(self) -> list[Result]:
        """Every recorded evaluation of the search, in the order it was recorded (= the order
        told); confirm-phase measurements are not part of the search (see :meth:`confirmations`)."""
        return self._select("candidate_id >= 0")

    def confirmations(self) -> list[Result]:
        """The confirm phase's measurements (negative candidate ids), in recorded order."""
        return self._select("candidate_id < 0")

    def _select(self, where: str) -> list[Result]:
        return select_results(self._conn, self.path, self.run_id, where)

    def finish(self, stop_reason: str, status: str = "finished", devices: Sequence[Any] | None = None) -> None:
        """The run's status and stop reason; a failed write (a full disk) is a WriteError saying what is kept."""
        now = time.time()
        try:
            nodes = [r[0] for r in self._conn.execute("SELECT DISTINCT node FROM evaluations WHERE run_id=? AND node"
                                                      " IS NOT NULL AND node != '' ORDER BY node", (self.run_id,))]
            self._conn.execute("UPDATE runs SET ended=?, status=?, stop_reason=?, nodes=? WHERE id=?",
                               (now, status, stop_reason, _dumps(nodes), self.run_id))
            if devices is not None:
                self._conn.execute("UPDATE runs SET devices=? WHERE id=?", (_dumps(list(devices)), self.run_id))
            self._conn.execute("UPDATE sessions SET ended=?, stop_reason=? WHERE id=?",
                               (now, stop_reason, self.session_id))
        except sqlite3.Error as exc:
            if is_disk_full(exc) and self._give_back_reserve():
                return self.finish(stop_reason, status, devices)
            raise WriteError(self.write_failure(exc)) from None

    def _give_back_reserve(self) -> bool:
        if self._reserve is None or not self._reserve.exists():
            return False
        self._reserve.unlink(missing_ok=True)
        return True

    def close(self) -> None:
        try:
            self._conn.close()
        finally:
            if self._reserve is not None:
                self._reserve.unlink(missing_ok=True)
            if self._lock is not None:
                self._lock.release()
                self._lock = None
