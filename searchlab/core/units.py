"""The objective's time unit: one unit per run, chosen from the size of its best value.

Used by the run's verdict and summary (:mod:`searchlab.run.verdict`) and by problems that report
in the run's units (the Futhark adapter's report), so it sits in the core layer.
"""

from __future__ import annotations

TIME_SUFFIXES = {"_s": 1.0, "_ms": 1e-3, "_us": 1e-6, "_ns": 1e-9}


def seconds_per_unit(objective_name: str) -> float | None:
    """Seconds in one unit of the objective when its name says it is a time (``time_s``, ``time_ms``)."""
    for suffix, factor in TIME_SUFFIXES.items():
        if objective_name.endswith(suffix):
            return factor
    return None


def run_time_unit(objective_name: str, value: float | None) -> tuple[str, float]:
    """The run's time unit (label, factor from seconds): s, ms or µs, by the size of ``value``
    (the best objective), so that every time of a run reads in one unit; ms when unknown."""
    per = seconds_per_unit(objective_name)
    if per is None or value is None or value == 0:
        return "ms", 1e3
    seconds = abs(value) * per
    return ("s", 1.0) if seconds >= 1 else ("ms", 1e3) if seconds >= 1e-3 else ("µs", 1e6)


def show(objective_name: str, value: float, unit: tuple[str, float]) -> str:
    """``value`` of the objective in the run's unit (``7.32 ms``), or as it is when not a time."""
    per = seconds_per_unit(objective_name)
    if per is None:
        return f"{value:.6g} ({objective_name})"
    return f"{value * per * unit[1]:.4g} {unit[0]}"
