"""``kernel_tuner_cache``: a Kernel Tuner cache file replayed as a table problem.

Kernel Tuner writes every configuration it measured to a JSON cache (``tune_params``: the
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
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from searchlab.adapters.table import TableProblem
from searchlab.core.records import Config, Direction, FailureMode, Measurement, Status
from searchlab.core.schema import EMPTY
from searchlab.core.sensors import SensedKnobSpace, model_from_spec
from searchlab.core.spaces import KnobSpace, OrdinalKnob
from searchlab.errors import ConfigError
from searchlab.interchange import read_json
from searchlab.interchange._checks import checked
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
                            model: Mapping[str, Any] | None = None, recorded_failures: str = "hidden") -> Table:
    """A Kernel Tuner cache file (``.json`` or ``.json.gz``) as a table."""
    if missing not in MISSING:
        raise ConfigError(f"problem.missing={missing!r}: must be one of {list(MISSING)}")
    if recorded_failures not in RECORDED_FAILURES:
        raise ConfigError(f"problem.recorded_failures={recorded_failures!r}: must be one of {list(RECORDED_FAILURES)}")
    if recorded_failures == "known" and missing != "constraint":
        raise ConfigError("problem.recorded_failures=known needs problem.missing=constraint "
                          "(the known-feasible set is the recorded configurations that ran)")
    path = Path(path)
    data = read_json(path, "Kernel Tuner cache")
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


class KernelTunerCache(TableProblem):
    """Replay a Kernel Tuner cache: a look-up charged the recorded compile + benchmark time."""

    name = "kernel_tuner_cache"

    def __init__(self, path: str = "???", missing: str = "constraint", model: Mapping[str, Any] = EMPTY,
                 recorded_failures: str = "hidden", **replay: Any) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            path: a Kernel Tuner cache file, e.g. ../shared/data/kernel_tuner/convolution_A100.json.gz
            missing: constraint: absent configurations are known-infeasible | invalid: FAILED(invalid)
            model: sensor model (default: objective + failures)
            recorded_failures: hidden: failed entries fail when tested | known: known-infeasible (KT simulation)
            replay: sample_noise (draw one of the entry's recorded times), noise_seed (TableProblem)
        """
        if not path or path == "???":
            raise ConfigError("problem=kernel_tuner_cache needs problem.path=<Kernel Tuner cache .json[.gz]>")
        table = load_kernel_tuner_cache(path, missing=missing, model=model, recorded_failures=recorded_failures)
        super().__init__(table=table, path=path, **replay)
        self.recorded_failures = recorded_failures

    def fingerprint_params(self) -> Mapping[str, Any]:
        base = super().fingerprint_params()  # a failed entry is another outcome when it is known beforehand
        return {**base, "recorded_failures": "known"} if self.recorded_failures == "known" else base
