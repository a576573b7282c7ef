"""The measurement cache: (problem fingerprint, config) -> measurement, shared across runs.

A deterministic problem never measures the same configuration twice (DESIGN.md): the
fingerprint covers the problem's parameters, code version and device models, so a cache
file can be shared by many runs and problems safely. Hits are marked in the run records.

The file is opened and checked (readable, a cache, writable) when the object is built,
which the run does before its ``results.db`` exists: a bad ``cache=`` is one error line
and no half-made run (issue 10, item 6). The fingerprint is known only once the workers
report their devices, so it can be set later (:attr:`fingerprint`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from searchlab.core._rows import holds_run
from searchlab.core.jsondata import loads
from searchlab.core.records import Config, Measurement, measurement_from_dict, measurement_to_dict
from searchlab.core.store import connect, is_disk_full
from searchlab.errors import ConfigError, WriteError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache (
    fingerprint TEXT NOT NULL, config_key TEXT NOT NULL, measurement TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (fingerprint, config_key));
"""
_COLUMNS = ["fingerprint", "config_key", "measurement", "created"]


def _open(path: Path) -> sqlite3.Connection:
    """A checked connection: the cache table exists with our columns and the file takes writes."""
    where = f"cache={path}"
    if path.is_dir():
        raise ConfigError(f"{where}: is a directory; give a file (created if absent)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(path)
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(f"{where}: cannot be opened as an SQLite cache ({exc})") from None
    try:
        if holds_run(conn):  # a run's results.db: its records are not a cache's to extend
            raise ConfigError(f"{where}: is a run's records (results.db), not a cache; give another file")
        conn.executescript(_SCHEMA)
        columns = [row[1] for row in conn.execute("PRAGMA table_info(cache)")]
        if columns != _COLUMNS:
            raise ConfigError(f"{where}: holds a 'cache' table with columns {columns}, not a searchlab cache")
        conn.execute("BEGIN IMMEDIATE")  # takes the write lock: fails now on a read-only file or place
        conn.execute("ROLLBACK")
        _check_entries(conn, where)
    except sqlite3.Error as exc:
        conn.close()
        raise ConfigError(f"{where}: is not a usable searchlab cache ({exc})") from None
    except ConfigError:
        conn.close()
        raise
    return conn


def _check_entries(conn: sqlite3.Connection, where: str) -> None:
    """Every entry decodes to a measurement, checked before the run starts (issue 37, item 7): a bad
    entry found mid-run used to crash it and leave its records at status 'running'."""
    for key, text in conn.execute("SELECT config_key, measurement FROM cache"):
        try:
            Config.from_json(key)
            measurement_from_dict(loads(text))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ConfigError(f"{where}: entry {str(key)[:60]!r} is not a measurement ({type(exc).__name__}: "
                              f"{str(exc)[:80]}); the cache is damaged (delete the entry or give another file)") from None


class SQLiteCache:
    def __init__(self, path: str | Path, fingerprint: str = "") -> None:
        self.path = Path(path)
        self.fingerprint = fingerprint
        self._conn = _open(self.path)
        self.hits = 0

    def get(self, config: Config) -> Measurement | None:
        row = self._conn.execute("SELECT measurement FROM cache WHERE fingerprint=? AND config_key=?",
                                 (self.fingerprint, config.key)).fetchone()
        if row is None:
            return None
        self.hits += 1
        return measurement_from_dict(loads(row[0]))

    def put(self, config: Config, measurement: Measurement) -> None:
        try:
            self._conn.execute("INSERT OR REPLACE INTO cache VALUES (?, ?, ?, ?)",
                               (self.fingerprint, config.key,
                                json.dumps(measurement_to_dict(measurement), default=str), time.time()))
        except sqlite3.Error as exc:
            what = "the disk holding it is full" if is_disk_full(exc) else f"a write failed ({exc})"
            raise WriteError(f"cache={self.path}: {what}; the run's own records are complete up to "
                             f"this evaluation") from None

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM cache WHERE fingerprint=?", (self.fingerprint,)).fetchone()[0])

    def close(self) -> None:
        self._conn.close()
