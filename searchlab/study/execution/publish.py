"""A replay's records carried from the task that ran it to the driver, which alone writes them.

Why (issue 24, item 3): when the replay tasks wrote their own ``results.db``, a task retried
after its node was lost appended its evaluations to the ones the lost attempt had already
written (5 of 24 runs held 215 evaluations instead of 200), and on a real cluster the
records landed on the worker machine's disk. Now a task replays into a scratch directory on
its own node and returns the rows (:class:`RunRows`, plain values) and the run's other files;
the driver writes them into the run directory:

- the database is built as ``results.db.part`` by batched inserts (one transaction per
  ``batch`` rows) into a fresh database with the driver's own schema -- a worker's SQLite
  file is never opened by the driver, and only the columns that schema has are written;
- ``os.replace`` then makes it ``results.db`` (a study's reader searches for that name
  only), and ``summary.json`` is written last, atomically: a run is there complete or not
  at all. A retried task's result replaces the run directory's records, never appends.

A driver killed mid-write leaves at most a ``.part`` file, which the next attempt overwrites.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.core.store import _SCHEMA, DB_NAME, SCHEMA_VERSION, connect, migrate, sqlite_uri

TABLES = ("meta", "runs", "sessions", "evaluations")
SUMMARY = "summary.json"
BATCH = 500


@dataclass(frozen=True)
class RunRows:
    """Every row of a run's database, table by table: (column names, rows of plain values)."""

    tables: dict[str, tuple[tuple[str, ...], list[tuple[Any, ...]]]] = field(default_factory=dict)

    @property
    def evaluations(self) -> int:
        return len(self.tables.get("evaluations", ((), []))[1])


@dataclass(frozen=True)
class ReplayOutcome:
    """What a replay task returns: the study's one-line record, the rows, the other files."""

    record: dict[str, Any]
    rows: RunRows
    files: dict[str, bytes]  # path relative to the run directory -> content (summary.json, plots)
    node: str


def dump_rows(run_dir: Path) -> RunRows:
    """The rows of ``run_dir/results.db`` (read-only)."""
    conn = sqlite3.connect(sqlite_uri(run_dir / DB_NAME, "ro"), uri=True, timeout=30.0)
    try:
        tables = {}
        for table in TABLES:
            cur = conn.execute(f"SELECT * FROM {table} ORDER BY rowid")  # a fixed table name
            tables[table] = (tuple(d[0] for d in cur.description), cur.fetchall())
        return RunRows(tables)
    finally:
        conn.close()


def run_files(run_dir: Path) -> dict[str, bytes]:
    """Every regular file of a finished run besides its database."""
    out = {}
    for path in sorted(run_dir.rglob("*")):
        rel = path.relative_to(run_dir).as_posix()
        if path.is_file() and not path.is_symlink() and not rel.startswith(DB_NAME):
            out[rel] = path.read_bytes()
    return out


def write_rows(path: Path, rows: RunRows, batch: int = BATCH) -> None:
    """A fresh database at ``path`` holding ``rows``, inserted ``batch`` rows per transaction."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    conn = connect(path)
    try:
        conn.executescript(_SCHEMA)
        for table in TABLES:
            cols, values = rows.tables.get(table, ((), []))
            known = {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}
            keep = [i for i, c in enumerate(cols) if c in known]  # names are data: only our schema's columns
            if not keep or not values:
                continue
            names = ", ".join(cols[i] for i in keep)
            sql = f"INSERT OR REPLACE INTO {table} ({names}) VALUES ({', '.join('?' * len(keep))})"
            for start in range(0, len(values), batch):
                conn.execute("BEGIN")
                conn.executemany(sql, [tuple(v[i] for i in keep) for v in values[start:start + batch]])
                conn.execute("COMMIT")
        migrate(conn)  # rows of a schema-1 run: the schema is ours now
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def publish(run_dir: Path, outcome: ReplayOutcome, batch: int = BATCH) -> None:
    """Write a finished replay into ``run_dir``: database, then files, then summary.json."""
    run_dir.mkdir(parents=True, exist_ok=True)
    part = run_dir / f"{DB_NAME}.part"
    write_rows(part, outcome.rows, batch)
    for rel, data in outcome.files.items():
        if rel == SUMMARY:
            continue
        target = run_dir / rel
        if not target.resolve().is_relative_to(run_dir.resolve()):
            continue  # a name is data: nothing is written outside the run directory
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for suffix in ("-wal", "-shm"):  # an older partial run's journal would be applied to the new file
        (run_dir / f"{DB_NAME}{suffix}").unlink(missing_ok=True)
    os.replace(part, run_dir / DB_NAME)
    if SUMMARY in outcome.files:
        tmp = run_dir / f"{SUMMARY}.tmp"
        tmp.write_bytes(outcome.files[SUMMARY])
        os.replace(tmp, run_dir / SUMMARY)
