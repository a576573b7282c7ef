"""Files an export writes: the target is checked first, and written atomically (issue 47, items 7 and 15).

Why: ``export csv RUN -o RUN/results.db`` overwrote a run's database with CSV, a directory, a read-only place
or a full disk as the target ended in a traceback, and a failed write left a 0-byte or truncated file. Here:

- :func:`check_target` refuses, in one line, a directory, a missing or read-only directory, and a run's own
  records (its ``results.db`` and the files beside it, or any SQLite file holding a run: the check ``cache=``
  makes, :func:`searchlab.core._rows.holds_run`) or the export's own source file;
- :func:`write_atomic` writes a temporary file in the target's directory and ``os.replace``-s it over the
  target, so a reader sees the old file or the whole new one; a failed write removes the temporary file. A
  full disk is a :class:`~searchlab.errors.WriteError` (exit 1: not the user's input), any other failure to
  write a :class:`~searchlab.errors.ConfigError` (exit 2).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from searchlab.errors import ConfigError, WriteError

# What a run directory holds that no export may replace (searchlab.core.store, searchlab.run.summary, Hydra).
RUN_FILES = ("results.db", "results.db-wal", "results.db-shm", ".results.db.reserve", "summary.json", ".hydra")


def is_run_records(path: Path) -> bool:
    """Whether ``path`` is an SQLite file that holds a run's records (tables ``runs`` and ``evaluations``)."""
    from searchlab.core._rows import holds_run, read_connection

    try:
        with path.open("rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                return False
        conn = read_connection(path)
    except (OSError, sqlite3.Error):
        return False
    try:
        return holds_run(conn)
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def _inside(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def check_target(out: Path, what: str, protected: Iterable[Path] = ()) -> Path:
    """``out`` if an export may write it, else one ConfigError naming it and the rule.

    ``protected``: the export's sources (a run directory protects its :data:`RUN_FILES`; a file itself)."""
    where = f"{what} {str(out)!r}"
    if out.is_dir():
        raise ConfigError(f"{where} is a directory; give a file name")
    if out.exists() and not out.is_file():
        raise ConfigError(f"{where} is not a regular file (a device, FIFO or socket); give a file name")
    if not out.parent.is_dir():
        raise ConfigError(f"{where}: directory {str(out.parent)!r} does not exist")
    if not os.access(out.parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise ConfigError(f"{where} cannot be written (a read-only file, directory or file system); give another place")
    resolved = out.resolve()
    for source in protected:
        src = source.resolve()
        guarded = [src / name for name in RUN_FILES] if src.is_dir() else [src]
        if any(_inside(resolved, g) for g in guarded):
            raise ConfigError(f"{where} is the export's own source ({str(source)!r}); give another file")
    if out.exists() and is_run_records(out):
        raise ConfigError(f"{where} is a run's records (results.db), not an export target; give another file")
    return out


def _temporary(out: Path) -> Path:
    return out.with_name(f".{out.name}.{os.getpid()}.tmp")


def write_atomic(out: Path, write: Callable[[Path], object], what: str) -> Path:
    """Run ``write(temporary)`` then move the temporary file over ``out``; nothing is left on failure."""
    import errno

    tmp = _temporary(out)
    try:
        write(tmp)
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left" in str(exc):
            raise WriteError(f"{what} {str(out)!r}: the disk is full; nothing was written (free space and "
                             f"export again)") from None
        raise ConfigError(f"{what} {str(out)!r} cannot be written ({exc.strerror or exc}); nothing was written") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out
