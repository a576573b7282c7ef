"""The study store's writer: the driver alone writes ``replays.db`` (searchlab.study.execution.replay).

The format -- schema, name, version, and the reader -- is :mod:`searchlab.study.analysis.store`;
this module only opens it for writing, one transaction per batch of cells.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchlab.errors import ConfigError
from searchlab.study.analysis.store import CELL_COLUMNS, SCHEMA, STORE_VERSION

if TYPE_CHECKING:
    from searchlab.study.execution.batch import CellRun


class StudyStore:
    """``replays.db`` opened for writing by the study's driver."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(SCHEMA)
            self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('store_version', ?)", (STORE_VERSION,))
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise ConfigError(f"study: {path} is not a searchlab study store ({exc})") from None

    def done(self) -> set[str]:
        """The keys of the cells already recorded."""
        return {str(r[0]) for r in self._conn.execute("SELECT key FROM cells")}

    def write(self, runs: Sequence[CellRun]) -> int:
        """Record ``runs`` in one transaction (a cell written again is replaced); returns evaluations written."""
        now = time.time()
        cells = [(r.key, r.problem, r.searcher, r.seed, r.fingerprint, r.direction, r.objective_name, r.known_optimum,
                  _dumps(r.config), _dumps(r.versions), _dumps(list(r.devices)), r.node, r.stop_reason, r.status,
                  r.wall_time_s, len(r.evaluations), now) for r in runs]
        rows = [(r.key, i, e.config, e.objective, e.recorded, e.status, e.failure_mode, e.charged, int(e.subproblem))
                for r in runs for i, e in enumerate(r.evaluations)]
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany("DELETE FROM evaluations WHERE cell=?", [(r.key,) for r in runs])
            self._conn.executemany(f"INSERT OR REPLACE INTO cells ({', '.join(CELL_COLUMNS)}) "
                                   f"VALUES ({', '.join('?' * len(CELL_COLUMNS))})", cells)
            self._conn.executemany("INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")
        return len(rows)

    def close(self) -> None:
        """Back to a plain journal, so read-only readers need no -wal/-shm beside the file. Where another
        study process still has the store open (studies split by searcher into one directory), SQLite
        refuses the switch ("database is locked"); the store stays in WAL mode and that process's close
        switches it. Every record is committed by then, so nothing depends on the switch."""
        try:
            self._conn.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.OperationalError:
            pass  # another writer has it open: it stays in WAL until the last one closes
        finally:
            self._conn.close()


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
