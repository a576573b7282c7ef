"""One writer per run directory (issue 37, item 4).

Why: a second ``resume=`` of a run that was still running replayed its records, measured
more, then died on a UNIQUE constraint. Whoever writes a run's ``results.db`` holds an
exclusive ``flock`` on that file. The kernel drops it when the holder's process ends, however
it ends (``kill -9`` included), so a lock never outlives its holder and a killed run stays
resumable. ``flock`` locks are independent of the POSIX byte-range locks SQLite takes on the
same file (Linux: flock(2)), so they do not disturb SQLite's own locking.

The holder is named from the records: the newest session without an end is the process that
writes (its pid and host).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from searchlab.errors import StoreError


class RunLock:
    """An exclusive lock on ``results.db``, held until :meth:`release` or the process ends. ``busy``: the line
    that refuses a second writer (a resume's by default; the batch writer's names its file)."""

    def __init__(self, db: Path, busy: Callable[[Path], str] | None = None) -> None:
        self.db = db
        self._fd: int | None = os.open(db, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            self._fd = None
            raise StoreError((busy or busy_message)(db)) from None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


def busy_message(db: Path) -> str:
    return (f"resume={db.parent}: the run is being written by {holder(db)}; one process writes a run at a time "
            f"(wait for it to end, or stop it and resume then)")


def holder(db: Path) -> str:
    """'process PID on HOST' from the newest open session of the run (else 'another process')."""
    try:
        from searchlab.core._rows import read_connection

        conn = read_connection(db)
        try:
            row = conn.execute("SELECT pid, host FROM sessions WHERE ended IS NULL ORDER BY id DESC LIMIT 1").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        row = None
    return f"live process {row[0]} on {row[1]}" if row else "another live process"


def check_free(run_dir: Path) -> None:
    """Refuse now (one line naming the live process) if another process writes the run."""
    db = run_dir / "results.db"
    if db.is_file():
        RunLock(db).release()
