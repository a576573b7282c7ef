"""SIGINT/SIGTERM in a sweep whose jobs run in other processes (issue 47, case 5).

Hydra's joblib launcher runs jobs in loky worker processes. On Ctrl-C its ``Parallel`` aborts and
loky SIGKILLs the workers, so a job still writing its summary was left ``running`` in results.db (or
``interrupted`` in summary.json but ``running`` in the database); on SIGTERM the sweep's process died
at once and the workers were orphaned (one set was alive 52 minutes later).

So the sweep's process coordinates the stop, before the launcher sees anything:

- :func:`coordinate` installs, for the sweep, a handler that forwards the signal to the sweep's
  worker processes (its children that do not ignore it: loky's resource tracker does), waits for
  them to end (each job records ``interrupted`` and its summary), SIGKILLs what is left after
  ``GRACE_S``, and raises :class:`searchlab.cli.launch.SweepInterrupted` with 128 + signum;
- a job in a worker (:func:`in_worker`) that was interrupted tells the sweep's process (a signal sent
  to one worker stops the sweep as one sent to the sweep does) and ends its worker
  (:func:`end_worker`); an idle worker ends quietly on either signal (:func:`quiet_worker`).

Linux only (``/proc``); elsewhere the children are not found and the launcher's own handling stays.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from searchlab.core.signals import SIGNALS, Guard

GRACE_S = 60.0  # a job's clean stop: the in-flight evaluation abandoned, summary and plot written
ENV = "SEARCHLAB_SWEEP_PID"  # the sweep's process, inherited by the launcher's workers


def children(pid: int | None = None) -> list[int]:
    """The live child processes of ``pid`` (default: this one), from ``/proc``."""
    parent = os.getpid() if pid is None else pid
    found = []
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[1]) == parent and fields[0] != "Z":
            found.append(int(entry.parent.name))
    return found


def ignores(pid: int, signum: int) -> bool:
    """Whether process ``pid`` ignores ``signum`` (``SigIgn`` in /proc/PID/status)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigIgn:"):
                return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    except (OSError, ValueError):
        return False
    return False


def stop_children(signum: int, grace_s: float = GRACE_S) -> int:
    """Send ``signum`` to this process's workers, wait up to ``grace_s`` for them to end, SIGKILL the
    rest; returns how many were stopped."""
    workers = [pid for pid in children() if not ignores(pid, signum)]
    for pid in workers:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    alive = list(workers)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [pid for pid in alive if pid in children()]
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return len(workers)


@contextmanager
def coordinate(stopped: Callable[[int], BaseException]) -> Iterator[None]:
    """For the block (a sweep): SIGINT/SIGTERM stop the workers first, then raise ``stopped(status)``."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    state: dict[str, int] = {}

    def handle(signum: int, frame: FrameType | None) -> None:
        if state:
            return  # already stopping (Ctrl-C reaches the sweep and its workers; a worker reports too)
        state["signum"] = signum
        stop_children(signum)
        raise stopped(128 + signum)

    previous = {s: signal.signal(s, handle) for s in SIGNALS}
    had = os.environ.get(ENV)
    os.environ[ENV] = str(os.getpid())
    try:
        yield
    except Exception:
        if state:  # the launcher noticed a worker ending before the handler ran
            raise stopped(128 + state["signum"]) from None
        raise
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        if had is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = had


def in_worker() -> bool:
    """Whether this process runs a job for a sweep in another process (a launcher's worker)."""
    sweep = os.environ.get(ENV)
    return sweep is not None and sweep != str(os.getpid())


def end_worker(status: int) -> None:
    """An interrupted job's worker: tell the sweep, then end (its records and summary are written)."""
    sweep = int(os.environ[ENV])
    try:
        os.kill(sweep, status - 128)
    except (ProcessLookupError, ValueError, OverflowError):
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def busy_worker() -> None:
    """A worker starting a job: SIGINT/SIGTERM raise :class:`searchlab.core.signals.Interrupted` (the run's own
    handling takes over once it starts; before, the job is discarded with nothing written)."""
    Guard().install()


def quiet_worker() -> None:
    """An idle worker: SIGINT/SIGTERM end it without a traceback."""
    if threading.current_thread() is threading.main_thread():
        for s in SIGNALS:
            signal.signal(s, lambda signum, frame: os._exit(128 + signum))
