"""A table must agree with itself (issue 37, item 9).

Why: a table or cache whose space disagrees with its rows was accepted -- a knob removed from
the space, an extra one, ``rows: []``, values outside the recorded knob values -- and so was a
recorded ``time: -5.0``, which became "the known optimum -5 ms". Every reader (searchlab tables,
Kernel Tuner caches, T4 files) passes its table through :func:`checked`:

- no rows, or no row with a successful measurement (a T4 file without measurements): refused (as
  the Kernel Tuner reader already refused an empty cache);
- a row whose knobs are not exactly the space's, or a value not among its knob's values: refused,
  naming the row;
- a successful row whose objective is not a finite number: recorded as failed (``invalid``);
- a negative time (an objective named ``time``, ``*_ms`` or ``*_s``): refused.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, TypeVar

from searchlab.core.records import FailureMode, Measurement, Status
from searchlab.core.spaces import KnobSpace
from searchlab.errors import ConfigError

T = TypeVar("T")


def is_time(objective: str) -> bool:
    return objective in ("time", "runtime") or objective.endswith(("_ms", "_s", "_us", "_ns"))


def checked(given: T, where: str) -> T:
    """``given`` (an interchange Table) if it agrees with itself, non-finite objectives recorded as failed."""
    table: Any = given
    if not table.rows:
        raise ConfigError(f"{where} holds no rows: nothing to tune")
    if isinstance(table.space, KnobSpace):
        _check_knobs(table, where)
    fixed: dict[Any, Measurement] = {}
    for config, m in table.rows.items():
        if m.status is Status.OK and m.objective is not None:
            value = float(m.objective)
            if not math.isfinite(value):
                m = Measurement.failed(FailureMode.INVALID, f"recorded {table.objective_name}={m.objective!r} is "
                                       f"not a finite number", sensors=m.sensors)
            elif value < 0 and is_time(table.objective_name):
                raise ConfigError(f"{where}: row {dict(config)} records {table.objective_name}={value:g}: a time "
                                  f"cannot be negative")
        fixed[config] = m
    if not any(m.status is Status.OK for m in fixed.values()):
        raise ConfigError(f"{where}: none of its {len(fixed)} rows holds a successful measurement of "
                          f"{table.objective_name!r}: nothing to tune")
    out: T = replace(table, rows=fixed)
    return out


def _check_knobs(table: Any, where: str) -> None:
    space: KnobSpace = table.space
    names = set(space.names)
    allowed: dict[str, Any] = {}
    for knob in space.knobs:
        try:
            allowed[knob.name] = set(knob.values)
        except TypeError:  # unhashable values: compare with the tuple
            allowed[knob.name] = tuple(knob.values)
    for config in table.rows:
        keys = set(config)
        if keys != names:
            missing, extra = sorted(names - keys), sorted(keys - names)
            raise ConfigError(f"{where}: row {dict(config)} disagrees with the space's knobs {sorted(names)}"
                              + (f" (lacks {missing})" if missing else "") + (f" (has {extra})" if extra else ""))
        for name, value in config.items():
            try:
                ok = value in allowed[name]
            except TypeError:
                ok = False
            if not ok:
                raise ConfigError(f"{where}: row {dict(config)} has {name}={value!r}, not one of the space's values "
                                  f"for {name!r}")
