"""A reproduce directory's records: every repeat in one SQLite file, in the study's record format.

``DIR/replays.db`` is a study store (:mod:`searchlab.study.analysis.store`: one cell per repeat, keyed
``<gpu>/<application>/<strategy>/seed_<i>`` with ``i`` the repeat index, its evaluations in Kernel Tuner's order,
the space's optimum as the known optimum), so ``python -m searchlab.study DIR`` reads a reproduce directory like
any study (issue 51, item 2). Beside the cells, ``reproduce_repeats`` keeps what the methodology's score needs and
a cell lacks: each repeat's results as Kernel Tuner's T4 rows (gzipped JSON), with the seed that was used and the
attempts the retry rule took.

Each finished repeat is one transaction (its cell, evaluations and raw results together), so a kill loses only the
repeats in flight, and a rerun skips every stored one. One process writes a directory: the writer holds an
exclusive ``flock`` on ``replays.db`` (:class:`searchlab.core.runlock.RunLock`; the kernel drops it when the
process ends, however it ends); a second writer is refused in one line naming the first. ``meta`` ties the
directory to the experiment file's bytes (SHA-256): another file is refused, unless no repeat is stored yet.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError, StoreError

__all__ = ["RepeatStore", "atomic_write"]

DB = "replays.db"
_EXTRA = """
CREATE TABLE IF NOT EXISTS reproduce_repeats (
    cell TEXT PRIMARY KEY, grp TEXT NOT NULL, idx INTEGER NOT NULL, seed INTEGER NOT NULL, seed_fixed INTEGER NOT NULL,
    attempts INTEGER NOT NULL, wall_s REAL NOT NULL, results BLOB NOT NULL);
"""


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary name in the same directory, fsync, rename: a file that exists is whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def cell_key(group: str, index: int) -> str:
    return f"{group}/seed_{index}"


class RepeatStore:
    """``DIR/replays.db`` opened for writing (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / DB
        self._conn: sqlite3.Connection | None = None
        self._lock: Any = None

    def open(self, digest: str, experiment: bytes) -> None:
        """Create or reopen the store, take the writer's lock, and tie it to the experiment file's bytes."""
        from searchlab.core.runlock import RunLock
        from searchlab.study.analysis.store import SCHEMA, STORE_VERSION

        self.root.mkdir(parents=True, exist_ok=True)
        self.path.touch(exist_ok=True)
        try:
            self._lock = RunLock(self.path)
        except StoreError:
            raise ConfigError(f"--out {str(self.root)!r}: another searchlab reproduce writes this directory now "
                             f"({self._writer()}); one writer per directory: wait for it, or give another --out") from None
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        self._conn = conn
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(SCHEMA + _EXTRA)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('store_version', ?)", (STORE_VERSION,))
        found = conn.execute("SELECT value FROM meta WHERE key='reproduce_experiment_sha256'").fetchone()
        if found and found[0] != digest and self.stored():
            raise ConfigError(f"--out {str(self.root)!r}: holds {self.stored()} repeats of a different experiment "
                              "file (its bytes differ); give a new --out")
        conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                         [("reproduce_experiment_sha256", digest), ("reproduce_writer", f"{os.getpid()}@{os.uname()[1]}"),
                          ("reproduce_experiment", experiment.decode("utf-8", "replace"))])

    def _writer(self) -> str:
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5.0)
            try:
                row = conn.execute("SELECT value FROM meta WHERE key='reproduce_writer'").fetchone()
            finally:
                conn.close()
        except sqlite3.Error:
            row = None
        return f"process {row[0]}" if row else "another process"

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("RepeatStore.open() first")
        return self._conn

    def stored(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM reproduce_repeats").fetchone()[0])

    def done(self) -> set[tuple[str, int]]:
        return {(str(g), int(i)) for g, i in self.conn.execute("SELECT grp, idx FROM reproduce_repeats")}

    def save(self, group: str, index: int, cell: Any, outcome: Mapping[str, Any], wall: float) -> None:
        """One repeat: its study cell (a ``CellRun``), evaluations and raw results, in one transaction."""
        from searchlab.study.analysis.store import CELL_COLUMNS

        key = cell_key(group, index)
        run = {k: v for k, v in outcome["run"].items() if k != "configs"}  # the configurations are the cell's rows
        raw = gzip.compress(json.dumps(run).encode(), compresslevel=3)
        row = (key, cell.problem, cell.searcher, cell.seed, cell.fingerprint, cell.direction, cell.objective_name,
               cell.known_optimum, json.dumps(cell.config, sort_keys=True, default=str),
               json.dumps(cell.versions, sort_keys=True), json.dumps(list(cell.devices)), cell.node, cell.stop_reason,
               cell.status, wall, len(cell.evaluations), time.time())
        evals = [(key, i, e.config, e.objective, e.recorded, e.status, e.failure_mode, e.charged, 0)
                 for i, e in enumerate(cell.evaluations)]
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("DELETE FROM evaluations WHERE cell=?", (key,))
            conn.execute(f"INSERT OR REPLACE INTO cells ({', '.join(CELL_COLUMNS)}) "
                         f"VALUES ({', '.join('?' * len(CELL_COLUMNS))})", row)
            conn.executemany("INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", evals)
            conn.execute("INSERT OR REPLACE INTO reproduce_repeats VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (key, group, index, int(outcome["seed"]), int(bool(outcome.get("seed_fixed"))),
                          int(outcome["attempts"]), wall, raw))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def results(self, groups: Iterable[tuple[str, int]]) -> dict[str, list[dict[str, Any]]]:
        """``{group: [compact run of repeat 0, 1, ...]}`` for each (group, repeats) asked for
        (:mod:`searchlab.reproduce.arrays`)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for group, repeats in groups:
            rows = self.conn.execute("SELECT idx, results FROM reproduce_repeats WHERE grp=? ORDER BY idx",
                                     (group,)).fetchall()
            out[group] = [json.loads(gzip.decompress(r[1])) for r in rows if int(r[0]) < repeats]
        return out

    def seeds(self) -> dict[str, list[tuple[int, int, bool, int]]]:
        """``{group: [(index, seed, fixed, attempts), ...]}`` (the record of what each repeat used)."""
        out: dict[str, list[tuple[int, int, bool, int]]] = {}
        for g, i, s, f, a in self.conn.execute("SELECT grp, idx, seed, seed_fixed, attempts FROM reproduce_repeats "
                                               "ORDER BY grp, idx"):
            out.setdefault(str(g), []).append((int(i), int(s), bool(f), int(a)))
        return out

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.execute("PRAGMA journal_mode=DELETE")  # readers need no -wal/-shm beside it
            except sqlite3.Error:
                pass
            self._conn.close()
            self._conn = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None
