"""Run one external command with a deadline, killing its whole process group on timeout.

``subprocess.run(timeout=)`` kills only the direct child: a ``sh -c`` wrapper's children
would outlive it and keep the worker's core busy. Here the command starts a new session
and, past the deadline, the session's process group is killed -- also when the wait is cut
short from outside (the serial executor's ``executor.timeout_s`` alarm, an interrupt: issue 37,
item 5, where each timed-out evaluation left one orphaned ``sleep``). A worker killed outright
(a Ray actor replaced after ``executor.timeout_s``) cannot run this; its executor kills the
groups of the worker's children (searchlab.run.execution._ray), and on Linux the direct child
also gets SIGKILL when the worker dies (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    timed_out: bool = False

    def tail(self, chars: int = 300) -> str:
        """The last line of stderr (or stdout), for a one-line failure message."""
        text = (self.stderr.strip() or self.stdout.strip()).splitlines()
        return text[-1][-chars:] if text else "(no output)"


def run_process(argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout_s: float) -> Finished:
    start = time.perf_counter()
    if timeout_s <= 0:
        return Finished(-1, "", "", 0.0, timed_out=True)
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, start_new_session=True,
                                preexec_fn=_pdeathsig())
    except OSError as exc:  # no such executable, not executable
        return Finished(127, "", f"{argv[0]!r}: {exc.strerror or exc}", time.perf_counter() - start)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        out, err = proc.communicate()
        return Finished(proc.returncode, out, err, time.perf_counter() - start, timed_out=True)
    except BaseException:  # cut short from outside: the group must not outlive the evaluation
        _kill_group(proc.pid)
        proc.kill()
        proc.wait()
        raise
    return Finished(proc.returncode, out, err, time.perf_counter() - start)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _pdeathsig() -> Callable[[], None] | None:
    """What the child runs before exec: SIGKILL when the worker that started it dies (Linux only).

    ``prctl`` is looked up here, in the parent: the forked child of a threaded worker (a Ray actor)
    must not load libraries, only make the one call."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def set_pdeathsig() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1

    return set_pdeathsig
