"""The machine's load before a run measures, said in one line (issue 54, item 1).

Why. A new user ran ``make demo`` on a 2-core machine that other jobs kept at load 5-12: it took 16
minutes, ended "undecided" and nothing told them up front that the machine was too busy to measure.
A careful benchmarker looks first. So before its workers start, a run that measures (``Problem.noisy``:
device problems, host timings) reads the load once: each usable core's busy fraction over a short
window (``searchlab.run.execution._cores.load_reading``, the seam tests set, so no test depends on how
busy the machine is) and the 1-minute load average. When other processes hold cores, one line on
stderr says how many, what that does to the measurements, and how to get a quieter slot. The reading
is kept in ``summary.json["load"]``, and an undecided verdict names it (searchlab.run.verdict).

What a busy core does (docs/measurement.md, "Busy cores"): workers measure on idle cores first; a
measurement that shares its core with another process waits for scheduler slices (``problem=lud``:
213-331 ms on a loaded core against 12.7 ms on a free one), so a run is slower and its measurements
noisier, and the confirm phase is more likely to end undecided.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from searchlab.run.execution import _cores

SAMPLE_S = 0.1  # as idle_first (_cores): a hog reads 1.0 at 10 ms ticks; short beside any device run


@dataclass(frozen=True)
class Load:
    """One reading: the usable cores, each one's busy fraction over ``sample_s``, the load average."""

    cores: tuple[int, ...]
    busy: Mapping[int, float] = field(default_factory=dict)
    load_average: float | None = None
    sample_s: float = SAMPLE_S

    @property
    def busy_cores(self) -> tuple[int, ...]:
        """The usable cores other processes held (busier than ``_cores.BUSY`` while this one slept)."""
        return tuple(c for c in self.cores if self.busy.get(c, 0.0) > _cores.BUSY)

    def to_dict(self) -> dict[str, Any]:
        return {"cores": len(self.cores), "busy_cores": len(self.busy_cores),
                "busy": {str(c): round(self.busy.get(c, 0.0), 3) for c in self.cores},
                "load_average": self.load_average, "sample_s": self.sample_s}


def read_load(sample_s: float = SAMPLE_S) -> Load:
    """The load now: the cores this process may use and how busy each was over ``sample_s``."""
    try:
        cores = tuple(sorted(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        cores = tuple(range(os.cpu_count() or 1))
    try:
        average: float | None = round(os.getloadavg()[0], 2)
    except OSError:
        average = None
    return Load(cores, dict(_cores.load_reading(sample_s)), average, sample_s)


def load_line(load: Load) -> str | None:
    """The one line for a busy machine, or None when no usable core is held by another process."""
    busy = load.busy_cores
    if not busy:
        return None
    n = len(load.cores)
    shares = ", ".join(f"core {c} {load.busy.get(c, 0.0):.0%}" for c in busy)
    average = f"; load average {load.load_average:.1f}" if load.load_average is not None else ""
    held = f"all {n} cores" if len(busy) == n else f"{len(busy)} of {n} cores"
    if len(busy) == n:
        effect = ("every measurement shares a core with them: expect times up to about 2x longer and noisier, a "
                  "slower run, and a confirm phase that may end undecided")
    else:
        effect = ("measurements go to the idle cores first; a worker beyond them (executor.workers) shares a busy "
                  "core, and load that moves onto a measuring core makes its times longer and noisier")
    quieter = ("for a quieter slot: wait until they finish, lower their priority (renice -n 19 -p PID), or "
               "measure with fewer workers than idle cores (executor.workers=N)")
    return (f"searchlab: load: other processes keep {held} busy ({shares} over {load.sample_s:g} s{average}): "
            f"{effect}; {quieter}")


def announce_load(problem: Any, quiet: bool) -> Load | None:
    """Read the load before a run that measures (``problem.noisy``), and say it when cores are held
    (unless ``quiet``: a study's cells); None for a run that measures nothing (a replay)."""
    if not getattr(problem, "noisy", False):
        return None
    load = read_load()
    line = load_line(load)
    if line and not quiet:
        import sys

        print(line, file=sys.stderr, flush=True)
    return load
