"""A reproduce directory's records: every repeat a run in ``DIR/results.db``, the one record format.

Each finished repeat is one run of the records file (:class:`searchlab.core.store.RecordWriter`, the batch writer
a study uses too), named ``<gpu>/<application>/<strategy>/seed_<i>`` with ``i`` the repeat index: its Kernel
Tuner results are its evaluations, in Kernel Tuner's order (:mod:`searchlab.reproduce.records`), the seed it
used and the attempts it took are in its config. So ``python -m searchlab.study DIR`` reads a reproduce directory
like any study (issue 51, item 2), and this module reads back from the same rows what the methodology's score
needs (the run's config's ``kernel_tuner`` entry: every result's time per key, value and invalidity).

Each repeat is one transaction, so a kill loses only the repeats in flight and a rerun skips every stored one.
One process writes a directory: the writer's ``flock`` on ``results.db`` (dropped by the kernel when the process
ends, however it ends); a second writer is refused in one line. ``DIR/experiment.sha256`` ties the directory to
the experiment file's bytes: another file is refused, unless no repeat is stored yet.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError, StoreError

__all__ = ["RepeatStore", "atomic_write", "cell_key"]

DB = "results.db"
STAMP = "experiment.sha256"


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
    """``DIR/results.db`` opened for writing by this process (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / DB
        self._writer: Any = None
        self._names: set[str] = set()

    def open(self, digest: str, experiment: bytes) -> None:
        """Create or reopen the records, take the writer's lock, and tie the directory to the experiment."""
        from searchlab.core.store import RecordWriter

        self.root.mkdir(parents=True, exist_ok=True)
        try:
            self._writer = RecordWriter(self.path)
        except StoreError as exc:
            if "being written by" in str(exc):
                raise ConfigError(f"--out {str(self.root)!r}: another searchlab reproduce writes this directory now "
                                  f"({str(exc).split('being written by ', 1)[1].split(';')[0]}); one writer per "
                                  "directory: wait for it, or give another --out") from None
            raise  # not the user's input (a full disk): one line, exit 1
        self._names = self._writer.names()
        stamp = self.root / STAMP
        if stamp.is_file() and stamp.read_text().strip() != digest and self._names:
            raise ConfigError(f"--out {str(self.root)!r}: holds {len(self._names)} repeats of a different experiment "
                              "file (its bytes differ); give a new --out")
        atomic_write(stamp, (digest + "\n").encode())
        atomic_write(self.root / "experiment.json", experiment)

    def stored(self) -> int:
        return len(self._names)

    def done(self, keys: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
        """Which of ``keys`` (group, index) are stored."""
        return {k for k in keys if cell_key(*k) in self._names}

    def save(self, record: Any) -> None:
        """One repeat (a ``RunRecord``), in one transaction."""
        self._writer.write([record])
        self._names.add(record.name)

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        from searchlab.core._rows import read_connection

        conn = read_connection(self.path)
        try:
            return conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot be read ({exc})") from None
        finally:
            conn.close()

    def results(self, groups: Iterable[tuple[str, int]], keys: list[str]) -> dict[str, list[dict[str, Any]]]:
        """``{group: [compact run of repeat 0, 1, ...]}`` (:mod:`searchlab.reproduce.arrays`) from the runs' configs,
        for each (group, repeats) asked for; ``keys``: the time keys the experiment counts, in its order."""
        from searchlab.core.jsondata import loads

        asked = list(groups)
        wanted = {cell_key(g, i): (g, i) for g, n in asked for i in range(n)}
        runs: dict[str, dict[str, Any]] = {}
        for name, config in self._rows("SELECT name, config FROM runs ORDER BY id"):
            if name not in wanted:
                continue
            run = loads(config).get("kernel_tuner")
            if not isinstance(run, dict) or list(run.get("keys", ())) != list(keys):
                raise StoreError(f"{self.path}: repeat {name!r} holds no Kernel Tuner results for the time keys "
                                 f"{list(keys)}; the record is damaged (delete the directory and run again)")
            runs[name] = run
        out: dict[str, list[dict[str, Any]]] = {g: [] for g, _ in asked}
        for name in sorted(runs, key=lambda n: wanted[n][1]):
            out[wanted[name][0]].append(runs[name])
        return out

    def seeds(self) -> dict[str, list[tuple[int, int, bool, int]]]:
        """``{group: [(index, seed, fixed, attempts), ...]}``: what each stored repeat used."""
        out: dict[str, list[tuple[int, int, bool, int]]] = {}
        for (config,) in self._rows("SELECT config FROM runs ORDER BY id"):
            c = json.loads(config)
            if isinstance(c, dict) and "group" in c:
                out.setdefault(str(c["group"]), []).append((int(c["repeat"]), int(c["seed"]), bool(c["seed_fixed"]),
                                                           int(c["attempts"])))
        return {g: sorted(v) for g, v in out.items()}

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
