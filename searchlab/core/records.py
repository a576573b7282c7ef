"""Typed, frozen records: configurations, candidates, measurements, results.

A result is what one evaluation produced and what the store keeps; searchers learn from the
status and failure mode as well as the objective (paper 001 §4.1 learns from failures).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Union

Scalar = Union[int, float, str, bool, None]
Value = Union[Scalar, tuple["Value", ...]]


def as_int(value: Value) -> int:
    """A knob value used as an integer (thresholds, sizes); a tuple or None is refused."""
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"{value!r} is not an integer value")


class Direction(StrEnum):
    MINIMIZE = "minimize"
    MAXIMIZE = "maximize"


class Status(StrEnum):
    OK = "ok"
    INFEASIBLE = "infeasible"  # a known constraint rules it out; never sent to a device
    FAILED = "failed"  # ran and failed; see FailureMode
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # the worker process died


class FailureMode(StrEnum):
    NONE = "none"
    CONSTRAINT = "constraint"  # known constraint violated (INFEASIBLE)
    COMPILE = "compile"
    RESOURCES = "resources"  # local memory, registers, work-group size, code size
    LAUNCH = "launch"
    WRONG_OUTPUT = "wrong_output"
    RUNTIME = "runtime"  # any other exception in the problem
    INVALID = "invalid"  # recorded as invalid in a replayed table
    TIMEOUT = "timeout"
    CRASH = "crash"


def _freeze(value: Any) -> Value:
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"configuration value {value!r} is not a number, string, bool or list")


_PLAIN = frozenset({int, float, str, bool, type(None)})  # already frozen: taken as is


class Config(Mapping[str, Value]):
    """An immutable, hashable configuration (knob name -> value) with a canonical key.

    Searchers make many of these per proposal (neighbourhoods, populations), so the canonical
    key is computed when first asked for and the hash once (issue 23, item 3)."""

    __slots__ = ("_hash", "_items", "_key", "_map")

    def __init__(self, items: Mapping[str, Any] | None = None, /, **kwargs: Any) -> None:
        merged = dict(items or {}, **kwargs)
        self._items: tuple[tuple[str, Value], ...] = tuple(sorted(
            (k if type(k) is str else str(k), v if type(v) in _PLAIN else _freeze(v)) for k, v in merged.items()))
        self._map = dict(self._items)
        self._key: str | None = None
        self._hash = hash(self._items)

    @classmethod
    def from_sorted(cls, items: tuple[tuple[str, Value], ...]) -> Config:
        """A configuration from items already in canonical form -- names (str) in sorted order,
        values frozen (what :meth:`items` of another Config gives); not checked."""
        config = cls.__new__(cls)
        config._items, config._map, config._key, config._hash = items, dict(items), None, hash(items)
        return config

    @classmethod
    def from_json(cls, text: str) -> Config:
        from searchlab.core.jsondata import loads

        return cls(loads(text))

    def __getitem__(self, name: str) -> Value:
        return self._map[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        return _config_of, (self._items,)  # the hash is per process (string hashing): recomputed there

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return self._items == other._items
        return isinstance(other, Mapping) and dict(self._map) == dict(other)

    def __repr__(self) -> str:
        return f"Config({self._map!r})"

    @property
    def key(self) -> str:
        """Canonical JSON, equal for equal configurations (cache and store key)."""
        if self._key is None:
            self._key = _KEY_JSON(self._items)
        return self._key

    def to_json(self) -> str:
        return json.dumps(self._map, sort_keys=True)


# json.dumps(items, separators=(",", ":")), without building an encoder per call (a replay makes
# a key per look-up: issue 23, item 3); the same text
_KEY_JSON = json.JSONEncoder(separators=(",", ":")).encode


def _config_of(items: tuple[tuple[str, Value], ...]) -> Config:
    return Config.from_sorted(items)


def _ro(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Measurement:
    """What a problem reports for one configuration."""

    status: Status
    objective: float | None = None
    samples: tuple[float, ...] = ()
    failure_mode: FailureMode = FailureMode.NONE
    message: str = ""
    sensors: Mapping[str, float] = field(default_factory=dict)
    datasets: Mapping[str, float] = field(default_factory=dict)
    compile_s: float = 0.0
    run_s: float = 0.0
    charged_s: float | None = None  # time charged to the budget; None: compile_s + run_s
    log: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status is Status.OK:
            if self.objective is None or not math.isfinite(self.objective):
                raise ValueError(f"an OK measurement needs a finite objective, got {self.objective!r}")
        elif self.failure_mode is FailureMode.NONE:
            default = {
                Status.INFEASIBLE: FailureMode.CONSTRAINT,
                Status.TIMEOUT: FailureMode.TIMEOUT,
                Status.CRASHED: FailureMode.CRASH,
            }.get(self.status, FailureMode.RUNTIME)
            object.__setattr__(self, "failure_mode", default)
        object.__setattr__(self, "samples", tuple(float(s) for s in self.samples))
        for name in ("sensors", "datasets", "extra"):
            object.__setattr__(self, name, _ro(getattr(self, name)))

    def drawn(self, value: float, sensors: Mapping[str, float], extra: Mapping[str, Any]) -> Measurement:
        """This OK measurement with ``value`` (one of its finite samples) as objective and only
        sample: what a noisy replay shows per look-up. Built without ``__post_init__``'s copies
        (the other fields are frozen already), because a replay makes one per evaluation."""
        if self.status is not Status.OK or not math.isfinite(value):
            return replace(self, objective=value, samples=(value,), sensors=sensors, extra=extra)
        out = object.__new__(Measurement)
        fields = dict(self.__dict__)
        fields.update(objective=float(value), samples=(float(value),), sensors=MappingProxyType(dict(sensors)),
                      extra=MappingProxyType(dict(extra)))
        object.__setattr__(out, "__dict__", fields)
        return out

    @classmethod
    def ok(cls, objective: float, **kwargs: Any) -> Measurement:
        return cls(Status.OK, objective=float(objective), **kwargs)

    @classmethod
    def failed(cls, mode: FailureMode, message: str = "", **kwargs: Any) -> Measurement:
        return cls(Status.FAILED, failure_mode=mode, message=message, **kwargs)

    @classmethod
    def infeasible(cls, message: str, **kwargs: Any) -> Measurement:
        return cls(Status.INFEASIBLE, failure_mode=FailureMode.CONSTRAINT, message=message, **kwargs)

    @property
    def is_subproblem(self) -> bool:
        """A sub-problem measurement (e.g. DP timing DFT_m for m | n): recorded and told,
        but never the run's best (``extra["subproblem"]`` names the sub-problem)."""
        return bool(self.extra.get("subproblem"))

    @property
    def charged(self) -> float:
        return self.compile_s + self.run_s if self.charged_s is None else self.charged_s


