"""Which cores to measure on: the idle ones first (issue 35; docs/measurement.md, "Busy cores").

Why. Measurements on pocl (the OpenCL CPU device) are pinned to cores, so that one worker's
timings are not spread over whatever core the scheduler picks. But pinning to a *fixed* core
(the last one) is the worst choice when another process already keeps that core busy: every
kernel launch then waits for a scheduler slice. Measured on this 2-core machine with
``yes > /dev/null`` on core 1: ``problem=lud`` runs took 213-331 ms on core 1 and 12.7 ms on
core 0 (6.0 ms with no load), and a 20-evaluation demo took 17 min instead of under a minute.
A careful benchmarker moves to the idle core; so do we, once, when the workers start.

How. Two reads of ``/proc/stat`` ``sample_s`` apart give each core's busy fraction (everything
but idle and iowait) over that window, taken while this process sleeps. A core busier than
half the window is taken: those go last, least busy first; the others keep the caller's order.
(A hog reads 1.0, a start-up burst of our own a fraction; the line at 0.5 is not tuned on data.)
The choice is made once per run and recorded with the worker's device (``cores``), so a core
that becomes busy later shows in the records' noise figures rather than moving the run. Without
``/proc/stat`` (not Linux) the order is unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

PROC_STAT = Path("/proc/stat")


def _ticks() -> dict[int, tuple[int, int]]:
    """Per core: (busy, total) jiffies since boot; empty when /proc/stat cannot be read."""
    try:
        lines = PROC_STAT.read_text().splitlines()
    except OSError:
        return {}
    out: dict[int, tuple[int, int]] = {}
    for line in lines:
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu" or not name[3:].isdigit():
            continue
        values = [int(v) for v in fields[:8]]
        idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
        out[int(name[3:])] = (sum(values) - idle, sum(values))
    return out


def busy_fractions(sample_s: float = 0.1) -> dict[int, float]:
    """Each core's busy fraction over the next ``sample_s`` seconds (0 = idle, 1 = saturated)."""
    before = _ticks()
    if not before:
        return {}
    time.sleep(sample_s)
    after = _ticks()
    out: dict[int, float] = {}
    for core, (busy0, total0) in before.items():
        busy1, total1 = after.get(core, (busy0, total0))
        out[core] = (busy1 - busy0) / (total1 - total0) if total1 > total0 else 0.0
    return out


BUSY = 0.5  # a core busier than this over the window is taken by another process

# Where :func:`idle_first` reads the load (core -> busy fraction over ``sample_s``). A seam: tests
# that are about what is done with a reading set it, instead of loading a core and hoping that
# nothing else on the machine is busy (tests/run/test_ray_executor.py).
load_reading: Callable[[float], Mapping[int, float]] = busy_fractions


def idle_first(cores: Sequence[int], sample_s: float = 0.1) -> list[int]:
    """``cores`` with the busy ones (over :data:`BUSY`) moved last, least busy first among them;
    the idle ones keep the caller's order, so an idle machine measures where it always did."""
    busy = load_reading(sample_s) if len(cores) > 1 else {}
    order = list(cores)
    return sorted(order, key=lambda c: (busy.get(c, 0.0) > BUSY, max(busy.get(c, 0.0), BUSY), order.index(c)))
