"""Run one external command with a deadline, killing its whole process group on timeout.

``subprocess.run(timeout=)`` kills only the direct child: a ``sh -c`` wrapper's children
would outlive it and keep the worker's core busy. Here the command starts a new session
and, past the deadline, the session's process group is killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
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
                                stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    except OSError as exc:  # no such executable, not executable
        return Finished(127, "", f"{argv[0]!r}: {exc.strerror or exc}", time.perf_counter() - start)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return Finished(proc.returncode, out, err, time.perf_counter() - start, timed_out=True)
    return Finished(proc.returncode, out, err, time.perf_counter() - start)
