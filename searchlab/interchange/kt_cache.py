"""Kernel Tuner cache files, both ways: read as a table (:func:`load_kernel_tuner_cache`) and our records
written as one (:func:`kt_cache_document`, the format of benchmark_hub's tables).

**Reading.** Kernel Tuner writes every configuration it measured to a JSON cache (``tune_params``: the
parameters and their values, ``cache``: one entry per configuration, keyed by the values
joined with commas). Here its parameters become ordinal knobs, and each entry a measurement:

- a number in the objective field (``time``, ms): OK, with the recorded ``times`` as
  samples (every one kept: ``problem.sample_noise=true`` replays one of them per evaluation,
  searchlab.adapters.table) and every numeric field as a sensor (``GFLOP/s`` becomes ``GFLOP_s``), the
  objective field included, so a sensor model's objective formula (default: ``time``)
  reads the measured objective (paper 001 §4: the quality is predicted from sensors);
- ``"CompilationFailedConfig"``: FAILED(compile); ``"RuntimeFailedConfig"`` (the kernel
  failed to launch or run, typically too many resources requested for the launch):
  FAILED(launch); ``"InvalidConfig"``: FAILED(invalid);
- configurations of the product that the file does not hold were excluded by the tuner's
  restrictions, which Kernel Tuner checks before compiling: with ``missing=constraint`` (the
  default) they violate a known constraint (never sent, never sampled; INFEASIBLE if a
  searcher proposes one), with ``missing=invalid`` they are FAILED(invalid) when tested.
- configurations the file records as failed: with ``recorded_failures=hidden`` (the default)
  a searcher discovers them by testing them, as it would live (a hidden constraint, paper 001
  §2); with ``recorded_failures=known`` they are known-infeasible like the absent ones (never
  sent, never sampled, never counted), which is how Kernel Tuner 1.5's simulation mode replays
  a cache (``util.infer_restrictions_from_cache`` admits only entries without an error), so a
  comparison with its strategies can count both sides alike (docs/baselines.md, issue 22).

Each evaluation is charged the recorded compile + benchmark time (ms in the file, seconds
here: ``Measurement.charged_s``), so ``budget.charged_time_s`` budgets replay fairly.

**Writing.** Kernel Tuner's cache (``kernel_tuner.util.process_cache``): ``device_name``,
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
import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from searchlab.core.records import Config, Direction, FailureMode, Measurement, Status
from searchlab.core.sensors import SensedKnobSpace, model_from_spec
from searchlab.core.spaces import KnobSpace, OrdinalKnob
from searchlab.errors import ConfigError
from searchlab.interchange._checks import checked
from searchlab.interchange._documents import read_json
from searchlab.interchange.t4 import Record
from searchlab.interchange.table import Table, TableKnobSpace

FAILURES = {
    "CompilationFailedConfig": FailureMode.COMPILE,
    "RuntimeFailedConfig": FailureMode.LAUNCH,
    "InvalidConfig": FailureMode.INVALID,
}
MISSING = ("constraint", "invalid")
RECORDED_FAILURES = ("hidden", "known")
MODEL: dict[str, Any] = {  # generic: the objective plus the catch-all for failures (conf/problem/kernel_tuner_cache.yaml)
    "sensors": ["time", "compile_time"],
    "objective": "time",
    "direction": "minimize",
    "constraints": [],
}


@functools.lru_cache(maxsize=4096)
def _sensor_name(key: str) -> str:
    return re.sub(r"\W", "_", key)  # memoised: every entry of a cache has the same few keys


def _entry_measurement(entry: Mapping[str, Any], objective: str, keys: set[str]) -> Measurement:
    numeric = {_sensor_name(k): float(v) for k, v in entry.items()
               if k not in keys and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}
    compile_ms, bench_ms = numeric.get("compile_time", 0.0), numeric.get("benchmark_time", 0.0)
    common: dict[str, Any] = {"sensors": numeric, "compile_s": compile_ms / 1000, "run_s": bench_ms / 1000,
                              "charged_s": (compile_ms + bench_ms) / 1000}
    value = entry.get(objective)
    if isinstance(value, str):
        mode = FAILURES.get(value)
        if mode is None:
            return Measurement.failed(FailureMode.RUNTIME, f"Kernel Tuner recorded {value!r}", **common)
        return Measurement.failed(mode, f"Kernel Tuner recorded {value}", **common)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return Measurement.failed(FailureMode.INVALID, f"no usable {objective!r} value: {value!r}", **common)
    times = entry.get("times") or ()
    samples = tuple(float(t) for t in times if isinstance(t, (int, float)))
    return Measurement.ok(float(value), samples=samples, **common)


def load_kernel_tuner_cache(path: str | Path, *, missing: str = "constraint",
                            model: Mapping[str, Any] | None = None, recorded_failures: str = "hidden",
                            doc: Mapping[str, Any] | None = None) -> Table:
    """A Kernel Tuner cache file (``.json`` or ``.json.gz``) as a table (``doc``: the file, parsed already)."""
    if missing not in MISSING:
        raise ConfigError(f"problem.missing={missing!r}: must be one of {list(MISSING)}")
    if recorded_failures not in RECORDED_FAILURES:
        raise ConfigError(f"problem.recorded_failures={recorded_failures!r}: must be one of {list(RECORDED_FAILURES)}")
    if recorded_failures == "known" and missing != "constraint":
        raise ConfigError("problem.recorded_failures=known needs problem.missing=constraint "
                          "(the known-feasible set is the recorded configurations that ran)")
    path = Path(path)
    data = read_json(path, "Kernel Tuner cache") if doc is None else doc
    _check_shape(data, path)
    params: Mapping[str, list[Any]] = data["tune_params"]
    names = [str(n) for n in (data.get("tune_params_keys") or params)]
    objective = str(data.get("objective") or "time")
    try:
        knobs = tuple(OrdinalKnob(n, tuple(params[n])) for n in names)
    except (KeyError, TypeError, ValueError, ConfigError) as exc:
        raise ConfigError(f"Kernel Tuner cache {str(path)!r}: tune_params/tune_params_keys are not usable ({exc})") from None
    rows, skip = {}, set(names) | {"times", "timestamp"}
    for entry in data["cache"].values():
        try:
            config = Config({n: entry[n] for n in names})
        except (KeyError, TypeError) as exc:
            raise ConfigError(f"Kernel Tuner cache {str(path)!r}: an entry lacks parameter {exc}") from None
        rows[config] = _entry_measurement(entry, objective, skip)
    if not any(m.objective is not None for m in rows.values()):
        raise ConfigError(f"Kernel Tuner cache {str(path)!r}: none of its {len(rows)} entries has a numeric "
                          f"{objective!r} (all failed or unusable): nothing to tune")
    higher = bool(data.get("objective_higher_is_better", False))
    direction = Direction.MAXIMIZE if higher else Direction.MINIMIZE
    sensed = _sensor_name(objective)  # the objective is a sensor too, under its sanitised name
    spec = dict(model or {}) or {**MODEL, "objective": sensed, "direction": direction.value,
                                 "sensors": sorted({sensed, "compile_time"})}
    sensor_model = model_from_spec(spec, knobs=names)
    space: KnobSpace
    if missing == "constraint":
        members = frozenset(c for c, m in rows.items() if recorded_failures == "hidden" or m.status is Status.OK)
        space = TableKnobSpace(knobs, sensor_model=sensor_model, members=members)
    else:  # every product member may be tested; absent ones fail as invalid (TableProblem.evaluate)
        space = SensedKnobSpace(knobs, sensor_model=sensor_model)
    meta = {"kernel": data.get("kernel_name", ""), "problem_size": data.get("problem_size"), "missing": missing,
            "recorded_failures": recorded_failures, "product": math.prod(len(k.values) for k in knobs)}
    unit = "ms" if objective == "time" else ""
    table = Table(space, rows, direction, f"{objective}_{unit}" if unit else objective, source=str(path),
                  device=str(data.get("device_name") or ""), meta=meta)
    return checked(table, f"Kernel Tuner cache {str(path)!r}")  # rows that agree with the space (issue 37, item 9)


def _check_shape(data: Any, path: Path) -> None:
    """Refuse at load what would otherwise fail every evaluation or stall the searcher (issue 10, item 8)."""
    where = f"Kernel Tuner cache {str(path)!r}"
    if not isinstance(data, dict) or "tune_params" not in data or "cache" not in data:
        raise ConfigError(f"{where} has no 'tune_params' and 'cache': not a Kernel Tuner cache file")
    params, cache = data["tune_params"], data["cache"]
    if not isinstance(params, dict) or not params or not all(isinstance(v, list) and v for v in params.values()):
        raise ConfigError(f"{where}: 'tune_params' must map each parameter to a non-empty list of values")
    if not isinstance(cache, dict) or not cache:
        raise ConfigError(f"{where}: 'cache' holds no entry: nothing was recorded")
    if not all(isinstance(e, dict) for e in cache.values()):
        raise ConfigError(f"{where}: every 'cache' entry must be a mapping of parameter values and results")

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
        "objective": key,
    }
    if direction is Direction.MAXIMIZE:
        doc["objective_higher_is_better"] = True
    doc["cache"] = cache  # last: Kernel Tuner reads a file that does not end in "}}}" as an unclosed cache
    return doc


_T4_TO_MS = {"seconds": 1000.0, "s": 1000.0, "milliseconds": 1.0, "miliseconds": 1.0, "ms": 1.0,
             "microseconds": 1e-3, "us": 1e-3, "nanoseconds": 1e-6, "ns": 1e-6}


def kt_cache_from_t4(doc: Mapping[str, Any], tune_params: Mapping[str, Sequence[Any]], *, kernel: str,
                     problem_size: Any, device: str, objective: str, higher_is_better: bool) -> dict[str, Any]:
    """Kernel Tuner's cache of a T4 results document (checked already: :func:`searchlab.interchange.t4.read_t4`),
    for Kernel Tuner's simulation mode where the brute-forced space exists only as T4 (issue 51: the hub's
    hyperparameter spaces). Kernel Tuner keys an entry by the values joined with commas in ``tune_params``'s order
    and charges ``compile_time + verification_time + benchmark_time`` (ms) against a time limit; here those are the
    T4 row's ``compilation``, ``validation`` and the sum of its ``runtimes`` (what the methodology's time axis
    counts), ``times`` its runtimes. A row that failed keeps Kernel Tuner's error string as its objective
    (``compile``: ``CompilationFailedConfig``, ``constraints``: ``InvalidConfig``, any other: ``RuntimeFailedConfig``);
    ``framework_time`` and ``strategy_time`` are measured again by Kernel Tuner when it replays, so they are 0."""
    unit = str((doc.get("metadata") or {}).get("timeunit", "seconds")).lower()
    scale = _T4_TO_MS.get(unit, 1.0)
    names = list(tune_params)
    errors = {"compile": "CompilationFailedConfig", "constraints": "InvalidConfig"}
    cache: dict[str, Any] = {}
    for row in doc["results"]:
        conf, times = row["configuration"], row.get("times") or {}
        key = ",".join(str(conf[n]) for n in names)
        if key in cache:
            continue  # T4 is a history: the first record of a configuration, as read_t4 keeps it
        entry: dict[str, Any] = {n: conf[n] for n in names}
        values = {m.get("name"): m.get("value") for m in row.get("measurements") or () if isinstance(m, Mapping)}
        for name, value in values.items():
            if isinstance(name, str) and name not in entry:
                entry[name] = value
        if row.get("invalidity") != "correct":
            entry[objective] = errors.get(str(row.get("invalidity")), "RuntimeFailedConfig")
        runtimes = [scale * float(t) for t in times.get("runtimes") or () if isinstance(t, (int, float))]
        entry.update(times=runtimes, compile_time=scale * _ms(times.get("compilation", times.get("compilation_time"))),
                     verification_time=scale * _ms(times.get("validation")), benchmark_time=sum(runtimes),
                     framework_time=0.0, strategy_time=0.0)
        cache[key] = entry
    out: dict[str, Any] = {"device_name": device, "kernel_name": kernel, "problem_size": problem_size,
                           "tune_params_keys": names, "tune_params": {n: list(v) for n, v in tune_params.items()},
                           "objective": objective}
    if higher_is_better:
        out["objective_higher_is_better"] = True
    out["cache"] = cache  # last: Kernel Tuner reads a file that does not end in "}}}" as an unclosed cache
    return out


def _ms(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        else 0.0
