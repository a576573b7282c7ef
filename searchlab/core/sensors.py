"""Sensors, derived features, the optimisation formula and constraint formulas (paper 001 §2, §4, §6).

A problem measures *sensors* per evaluation (``Measurement.sensors``: run time, local memory,
code size, compile time, ...). A :class:`SensorModel` declares, in the problem's config:

- ``features``: derived features, ``+ - * /`` of sensors, knobs and constants (§6);
- ``objective`` and ``direction``: the optimisation formula (default: the measured objective);
- ``constraints``: Boolean constraint formulas ``lhs <= rhs`` (or ``<``, ``>=``, ``>``) over
  sensors and features, each tied to the failures it explains (its ``name`` as reported in
  ``Measurement.extra["violated"]``, else its failure ``modes``); or *proxy* constraints (§4.1)
  for failures whose own metric is undefined when they fail: ``proxy: <formula>`` names a
  metric measured in failed and successful tests alike, and the cutoff is learned from data.
- ``order``: the order in which the problem checks (check names or failure modes): a test that
  failed a later check has proved that it passes every earlier one (§4.1, "got far enough").

It reaches searchers on the space: a problem whose space is a :class:`SensedKnobSpace` carries
its model (``space.sensor_model``); any other space gets :meth:`SensorModel.default` (the
objective alone, plus success/failure), so a searcher needs nothing but the space.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from searchlab.core.expr import Expression
from searchlab.core.records import Direction, FailureMode, Measurement, Status
from searchlab.core.spaces import KnobSpace
from searchlab.errors import ConfigError

OBJECTIVE = "objective"  # the pseudo-sensor holding Measurement.objective (successful tests only)
DEFAULT_ORDER = ("constraint", "invalid", "compile", "resources", "launch", "runtime", "wrong_output", "timeout", "crash")


@dataclass(frozen=True)
class Normal:
    """A normal prediction (scalars or arrays, elementwise); arithmetic follows §6.

    Inputs are assumed independent (§6). Sum and difference add the means and, as §6 states,
    the *standard deviations*. Products and quotients are not exactly normal; §6 leaves the
    approximation to [25], we use the exact product moments and the first-order (delta
    method) quotient, good when the inputs are far from zero (§6's own caveat).
    """

    mean: Any
    std: Any = 0.0

    @staticmethod
    def of(value: Any) -> Normal:
        if isinstance(value, Normal):
            return value
        mean = np.asarray(value, dtype=float)
        return Normal(mean if mean.ndim else float(mean), 0.0)

    def __add__(self, other: Any) -> Normal:
        o = Normal.of(other)
        return Normal(self.mean + o.mean, self.std + o.std)

    __radd__ = __add__

    def __neg__(self) -> Normal:
        return Normal(-self.mean, self.std)

    def __pos__(self) -> Normal:
        return self

    def __sub__(self, other: Any) -> Normal:
        return self + (-Normal.of(other))

    def __rsub__(self, other: Any) -> Normal:
        return Normal.of(other) - self

    def __mul__(self, other: Any) -> Normal:
        o = Normal.of(other)
        var = (self.mean * o.std) ** 2 + (o.mean * self.std) ** 2 + (self.std * o.std) ** 2
        return Normal(self.mean * o.mean, np.sqrt(var))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Normal:
        o = Normal.of(other)
        with np.errstate(divide="ignore", invalid="ignore"):
            var = (self.std / o.mean) ** 2 + (self.mean * o.std / o.mean**2) ** 2
            return Normal(np.divide(self.mean, o.mean), np.sqrt(var))

    def __rtruediv__(self, other: Any) -> Normal:
        return Normal.of(other) / self


def prob_less(lhs: Normal, rhs: Normal, strict_floor: float = 1e-9) -> Any:
    """log P(lhs <= rhs) for independent normals (the §4.1 comparison of two distributions)."""
    from scipy.special import log_ndtr

    scale = np.abs(lhs.mean) + np.abs(rhs.mean) + 1e-300
    std = np.maximum(np.sqrt(np.square(lhs.std) + np.square(rhs.std)), strict_floor * scale)
    return log_ndtr((np.asarray(rhs.mean) - lhs.mean) / std)


_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


@dataclass(frozen=True)
class ConstraintSpec:
    """One constraint: ``lhs op rhs`` with a known bound, or a proxy metric with a learned cutoff."""

    name: str
    lhs: Expression | None = None
    op: str = "<="
    rhs: Expression | None = None
    proxy: Expression | None = None
    modes: frozenset[str] = frozenset()

    @property
    def is_proxy(self) -> bool:
        return self.proxy is not None

    @property
    def names(self) -> frozenset[str]:
        exprs = [e for e in (self.lhs, self.rhs, self.proxy) if e is not None]
        return frozenset().union(*(e.names for e in exprs))

    @property
    def text(self) -> str:
        if self.proxy is not None:
            return f"proxy {self.proxy.text} (cutoff learned, §4.1)"
        assert self.lhs is not None and self.rhs is not None
        return f"{self.lhs.text} {self.op} {self.rhs.text}"


def _split_comparison(name: str, text: str) -> tuple[Expression, str, Expression]:
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ConfigError(f"constraint {name!r}: formula {text!r} is not valid: {exc.msg}") from None
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and type(tree.ops[0]) in _CMP):
        raise ConfigError(f"constraint {name!r}: formula {text!r} must be one comparison 'lhs <= rhs' (<, <=, >, >=)")
    return (Expression(ast.unparse(tree.left)), _CMP[type(tree.ops[0])], Expression(ast.unparse(tree.comparators[0])))


def constraint_from_spec(spec: Mapping[str, Any]) -> ConstraintSpec:
    """``{name, formula: "a <= b" | proxy: "metric", modes: [...]}`` -> :class:`ConstraintSpec`."""
    name = str(spec.get("name") or "")
    if not name:
        raise ConfigError(f"a constraint needs a name, got {dict(spec)}")
    modes = frozenset(str(m) for m in spec.get("modes") or ())
    bad = modes - {m.value for m in FailureMode}
    if bad:
        raise ConfigError(f"constraint {name!r}: unknown failure modes {sorted(bad)} (known: {[m.value for m in FailureMode]})")
    if ("formula" in spec) == ("proxy" in spec):
        raise ConfigError(f"constraint {name!r}: give exactly one of 'formula' (a comparison) or 'proxy' (a metric)")
    if "proxy" in spec:
        return ConstraintSpec(name, proxy=Expression(str(spec["proxy"])), modes=modes)
    lhs, op, rhs = _split_comparison(name, str(spec["formula"]))
    return ConstraintSpec(name, lhs, op, rhs, modes=modes)


@dataclass(frozen=True, eq=False)
class SensorModel:
    """What a searcher predicts and how it combines the predictions (§4 formula, §6)."""

    sensors: tuple[str, ...] = ()
    features: Mapping[str, Expression] = field(default_factory=dict)
    objective: Expression = field(default_factory=lambda: Expression(OBJECTIVE))
    direction: Direction | None = None  # None: the problem's direction
    constraints: tuple[ConstraintSpec, ...] = ()
    constants: Mapping[str, float] = field(default_factory=dict)
    order: tuple[str, ...] = DEFAULT_ORDER
    spec: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def default(cls) -> SensorModel:
        """No declared sensors: the objective alone, plus success/failure (the catch-all)."""
        return cls()

    def check_names(self, knobs: Sequence[str]) -> None:
        known = {OBJECTIVE, *self.sensors, *self.features, *self.constants, *knobs}
        uses = [("objective", self.objective)] + [(f"feature {n!r}", e) for n, e in self.features.items()]
        for what, expr in uses:
            if expr.names - known:
                raise ConfigError(f"{what} {expr.text!r} names {sorted(expr.names - known)}: "
                                  "not a sensor, feature, knob or constant")
        for c in self.constraints:
            if c.names - known:
                raise ConfigError(f"constraint {c.name!r} ({c.text}) names {sorted(c.names - known)}: "
                                  "not a sensor, feature, knob or constant")

    def raw_names(self, expr: Expression, knobs: Sequence[str]) -> frozenset[str]:
        """The sensors (to be predicted) an expression depends on, through features."""
        out: set[str] = set()
        for name in expr.names:
            if name in self.features:
                out |= self.raw_names(self.features[name], knobs)
            elif name not in self.constants and name not in knobs:
                out.add(name)
        return frozenset(out)

    def evaluate(self, expr: Expression, env: Mapping[str, Any]) -> Any:
        """``expr`` over raw values or :class:`Normal` predictions; features computed on the fly."""
        full = dict(self.constants)
        full.update(env)
        for name in self.features:
            if name in expr.names and name not in full:
                full[name] = self.evaluate(self.features[name], env)
        return expr(full)

    def failed_check(self, m: Measurement) -> str:
        """The check a failed measurement failed: its reported constraint name, else its mode."""
        violated = m.extra.get("violated")
        return str(violated) if violated else m.failure_mode.value

    def attributed(self, m: Measurement) -> tuple[ConstraintSpec, ...]:
        """The declared constraints a failure counts against (§4.1); empty: unexplained."""
        if m.status is Status.OK:
            return ()
        check = self.failed_check(m)
        named = tuple(c for c in self.constraints if c.name == check)
        return named or tuple(c for c in self.constraints if m.failure_mode.value in c.modes)

    def passed(self, c: ConstraintSpec, m: Measurement) -> bool | None:
        """True: passed or got past ``c``; False: failed ``c``; None: tells nothing (§4.1)."""
        if m.status is Status.OK:
            return True
        if c in self.attributed(m):
            return False
        position = {name: i for i, name in enumerate(self.order)}
        failed_at = position.get(self.failed_check(m), position.get(m.failure_mode.value))
        own = [position[n] for n in (c.name, *c.modes) if n in position]
        if failed_at is not None and own and failed_at > max(own):
            return True
        return None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.spec)


def model_from_spec(spec: Mapping[str, Any] | None, *, knobs: Sequence[str] = (),
                    constants: Mapping[str, float] | None = None) -> SensorModel:
    """Build a model from config (see the module docstring for the keys)."""
    spec = dict(spec or {})
    unknown = set(spec) - {"sensors", "features", "objective", "direction", "constraints", "order"}
    if unknown:
        raise ConfigError(f"sensor model: unknown keys {sorted(unknown)} "
                          "(sensors, features, objective, direction, constraints, order)")
    direction = spec.get("direction")
    if direction is not None and direction not in {d.value for d in Direction}:
        raise ConfigError(f"sensor model: direction={direction!r} must be 'minimize' or 'maximize'")
    constraints = tuple(constraint_from_spec(c) for c in spec.get("constraints") or ())
    if len({c.name for c in constraints}) != len(constraints):
        raise ConfigError(f"sensor model: constraint names must be distinct, got {[c.name for c in constraints]}")
    model = SensorModel(
        sensors=tuple(str(s) for s in spec.get("sensors") or ()),
        features={str(k): Expression(str(v)) for k, v in (spec.get("features") or {}).items()},
        objective=Expression(str(spec.get("objective") or OBJECTIVE)),
        direction=None if direction is None else Direction(direction),
        constraints=constraints, constants=dict(constants or {}),
        order=tuple(str(o) for o in spec.get("order") or DEFAULT_ORDER), spec=spec,
    )
    model.check_names(knobs)
    return model


@dataclass(frozen=True)
class SensedKnobSpace(KnobSpace):
    """A knob space that carries its problem's sensor model to the searchers (§2)."""

    sensor_model: SensorModel | None = field(default=None, compare=False)

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        if self.sensor_model is not None:
            out["sensor_model"] = self.sensor_model.to_dict()
        return out


def sensor_model_of(space: object) -> SensorModel:
    model = getattr(space, "sensor_model", None)
    return model if isinstance(model, SensorModel) else SensorModel.default()
