"""A brute-forced space in T4, read for the autotuning methodology: every row checked before the package sees it.

``searchlab reproduce`` hands a T4 file to autotuning_methodology's ``SearchspaceStatistics``, which trusts it: a
string objective is a ``TypeError``, ``-inf`` becomes the optimum, a negative time shortens the budget, a key no
row records is an assertion, a configuration outside the T1 space silently changes the baseline. Here the file is
read with the bounded reader (:func:`searchlab.interchange.load_document`), its top level validated against the T4
schema, and every row checked in Python (the schema's rules for a row, and the ones above): any violation is one
:class:`~searchlab.errors.ConfigError` naming the row, the value and the rule (issue 51, item 3). Validating the
4 000-row hub files with ``jsonschema`` took 0.5 s each; these checks cover the same rules for a row in a tenth.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError
from searchlab.interchange._checks import is_time
from searchlab.interchange._documents import load_document, validate

__all__ = ["ERROR_VALUES", "T4Space", "infer_objective", "read_t4_space"]

INVALIDITY = ("timeout", "compile", "runtime", "correctness", "constraints", "correct")
ERROR_VALUES = ("", "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig")  # what the package reads as failed


class T4Space:
    """The checked document (``doc``, given to the package as it is) and what was learnt reading it."""

    def __init__(self, path: Path, doc: Mapping[str, Any], objective: str, valid: int) -> None:
        self.path, self.doc, self.objective, self.valid = path, doc, objective, valid


def infer_objective(doc: Mapping[str, Any], shown: str) -> str:
    """The objective as the reference infers it: the first row's ``objectives``, which must hold exactly one."""
    results = doc.get("results")
    first = results[0] if isinstance(results, list) and results and isinstance(results[0], Mapping) else {}
    objectives = first.get("objectives")
    if not isinstance(objectives, list) or len(objectives) != 1 or not isinstance(objectives[0], str):
        raise ConfigError(f"{shown}: the objective cannot be inferred: its first row's 'objectives' is {objectives!r}, "
                          "not one name (give objective_performance_keys; the reference refuses this too)")
    return objectives[0]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _time(value: Any, where: str) -> None:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not _number(item) or not math.isfinite(item) or item < 0:
            raise ConfigError(f"{where}={item!r}: a time must be a finite number >= 0")


def _objective_value(row: Mapping[str, Any], objective: str, where: str) -> float | None:
    found = [m for m in row.get("measurements") or () if isinstance(m, Mapping) and m.get("name") == objective]
    if len(found) > 1:
        raise ConfigError(f"{where}: measures {objective!r} {len(found)} times (one value per row)")
    if not found:
        runtimes = (row.get("times") or {}).get("runtimes")
        if objective == "time" and isinstance(runtimes, list) and runtimes:
            return None  # the package takes the mean of the runtimes
        if row.get("invalidity") == "correct":
            raise ConfigError(f"{where}: records no measurement {objective!r}")
        return None
    value: Any = found[0].get("value")
    if isinstance(value, str):
        if value not in ERROR_VALUES:
            raise ConfigError(f"{where}: {objective}={value!r}: not a number nor one of Kernel Tuner's failure names "
                              f"{list(ERROR_VALUES[1:])}")
        return None
    if not _number(value) or not math.isfinite(value):
        raise ConfigError(f"{where}: {objective}={value!r}: must be a finite number")
    if value < 0 and is_time(objective):
        raise ConfigError(f"{where}: {objective}={value!r}: a time cannot be negative")
    return float(value) if row.get("invalidity") == "correct" else None


def _row(row: Any, i: int, objective: str, space: Mapping[str, Sequence[Any]], shown: str) -> float | None:
    where = f"{shown}: results[{i}]"
    if not isinstance(row, Mapping):
        raise ConfigError(f"{where} is {type(row).__name__}, not a mapping")
    for key in ("configuration", "times", "invalidity", "correctness", "measurements"):
        if key not in row:
            raise ConfigError(f"{where} has no {key!r} (a T4 row here needs configuration, times, invalidity, "
                              "correctness and measurements)")
    conf, times = row["configuration"], row["times"]
    if not isinstance(conf, Mapping) or set(conf) != set(space):
        got = sorted(conf) if isinstance(conf, Mapping) else conf
        raise ConfigError(f"{where}: configuration sets {got}, not the T1 file's parameters {sorted(space)}")
    for name, value in conf.items():
        if value not in space[name]:
            raise ConfigError(f"{where}: {name}={value!r} is not one of the T1 file's values for {name!r}")
    if row["invalidity"] not in INVALIDITY or not _number(row["correctness"]):
        raise ConfigError(f"{where}: invalidity={row['invalidity']!r} (one of {list(INVALIDITY)}) and a numeric "
                          f"correctness are required")
    if not isinstance(times, Mapping):
        raise ConfigError(f"{where}: times={times!r} must be a mapping of time names to numbers")
    for key, value in times.items():
        _time(value, f"{where}: times.{key}")
    measurements = row.get("measurements", [])
    if not isinstance(measurements, list) or not all(isinstance(m, Mapping) for m in measurements):
        raise ConfigError(f"{where}: measurements must be a list of {{name, value, unit}}")
    return _objective_value(row, objective, where)


def read_t4_space(path: str | Path, t1_space: Mapping[str, Sequence[Any]], time_keys: Sequence[str],
                  objective: str | None = None, *, what: str = "space file") -> T4Space:
    """The T4 file at ``path`` checked against the T1 file's space (``name -> values``), with ``objective`` (None:
    inferred as the reference infers it) and the time keys the experiment counts."""
    shown = f"{what} {str(path)!r}"
    doc = load_document(path, what)
    results = doc.get("results")
    if not isinstance(results, list) or not results:
        raise ConfigError(f"{shown} holds no results")
    validate({k: v for k, v in doc.items() if k != "results"} | {"results": []}, "T4", shown)
    name = objective or infer_objective(doc, shown)
    values = [v for v in (_row(r, i, name, t1_space, shown) for i, r in enumerate(results)) if v is not None]
    if len(values) < 2:
        raise ConfigError(f"{shown}: {len(values)} row(s) hold a valid {name!r}: the methodology needs at least two")
    if min(values) == max(values):
        raise ConfigError(f"{shown}: every valid row records {name}={values[0]!r}: the score divides by the spread "
                          "between the optimum and random search, which is zero here")
    for key in time_keys:
        if not any(key in r["times"] for r in results):
            raise ConfigError(f"{shown}: no row records times.{key}, which the experiment's objective_time_keys count")
    unit = str((doc.get("metadata") or {}).get("timeunit", "seconds")).lower()
    if unit not in ("seconds", "s", "milliseconds", "miliseconds", "ms", "microseconds", "nanoseconds", "ns"):
        raise ConfigError(f"{shown}: metadata.timeunit={unit!r} is not a unit the methodology converts")
    return T4Space(Path(path), doc, name, len(values))
