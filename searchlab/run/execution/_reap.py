"""Kill what a killed worker started (issue 37, item 5).

Why: ``ray.kill`` ends an evaluator actor outright, so the process groups its evaluation
started (``problem=command`` runs each command in a new session) lived on: a timed-out
``sleep 1000`` per evaluation. Before the executor kills a worker on this machine it kills the
process group of each of the worker's children (read from ``/proc``: Linux; elsewhere nothing is
found and only ``PR_SET_PDEATHSIG`` of searchlab.adapters.user._process applies).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (empty where /proc is not there)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[1] == str(pid):
            found.append(int(stat.parent.name))
    return found


def kill_children(pid: int) -> int:
    """SIGKILL the process group of every child of ``pid`` (a worker about to be killed); how many."""
    if pid <= 0:
        return 0
    killed = 0
    for child in children(pid):
        try:
            group = os.getpgid(child)
            if group != os.getpgid(pid):  # its own session (a command's): the whole group
                os.killpg(group, signal.SIGKILL)
            else:
                os.kill(child, signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError):
            continue
    return killed
