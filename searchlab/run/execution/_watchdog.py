"""Every process a local Ray cluster starts ends with the process that started it, however it ends (issue 51).

Why: Ray starts ``gcs_server`` and ``raylet`` with the kernel's parent-death signal, but the raylet's own children
(``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``, idle workers) outlived a driver killed with ``kill -9``,
and some outlived a clean ``ray.shutdown()`` too. So the one local Ray start (:func:`start_local` in
:mod:`searchlab.run.execution._ray`) first starts this watchdog: a small process that reads a pipe from the driver
and, four times a second while the driver lives, notes the driver's descendants (pid and start time, from
``/proc``) and the Ray session they belong to (``session_<date>_<time>_<pid>`` in their command lines). When the
pipe closes -- the driver closed it after its shutdown, or the kernel closed it because the driver died, ``kill -9``
included -- it sends SIGTERM to every noted process still alive (the same pid *and* start time, so a reused pid is
never hit), to their descendants and to any process of the same Ray session (a worker started after the last look,
already orphaned), then SIGKILL after two seconds. It ignores SIGINT
and SIGTERM (a Ctrl-C at the terminal reaches the whole foreground group), so it always gets to clean up.
Linux only (``/proc``); elsewhere it is not started.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import IO, Any

__all__ = ["SCRIPT", "Watchdog"]

SCRIPT = r"""
import os, re, signal, sys, threading, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
driver, me = int(sys.argv[1]), os.getpid()

def table():
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                out[int(name)] = (int(fields[1]), fields[19])
            except (OSError, IndexError, ValueError):
                pass
    return out

def below(roots, procs):
    found, frontier = {}, list(roots)
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, start) in procs.items():
            if ppid == parent and pid != me and pid not in found:
                found[pid] = start
                frontier.append(pid)
    return found

SESSION = re.compile(rb"session_[0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9_-]+")

def sessions(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return set(SESSION.findall(fh.read()))
    except OSError:
        return set()

known, marks, lock = {}, set(), threading.Lock()

def watch():
    while True:
        seen = below([driver], table())
        with lock:
            for pid in set(seen) - set(known):
                marks.update(sessions(pid))
            known.update(seen)
        time.sleep(0.25)

threading.Thread(target=watch, daemon=True).start()
while sys.stdin.buffer.read(4096):
    pass
with lock:
    targets, ours = dict(known), set(marks)
procs = table()
targets.update(below(list(targets), procs))
if ours:  # a process of our Ray session started after the last look (its parent already gone): by its command line
    for pid, (ppid, start) in procs.items():
        if pid != me and pid not in targets and sessions(pid) & ours:
            targets[pid] = start
alive = lambda: {p: s for p, s in targets.items() if procs.get(p, (None, None))[1] == s}
for sig, pause in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 0.0)):
    for pid in alive():
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    deadline = time.time() + pause
    while pause and time.time() < deadline:
        procs = table()
        if not alive():
            break
        time.sleep(0.1)
    procs = table()
"""


class Watchdog:
    """The watchdog process of this driver (module docstring); :meth:`close` lets it reap and waits for it."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        if sys.platform.startswith("linux") and os.path.isdir("/proc"):
            self._proc = subprocess.Popen([sys.executable, "-S", "-c", SCRIPT, str(os.getpid())], stdin=subprocess.PIPE,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def close(self, timeout: float = 10.0) -> None:
        """Close the pipe (the watchdog reaps what is left of the cluster) and wait for it."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        stdin: IO[bytes] | Any = proc.stdin
        try:
            if stdin is not None:
                stdin.close()
            proc.wait(timeout=timeout)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