@dataclass(frozen=True)
class Candidate:
    """A proposal: ``config`` in the problem's space, ``proposal`` in the searcher's view."""

    id: int
    config: Config
    proposal: Config
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "meta", _ro(self.meta))


@dataclass(frozen=True)
class Result:
    """A finished evaluation, as stored and as told to the searcher."""

    candidate: Candidate
    measurement: Measurement
    worker: str = ""
    device: str = ""
    t_submit: float = 0.0
    t_start: float = 0.0
    t_end: float = 0.0
    cache_hit: bool = False

    @property
    def id(self) -> int:
        return self.candidate.id

    @property
    def config(self) -> Config:
        return self.candidate.config

    @property
    def status(self) -> Status:
        return self.measurement.status

    @property
    def objective(self) -> float | None:
        return self.measurement.objective

    @property
    def ok(self) -> bool:
        return self.measurement.status is Status.OK


def loss(measurement: Measurement, direction: Direction) -> float:
    """Smaller is better; failures and sub-problem measurements are +inf (so they never
    become the incumbent). Lets searchers ignore the direction."""
    if measurement.status is not Status.OK or measurement.objective is None or measurement.is_subproblem:
        return math.inf
    return measurement.objective if direction is Direction.MINIMIZE else -measurement.objective


def measurement_to_dict(m: Measurement) -> dict[str, Any]:
    """Plain JSON-able form (store, cache, tables)."""
    return {
        "status": m.status.value, "objective": m.objective, "samples": list(m.samples),
        "failure_mode": m.failure_mode.value, "message": m.message, "sensors": dict(m.sensors),
        "datasets": dict(m.datasets), "compile_s": m.compile_s, "run_s": m.run_s,
        "charged_s": m.charged_s, "log": list(m.log), "extra": dict(m.extra),
    }


def measurement_from_dict(d: Mapping[str, Any]) -> Measurement:
    return Measurement(
        Status(d["status"]), objective=d.get("objective"), samples=tuple(d.get("samples") or ()),
        failure_mode=FailureMode(d.get("failure_mode", "none")), message=d.get("message", ""),
        sensors=d.get("sensors") or {}, datasets=d.get("datasets") or {},
        compile_s=float(d.get("compile_s") or 0.0), run_s=float(d.get("run_s") or 0.0),
        charged_s=d.get("charged_s"), log=tuple(d.get("log") or ()), extra=d.get("extra") or {},
    )
