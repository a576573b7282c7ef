"""The rows of ``results.db``: its schema, the schema-1 -> 2 migration and decoding an
evaluation row (a damaged row is one StoreError naming it: issue 37, item 7)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from searchlab.core.jsondata import loads
from searchlab.core.records import Candidate, Config, Result, measurement_from_dict
from searchlab.errors import StoreError

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, name TEXT, problem TEXT NOT NULL, searcher TEXT NOT NULL, seed INTEGER,
    fingerprint TEXT, direction TEXT, objective_name TEXT, known_optimum REAL,
    config TEXT NOT NULL, space TEXT, versions TEXT, devices TEXT, host TEXT,
    started REAL NOT NULL, ended REAL, status TEXT NOT NULL, stop_reason TEXT, nodes TEXT);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, pid INTEGER, host TEXT,
    hydra_dir TEXT, started REAL NOT NULL, ended REAL, stop_reason TEXT);
CREATE TABLE IF NOT EXISTS evaluations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, session_id INTEGER,
    candidate_id INTEGER NOT NULL, config TEXT NOT NULL, config_key TEXT NOT NULL,
    proposal TEXT, meta TEXT, status TEXT NOT NULL, failure_mode TEXT NOT NULL, message TEXT,
    objective REAL, samples TEXT, sensors TEXT, datasets TEXT, log TEXT, extra TEXT,
    worker TEXT, device TEXT, t_submit REAL, t_start REAL, t_end REAL,
    queue_s REAL, compile_s REAL, run_s REAL, charged_s REAL, cache_hit INTEGER NOT NULL, node TEXT,
    UNIQUE (run_id, candidate_id));
CREATE INDEX IF NOT EXISTS evaluations_config ON evaluations (run_id, config_key);
"""


def migrate(conn: sqlite3.Connection) -> None:
    """Schema 1 -> 2: the node columns (old rows keep NULL: where they ran is unknown)."""
    have = {str(r[1]) for r in conn.execute("PRAGMA table_info(evaluations)")}
    if "node" not in have:
        conn.execute("ALTER TABLE evaluations ADD COLUMN node TEXT")
    if "nodes" not in {str(r[1]) for r in conn.execute("PRAGMA table_info(runs)")}:
        conn.execute("ALTER TABLE runs ADD COLUMN nodes TEXT")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))


def _row_to_result(r: Sequence[Any], path: Path) -> Result:
    """One evaluation row; a damaged one (bad JSON, an unknown status) is one StoreError naming it."""
    try:
        return _decode(r)
    except (ValueError, TypeError, KeyError) as exc:
        raise StoreError(f"{path}: evaluation {r[0]} cannot be read ({type(exc).__name__}: {str(exc)[:80]}); "
                         f"the record is damaged") from None


def _decode(r: Sequence[Any]) -> Result:
    (cid, config, proposal, meta, status, mode, message, objective, samples, sensors, datasets, log, extra,
     compile_s, run_s, charged_s, worker, device, t_submit, t_start, t_end, cache_hit) = r
    m = measurement_from_dict({
        "status": status, "failure_mode": mode, "message": message, "objective": objective,
        "samples": loads(samples), "sensors": loads(sensors), "datasets": loads(datasets),
        "log": loads(log), "extra": loads(extra), "compile_s": compile_s, "run_s": run_s,
        "charged_s": charged_s,
    })
    candidate = Candidate(int(cid), Config.from_json(config), Config.from_json(proposal or "{}"), loads(meta or "{}"))
    return Result(candidate, m, worker or "", device or "", t_submit or 0.0, t_start or 0.0, t_end or 0.0, bool(cache_hit))


def holds_run(conn: sqlite3.Connection) -> bool:
    """Whether the database holds a run's records: ``cache=`` and export targets refuse such a file."""
    tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return {"runs", "evaluations"} <= tables


def writable(path: Path) -> bool:
    """Whether ``path`` and its directory take writes (``os.access``: false on a read-only mount, for root
    too). The seam the read-only tests patch."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def sqlite_uri(path: Path | str, mode: str) -> str:
    """``file:PATH?mode=MODE`` with the path percent-encoded: SQLite decodes ``%XX`` in a URI, so a sweep
    job's directory (``problem.path=..%2Fdata%2Fx.json``) named another file and the study died
    with "unable to open database file" (the newcomer walk, bench/walk.py); ``?`` and ``#``
    in a name would end the path early."""
    return f"file:{quote(str(path), safe='/')}?mode={mode}"


def read_connection(path: Path) -> sqlite3.Connection:
    """A connection that only reads (issue 47, item 8: records on read-only media open read-only).

    Where the file and its directory are writable it is opened read-write: a read-only connection to a WAL
    database leaves ``-wal``/``-shm`` files behind (it cannot delete them on close; issue 37, item 11).
    Where they are not, a cleanly closed run (no ``-wal``) is opened ``immutable=1``: SQLite then needs no
    ``-shm`` file, which it could not create there; a killed run's ``-wal`` is read through ``mode=ro``."""
    uri = f"file:{quote(str(path))}"
    if writable(path):
        try:
            return sqlite3.connect(f"{uri}?mode=rw", uri=True, timeout=30.0)
        except sqlite3.OperationalError:  # a read-only file
            return sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30.0)
    wal = path.with_name(f"{path.name}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30.0)
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, timeout=30.0)


def check_cells(conn: sqlite3.Connection, path: Path) -> None:
    """The read bound (``SEARCHLAB_MAX_READ_MB``, :mod:`searchlab.core.files`) on every value of the database,
    checked before a row is fetched (issue 47, item 11: a 300 MB message was read whole, 1.8 GB of memory).

    A value larger than a page lies in overflow pages, so a file within the cap holds no value over it
    (checked for free); else SQLite's ``dbstat`` sums each value's overflow pages without loading them
    (``length()`` of a TEXT value would load it)."""
    from searchlab.core.files import OVERRIDE, max_bytes

    limit = max_bytes()
    sizes = [p.stat().st_size for p in (path, path.with_name(f"{path.name}-wal")) if p.exists()]
    if sum(sizes) <= limit:
        return
    try:
        row = conn.execute("SELECT name, SUM(payload) FROM dbstat WHERE pagetype='overflow' "
                           "GROUP BY name, substr(path, 1, instr(path, '+') - 1) HAVING SUM(payload) > ? LIMIT 1",
                           (limit,)).fetchone()
    except sqlite3.OperationalError:  # an SQLite without dbstat: the file's size is the bound
        row = ("the database", sum(sizes))
    if row is not None:
        raise StoreError(f"{path}: a value in {row[0]} holds more than {limit // (1024 * 1024)} MB, the cap on one "
                         f"read ({OVERRIDE}=N raises it); the record is damaged or too large to read")
