"""The rows of ``results.db``: its schema, the schema-1 -> 2 migration, encoding a finished evaluation
into a row and decoding one (a damaged row is one StoreError naming it: issue 37, item 7).

One file holds one run (a run directory's) or many (a study's cells, a reproduce's repeats: issue 52):
``runs.name`` is unique, and every evaluation row names its run. :func:`encode` is the one encoder,
used by the live store and by the batch writer alike."""

from __future__ import annotations

import json
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
CREATE UNIQUE INDEX IF NOT EXISTS runs_name ON runs (name);
"""
# what an encoded evaluation holds; a writer adds run_id and session_id before and node after
EVALUATION_COLUMNS = (
    "candidate_id", "config", "config_key", "proposal", "meta", "status", "failure_mode", "message", "objective",
    "samples", "sensors", "datasets", "log", "extra", "worker", "device", "t_submit", "t_start", "t_end", "queue_s",
    "compile_s", "run_s", "charged_s", "cache_hit")
INSERT_EVALUATION = (f"INSERT INTO evaluations (run_id, session_id, {', '.join(EVALUATION_COLUMNS)}, node) "
                     f"VALUES ({', '.join('?' * (len(EVALUATION_COLUMNS) + 3))})")
EvaluationRow = tuple[Any, ...]  # the values of EVALUATION_COLUMNS, in that order

_EMPTY_LIST, _EMPTY_MAP = "[]", "{}"


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str)


def _json_map(value: Any) -> str:
    return _dumps(dict(value)) if value else _EMPTY_MAP  # most are empty: no encoder call


def _json_list(value: Any) -> str:
    return _dumps(list(value)) if value else _EMPTY_LIST


def encode(result: Result) -> EvaluationRow:
    """One finished evaluation as the values of :data:`EVALUATION_COLUMNS` (plain values, cheap to pickle:
    a study's Ray task encodes its replays and the driver only inserts them).

    Lossless, and lean where it costs nothing (issue 52: a study's cells are written in this format now, and
    its throughput rests on the write): ``config`` is the JSON object a person reading the file with SQL
    expects (``{"block": 16}``), ``config_key`` the canonical text, and ``proposal`` is NULL where it equals
    the configuration (most proposals), read back as the configuration.
    The index on ``config_key`` that earlier files carry is not made any more: no query used it."""
    m, c = result.measurement, result.candidate
    key = c.config.key
    proposal = None if c.proposal is c.config or c.proposal.key == key else c.proposal.to_json()
    return (c.id, c.config.to_json(), key, proposal, _json_map(c.meta), m.status.value,
            m.failure_mode.value, m.message, m.objective, _json_list(m.samples), _json_map(m.sensors),
            _json_map(m.datasets), _json_list(m.log), _json_map(m.extra), result.worker, result.device,
            result.t_submit, result.t_start, result.t_end, max(0.0, result.t_start - result.t_submit), m.compile_s,
            m.run_s, m.charged, int(result.cache_hit))


def migrate(conn: sqlite3.Connection) -> None:
    """Schema 1 -> 2: the node columns (old rows keep NULL: where they ran is unknown)."""
    have = {str(r[1]) for r in conn.execute("PRAGMA table_info(evaluations)")}
    if "node" not in have:
        conn.execute("ALTER TABLE evaluations ADD COLUMN node TEXT")
    if "nodes" not in {str(r[1]) for r in conn.execute("PRAGMA table_info(runs)")}:
        conn.execute("ALTER TABLE runs ADD COLUMN nodes TEXT")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))


def select_results(conn: sqlite3.Connection, path: Path, run_id: int, where: str) -> list[Result]:
    """The evaluations of run ``run_id`` matching ``where`` (a fixed clause of the caller's), in recorded order."""
    rows = conn.execute(
        "SELECT candidate_id, config, proposal, meta, status, failure_mode, message, objective, samples,"
        " sensors, datasets, log, extra, compile_s, run_s, charged_s, worker, device, t_submit, t_start,"
        f" t_end, cache_hit FROM evaluations WHERE run_id=? AND {where} ORDER BY id", (run_id,)).fetchall()
    return [_row_to_result(r, path) for r in rows]


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
    chosen = Config.from_json(config)
    proposed = chosen if proposal is None else Config.from_json(proposal)
    candidate = Candidate(int(cid), chosen, proposed, loads(meta or "{}"))
    return Result(candidate, m, worker or "", device or "", t_submit or 0.0, t_start or 0.0, t_end or 0.0, bool(cache_hit))


def is_disk_full(exc: BaseException) -> bool:
    """SQLite's SQLITE_FULL ("database or disk is full") or the OS's ENOSPC / EDQUOT."""
    import errno

    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL" or "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def holds_run(conn: sqlite3.Connection) -> bool:
    """Whether the database holds a run's records: ``cache=`` and export targets refuse such a file."""
    tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return {"runs", "evaluations"} <= tables


def holds_many(conn: sqlite3.Connection) -> bool:
    """Whether the database holds the records of many runs (the batch writer's: a study's, a reproduce's)."""
    tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" in tables and conn.execute("SELECT 1 FROM meta WHERE key='records' AND value='runs'").fetchone():
        return True
    return "runs" in tables and int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]) > 1


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
