"""The report of an in-process run, made by a second process that got ready while the repeats ran.

Why (issue 51, item 5): a small experiment (the reference's mock file: 10 repeats of one strategy) takes the
reference 14 s, of which searchlab spends about a second on the repeats and as much importing what scoring needs
(scikit-learn, the package's curves, matplotlib). In process those two seconds add up; on a machine with a second
core they need not. So when the repeats run in this process (the serial executor), a scorer process is forked
first: it imports the scoring stack while this process runs the repeats, then, told to, reads the stored repeats
back from ``DIR/results.db`` (read-only: every repeat is committed before it is told) and makes the whole report,
exactly as this process would (:meth:`searchlab.reproduce.session.Session._report`: the same code). It ignores
SIGINT and SIGTERM (this process handles them and stops it), and it ends when this process does, ``kill -9``
included (the kernel's parent-death signal): it never holds the records file's lock alone.
Linux and macOS only (``fork``); elsewhere, and on one core, the report is made in this process.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

__all__ = ["Scorer"]


def _prewarm() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import autotuning_methodology.baseline
    import autotuning_methodology.curves  # noqa: F401
    import matplotlib.figure
    import sklearn.ensemble  # noqa: F401

    import searchlab.reproduce.figures
    import searchlab.reproduce.outputs
    import searchlab.reproduce.tables  # noqa: F401


def _die_with_parent() -> None:
    """SIGKILL this process when the parent dies, ``kill -9`` included (Linux ``PR_SET_PDEATHSIG``): it holds a copy
    of the parent's descriptors, the records file's lock among them, and must never outlive it."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the call
        os._exit(0)


def _main(conn: Any, parent_end: Any, session: Any, stats: Any) -> None:
    """The scorer process: get ready, wait for the word, make the report, send back what reproduce() returns."""
    _die_with_parent()
    parent_end.close()  # so the pipe reads end-of-file when the parent's end closes
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        _prewarm()
        message = conn.recv()
    except (EOFError, OSError, KeyboardInterrupt):
        return
    if message is None:
        return
    from searchlab.reproduce.store import RepeatStore

    ran, run_wall, started = message
    try:
        result = session._report(RepeatStore(session.root), stats, ran, run_wall, started, None)
        conn.send(("ok", result))
    except BaseException as exc:  # sent back whole: the parent raises it as its own
        conn.send(("error", f"{type(exc).__name__}: {exc}", isinstance(exc, Exception) and
                   type(exc).__module__.startswith("searchlab")))


class Scorer:
    """A forked scorer process (module docstring), or nothing where ``fork`` or a second core is missing."""

    def __init__(self, session: Any, stats: Any) -> None:
        import multiprocessing

        self._proc: Any = None
        self._conn: Any = None
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        if cores < 2 or "fork" not in multiprocessing.get_all_start_methods():
            return
        ctx = multiprocessing.get_context("fork")
        self._conn, child = ctx.Pipe()
        sys.stderr.flush()
        self._proc = ctx.Process(target=_main, args=(child, self._conn, session, stats), daemon=True)
        self._proc.start()
        child.close()

    @property
    def ready(self) -> bool:
        return self._proc is not None

    def report(self, ran: int, run_wall: float, started: float) -> dict[str, Any]:
        """The report, made by the scorer process."""
        from searchlab.errors import SearchlabError

        self._conn.send((ran, run_wall, started))
        answer = self._conn.recv()
        self.close()
        if answer[0] == "ok":
            result: dict[str, Any] = answer[1]
            return result
        if answer[2]:
            raise SearchlabError(answer[1])
        raise RuntimeError(f"the report failed: {answer[1]}")

    def close(self) -> None:
        if self._proc is None:
            return
        try:
            self._conn.send(None)
        except (OSError, ValueError):
            pass
        self._conn.close()
        self._proc.join(timeout=5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._proc = None
