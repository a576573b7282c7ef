"""The batch writer: many finished runs into one records file (issue 52, "one record format").

A study's cells and a reproduce's repeats are runs like a CLI run: one ``runs`` row each (keyed by a unique
``name``) and their ``evaluations`` rows, in the schema of a run directory's ``results.db``
(:mod:`searchlab.core._rows`). What differs is how they arrive: whole and many at a time, from tasks that
write nothing themselves. So:

- :meth:`RecordWriter.write` puts a batch of runs in with one transaction (``executemany``), each run's row
  and its evaluations together: a killed writer leaves every run whole or absent;
- writing a name again replaces that run (a retried Ray task, a second attempt), never appends to it;
- one writer per file: an exclusive ``flock`` (:class:`searchlab.core.runlock.RunLock`), its holder named
  from the writer's open session row; a second writer is refused in one line;
- the file says it holds many runs (``meta.records = 'runs'``), so ``resume=`` refuses it and the writer
  refuses a CLI run's file.

A task encodes its results (:func:`searchlab.core._rows.encode`, plain values) and the writer only inserts
them; :class:`RunRecord` is that encoded run. Why not one transaction per run: the study's throughput rests
on few commits (bench/replay_throughput.py; a commit with ``synchronous=NORMAL`` costs a WAL append).
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.core._rows import _SCHEMA, INSERT_EVALUATION, SCHEMA_VERSION, EvaluationRow, encode, is_disk_full, migrate
from searchlab.core.records import Result
from searchlab.core.runlock import RunLock, holder
from searchlab.errors import StoreError, WriteError

MANY = "runs"  # meta.records of a file the batch writer made
RUN_COLUMNS = ("name", "problem", "searcher", "seed", "fingerprint", "direction", "objective_name", "known_optimum",
               "config", "space", "versions", "devices", "host", "started", "ended", "status", "stop_reason", "nodes")


@dataclass(frozen=True)
class RunRecord:
    """One finished run, ready to write: the facts of its ``runs`` row and its evaluations, encoded.

    ``name`` is the run's key in the file (a study cell's ``problem/searcher/seed_N``); ``node``: the Ray
    node that ran it ("" outside Ray; each evaluation's ``node``); ``started``/``ended``: wall-clock seconds
    (``ended - started`` is the run's wall time)."""

    name: str
    problem: str
    searcher: str
    seed: int
    config: Mapping[str, Any]
    direction: str = "minimize"
    objective_name: str = "objective"
    fingerprint: str = ""
    known_optimum: float | None = None
    space: Mapping[str, Any] | None = None
    versions: Mapping[str, str] = field(default_factory=dict)
    devices: tuple[Mapping[str, Any], ...] = ()
    node: str = ""
    status: str = "finished"
    stop_reason: str = ""
    started: float = 0.0
    ended: float = 0.0
    evaluations: tuple[EvaluationRow, ...] = ()

    @staticmethod
    def encode(results: Iterable[Result]) -> tuple[EvaluationRow, ...]:
        """``results`` (in told order) as a record's ``evaluations``."""
        return tuple(encode(r) for r in results)

    def row(self, host: str) -> tuple[Any, ...]:
        facts = (self.name, self.problem, self.searcher, self.seed, self.fingerprint, self.direction,
                 self.objective_name, self.known_optimum, _dumps(self.config),
                 None if self.space is None else _dumps(self.space), _dumps(self.versions),
                 _dumps([dict(d) for d in self.devices]), host, self.started, self.ended, self.status,
                 self.stop_reason, _dumps([self.node] if self.node else []))
        return facts


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _busy(db: Path) -> str:
    return (f"{db}: being written by {holder(db)}; one process writes a records file at a time "
            f"(wait for it to end, or stop it and run again)")


class RecordWriter:
    """A records file opened by its one writer (module docstring). Use as a context manager or :meth:`close`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA busy_timeout=30000")
            self._lock = RunLock(self.path, busy=_busy)
        except StoreError:
            if conn is not None:
                conn.close()
            raise
        except (sqlite3.Error, OSError) as exc:
            if conn is not None:
                conn.close()
            raise StoreError(f"{self.path}: cannot be opened for writing ({exc})") from None
        self._conn = conn
        try:
            self.session = self._prepare()
        except BaseException:
            self._lock.release()
            conn.close()
            raise

    def _prepare(self) -> int:
        conn = self._conn
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "runs" in tables and conn.execute("SELECT 1 FROM runs LIMIT 1").fetchone() is not None:
                kind = conn.execute("SELECT value FROM meta WHERE key='records'").fetchone() if "meta" in tables else None
                if kind is None or kind[0] != MANY:
                    raise StoreError(f"{self.path}: holds one run written by a run's own store, not a records file "
                                     "of many runs; write into another directory")
            conn.executescript(_SCHEMA)
            migrate(conn)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('records', ?)", (MANY,))
            cur = conn.execute("INSERT INTO sessions (run_id, pid, host, hydra_dir, started) VALUES (0, ?, ?, '', ?)",
                               (os.getpid(), socket.gethostname(), time.time()))
            return int(cur.lastrowid or 0)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: is not a searchlab records file ({exc})") from None

    def names(self) -> set[str]:
        """The names of the runs already written."""
        return {str(r[0]) for r in self._conn.execute("SELECT name FROM runs WHERE name IS NOT NULL")}

    def write(self, runs: Sequence[RunRecord]) -> int:
        """Write ``runs`` in one transaction, each replacing a run of the same name; returns evaluations written.

        A failed write (a full disk) is rolled back whole: a :class:`WriteError` saying the runs written before
        are kept."""
        if not runs:
            return 0
        host = socket.gethostname()
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                names = [(r.name,) for r in runs]
                conn.executemany("DELETE FROM evaluations WHERE run_id IN (SELECT id FROM runs WHERE name=?)", names)
                conn.executemany("DELETE FROM runs WHERE name=?", names)
                written = 0
                for run in runs:
                    cur = conn.execute(f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) "
                                       f"VALUES ({', '.join('?' * len(RUN_COLUMNS))})", run.row(host))
                    head, node = (int(cur.lastrowid or 0), self.session), run.node or None
                    conn.executemany(INSERT_EVALUATION, [(*head, *e, node) for e in run.evaluations])
                    written += len(run.evaluations)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            what = "the disk is full" if is_disk_full(exc) else f"a write failed ({exc})"
            raise WriteError(f"{self.path}: {what}; the runs written before are kept, these "
                             f"{len(runs)} are not") from None
        return written

    def close(self) -> None:
        """End the session and go back to a plain journal (a read-only reader then needs no -wal/-shm beside
        the file); a reader holding the file open keeps it in WAL, which changes nothing recorded."""
        try:
            self._conn.execute("UPDATE sessions SET ended=? WHERE id=?", (time.time(), self.session))
            self._conn.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.Error:
            pass  # a reader has it open (or the disk is full): every run is committed already
        finally:
            self._conn.close()
            self._lock.release()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
