"""T4, the community's tuning-results format, read as a table and written from any records.

A T4 document (schema ``T4-results-1.0.0.json``) lists evaluations: ``configuration``,
``invalidity`` (correct, compile, runtime, correctness, timeout, constraints),
``correctness``, ``times`` (``compilation_time``, which Kernel Tuner 1.5 writes as
``compilation``; ``runtimes``, ``framework``, ``search_algorithm``, ``validation``,
``benchmark``), ``measurements`` (name, value, unit) and ``objectives`` (measurement
names). Time unit: ``metadata.timeunit`` (Kernel Tuner writes milliseconds); without one,
seconds (autotuning-methodology's default). Objective values keep the file's unit, as
autotuning-methodology does; times (and the samples, from ``runtimes``) become seconds.

Reading (:func:`read_t4`), each configuration becomes a row (the first record of a
configuration that appears more than once: T4 is a history):
``correct`` -> OK, ``compile`` -> FAILED(compile), ``runtime`` -> FAILED(runtime),
``correctness`` -> FAILED(wrong_output), ``timeout`` -> TIMEOUT; ``constraints`` rows and
configurations of the parameter product absent from the file violate a *known*
constraint (never sampled), as with Kernel Tuner caches (searchlab/adapters/knobs/kernel_tuner.py).
Each row is charged its compilation + benchmark (or summed runtimes) time.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchlab.core.records import Config, Direction, FailureMode, Measurement, Status, _freeze
from searchlab.core.spaces import OrdinalKnob
from searchlab.errors import ConfigError
from searchlab.interchange._checks import checked
from searchlab.interchange._documents import T4_VERSION, load_document, validate
from searchlab.interchange.table import Table, TableKnobSpace

UNITS = {"seconds": 1.0, "s": 1.0, "milliseconds": 1e-3, "miliseconds": 1e-3, "ms": 1e-3,
         "microseconds": 1e-6, "us": 1e-6, "nanoseconds": 1e-9, "ns": 1e-9}
_FAIL = {"compile": FailureMode.COMPILE, "runtime": FailureMode.RUNTIME, "correctness": FailureMode.WRONG_OUTPUT}
_INVALIDITY = {FailureMode.COMPILE: "compile", FailureMode.WRONG_OUTPUT: "correctness",
               FailureMode.CONSTRAINT: "constraints", FailureMode.TIMEOUT: "timeout"}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _seconds(times: Mapping[str, Any], key: str, scale: float) -> float:
    value = times.get(key)
    if isinstance(value, list):
        return sum(v for v in (_number(x) for x in value) if v is not None) * scale
    v = _number(value)
    return 0.0 if v is None else v * scale


def _row(entry: Mapping[str, Any], objective: str, scale: float) -> Measurement:
    times = entry.get("times") or {}
    compile_s = _seconds(times, "compilation_time", scale) or _seconds(times, "compilation", scale)
    run_s = _seconds(times, "benchmark", scale) or _seconds(times, "runtimes", scale)
    samples = tuple(v * scale for v in (_number(x) for x in times.get("runtimes") or ()) if v is not None)
    measured = {str(m.get("name")): m.get("value") for m in entry.get("measurements") or () if isinstance(m, dict)}
    sensors = {k: v for k, v in ((k, _number(v)) for k, v in measured.items()) if v is not None}
    common: dict[str, Any] = {"sensors": sensors, "compile_s": compile_s, "run_s": run_s, "charged_s": compile_s + run_s,
                              "samples": samples, "extra": {"timestamp": str(entry.get("timestamp", ""))}}
    invalidity = entry["invalidity"]
    if invalidity == "timeout":
        return Measurement(Status.TIMEOUT, message="T4: timeout", **common)
    if invalidity in _FAIL:
        return Measurement.failed(_FAIL[invalidity], f"T4: {invalidity}", **common)
    value = _number(measured.get(objective))
    if value is None:
        return Measurement.failed(FailureMode.INVALID, f"T4: no numeric measurement {objective!r}", **common)
    return Measurement.ok(value, **common)


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) and not isinstance(value, bool) else (1, str(value))


def read_t4(path: str | Path, *, objective: str | None = None, direction: str = "minimize",
            doc: Mapping[str, Any] | None = None) -> Table:
    """A T4 results file as a table (see the module docstring; ``doc``: the file, parsed already)."""
    if direction not in ("minimize", "maximize"):
        raise ConfigError(f"problem.direction={direction!r}: must be minimize or maximize")
    doc = load_document(path, "problem.path") if doc is None else doc
    validate(doc, "T4", f"T4 file {str(path)!r}")
    results = doc.get("results") or []
    if not results:
        raise ConfigError(f"T4 file {str(path)!r} holds no results")
    unit = str((doc.get("metadata") or {}).get("timeunit", "seconds")).lower()
    if unit not in UNITS:
        raise ConfigError(f"T4 file {str(path)!r}: metadata.timeunit={unit!r} is not one of {sorted(UNITS)}")
    names = list(results[0]["configuration"])
    objective = objective or next(iter(results[0].get("objectives") or []), None) or "time"
    rows: dict[Config, Measurement] = {}
    excluded: set[Config] = set()
    values: dict[str, set[Any]] = {n: set() for n in names}
    for i, entry in enumerate(results):
        conf = entry["configuration"]
        if sorted(conf) != sorted(names):
            raise ConfigError(f"T4 file {str(path)!r}: results[{i}] sets parameters {sorted(conf)}, not {sorted(names)}")
        try:
            config = Config({n: _freeze(conf[n]) for n in names})
        except TypeError as exc:
            raise ConfigError(f"T4 file {str(path)!r}: results[{i}]: {exc}") from None
        for n in names:
            values[n].add(config[n])
        if entry["invalidity"] == "constraints":
            excluded.add(config)
        elif config not in rows:
            rows[config] = _row(entry, objective, UNITS[unit])
    knobs = tuple(OrdinalKnob(n, tuple(sorted(values[n], key=_sort_key))) for n in names)
    space = TableKnobSpace(knobs, members=frozenset(rows))
    meta = {"objective": objective, "timeunit": unit, "records": len(results), "constraints": len(excluded - set(rows)),
            "metadata": doc.get("metadata") or {}}
    return checked(Table(space, rows, Direction(direction), objective, source=str(path), meta=meta),
                   f"T4 file {str(path)!r}")  # at least one measurement, rows that agree (issue 37, item 9)


@dataclass(frozen=True)
class Record:
    """One evaluation to write: a configuration, what was measured, and when."""

    config: Config
    measurement: Measurement
    timestamp: float | None = None


def _invalidity(m: Measurement) -> str:
    if m.status is Status.OK:
        return "correct"
    if m.status is Status.TIMEOUT:
        return "timeout"
    return _INVALIDITY.get(m.failure_mode, "runtime")


def _json_value(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def t4_entry(record: Record, objective: str, unit: str = "") -> dict[str, Any]:
    m = record.measurement
    measurements = [{"name": objective, "value": m.objective if m.objective is not None else "invalid", "unit": unit}]
    measurements += [{"name": k, "value": v, "unit": "s" if k.endswith("_s") else ""}
                     for k, v in m.sensors.items() if k != objective and _number(v) is not None]
    entry: dict[str, Any] = {
        "configuration": {k: _json_value(v) for k, v in record.config.items()},
        "times": {"compilation_time": m.compile_s, "runtimes": list(m.samples), "benchmark": m.run_s,
                  "framework": 0.0, "search_algorithm": 0.0, "validation": 0.0},
        "invalidity": _invalidity(m),
        "correctness": 0 if m.failure_mode is FailureMode.WRONG_OUTPUT else 1,
        "measurements": measurements,
        "objectives": [objective],
    }
    if record.timestamp is not None:
        entry["timestamp"] = datetime.datetime.fromtimestamp(record.timestamp, datetime.UTC).isoformat()
    return entry


def t4_document(records: Iterable[Record], objective: str, *, unit: str = "", source: str = "") -> dict[str, Any]:
    """A T4 results document (times in seconds), validated before it is returned."""
    doc = {"schema_version": T4_VERSION, "results": [t4_entry(r, objective, unit) for r in records],
           "metadata": {"timeunit": "seconds", "generator": "searchlab", "source": source}}
    validate(doc, "T4", "exported T4 document")
    return doc
