"""Our records written as a Kernel Tuner cache file (the format of benchmark_hub's tables).

Kernel Tuner's cache (``kernel_tuner.util.process_cache``): ``device_name``,
``kernel_name``, ``problem_size``, ``tune_params_keys``, ``tune_params`` (each parameter's
values), ``objective`` and ``cache``: one entry per configuration, keyed by the values
joined with commas, holding the parameters, the objective, ``times`` and the timing fields
(milliseconds). Failures are the strings Kernel Tuner writes: FAILED(compile) is
``CompilationFailedConfig``; INFEASIBLE / FAILED(invalid) is ``InvalidConfig``; every other
failure (launch, resources, runtime, wrong output, timeout, crash) is
``RuntimeFailedConfig``, since Kernel Tuner has no finer classes. A time objective in
seconds (``time_s``) becomes Kernel Tuner's ``time`` in ms; any other objective keeps its
name and value, with ``objective_higher_is_better`` from the direction. Only the first
record of each configuration is kept (a cache has one entry per configuration).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from searchlab.core.records import Direction, FailureMode, Status
from searchlab.interchange.t4 import Record

_FAILURES = {FailureMode.COMPILE: "CompilationFailedConfig", FailureMode.INVALID: "InvalidConfig",
             FailureMode.CONSTRAINT: "InvalidConfig"}


def _objective(name: str) -> tuple[str, float]:
    """Kernel Tuner's objective key and the factor from our unit to its unit."""
    if name in ("time_s", "time"):  # ours: seconds (time_s); Kernel Tuner replays: already ms
        return "time", 1000.0 if name == "time_s" else 1.0
    if name == "time_ms":
        return "time", 1.0
    return name, 1.0


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def kt_cache_document(records: Iterable[Record], names: Sequence[str], values: Mapping[str, Sequence[Any]], *,
                      objective: str, direction: Direction = Direction.MINIMIZE, device: str = "",
                      kernel: str = "", problem_size: Any = None) -> dict[str, Any]:
    key, scale = _objective(objective)
    # Samples are seconds except in Kernel Tuner replays (already ms): scale them like the objective.
    cache: dict[str, Any] = {}
    for record in records:
        m = record.measurement
        entry_key = ",".join(str(record.config[n]) for n in names)
        if entry_key in cache:
            continue
        entry: dict[str, Any] = {n: _plain(record.config[n]) for n in names}
        if m.status is Status.OK and m.objective is not None:
            entry[key] = m.objective * scale
        else:
            entry[key] = _FAILURES.get(m.failure_mode, "RuntimeFailedConfig")
        entry["times"] = [s * scale for s in m.samples]
        entry["compile_time"] = m.compile_s * 1000.0
        entry["benchmark_time"] = m.run_s * 1000.0
        entry.update(verification_time=0, strategy_time=0, framework_time=0)
        for sensor, v in m.sensors.items():
            entry.setdefault(sensor, v)
        if record.timestamp is not None:
            entry["timestamp"] = str(datetime.datetime.fromtimestamp(record.timestamp, datetime.UTC))
        cache[entry_key] = entry
    doc: dict[str, Any] = {
        "device_name": device, "kernel_name": kernel, "problem_size": problem_size if problem_size is not None else [],
        "tune_params_keys": list(names), "tune_params": {n: [_plain(v) for v in values[n]] for n in names},
        "objective": key, "cache": cache,
    }
    if direction is Direction.MAXIMIZE:
        doc["objective_higher_is_better"] = True
    return doc
