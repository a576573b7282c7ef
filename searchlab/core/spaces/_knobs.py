"""Tuning-knob spaces: integer ranges, ordinal lists, categoricals, known constraints.

Known constraints (paper 001 §3: constraints the tuner can check without running) are
safe expressions over knob values; configurations that violate one are INFEASIBLE and never
reach a device. Hidden constraints are discovered as failed evaluations.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from searchlab.core.expr import Expression
from searchlab.core.records import Config, Value
from searchlab.core.spaces._base import Sampler, Space
from searchlab.errors import ConfigError, InvalidConfigError

MAX_VALUES = 2**20
"""The most values one knob may hold (issue 47, item 13). Searchers index, encode and enumerate a knob's values;
a range of 2**62 integers made ``IntKnob.values`` raise MemoryError. 2**20 covers the 10^6-wide integer ranges
Optuna and Ray Tune users write; wider ones are refused in one line naming the alternatives."""


@dataclass(frozen=True)
class IntKnob:
    """Integers ``low, low+step, ..., <= high``; ``log`` asks samplers for log-uniform draws.

    :attr:`count` and :meth:`position` answer without building :attr:`values` (a range of 10^6 is encoded per
    candidate by ``auto``; ``values.index`` on a fresh tuple made each call quadratic)."""

    name: str
    low: int
    high: int
    step: int = 1
    log: bool = False

    def __post_init__(self) -> None:
        if self.step < 1 or self.high < self.low:
            raise ConfigError(f"knob {self.name!r}: need low <= high and step >= 1, got {self}")
        if self.log and self.low < 1:
            raise ConfigError(f"knob {self.name!r}: a log-scale range needs low >= 1, got {self.low}")
        if self.count > MAX_VALUES:
            raise ConfigError(f"knob {self.name!r}: {self.count} integers from {self.low} to {self.high} are more than "
                              f"the {MAX_VALUES} a knob may hold; use a step of at least "
                              f"{-(-(self.high - self.low + 1) // MAX_VALUES)}, or an ordinal list (e.g. powers of two)")

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(self.range)

    @property
    def range(self) -> range:
        return range(self.low, self.high + 1, self.step)

    @property
    def count(self) -> int:
        return (self.high - self.low) // self.step + 1

    def position(self, value: object) -> int | None:
        """The index of ``value`` in :attr:`values`, or None (arithmetic: no tuple is built)."""
        if not isinstance(value, (int, float, np.integer, np.floating)) or value != value or value in (math.inf, -math.inf):
            return None
        whole = int(value)
        if whole != value or not self.low <= whole <= self.high:  # as ``value in values`` was: 2.0 and True count
            return None
        offset, rest = divmod(whole - self.low, self.step)
        return None if rest else offset

    @property
    def ordered(self) -> bool:
        return True


@dataclass(frozen=True)
class _ListKnob:
    name: str
    values: tuple[Value, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(self.values))
        if not self.values or len(set(self.values)) != len(self.values):
            raise ConfigError(f"knob {self.name!r}: values must be non-empty and distinct, got {self.values}")

    @property
    def count(self) -> int:
        return len(self.values)

    def position(self, value: object) -> int | None:
        """The index of ``value`` in :attr:`values`, or None."""
        try:
            return self.values.index(value)
        except ValueError:
            return None


@dataclass(frozen=True)
class OrdinalKnob(_ListKnob):
    """An ordered list of values (e.g. powers of two); neighbours are adjacent entries."""

    @property
    def ordered(self) -> bool:
        return True


@dataclass(frozen=True)
class CategoricalKnob(_ListKnob):
    """Unordered choices: no notion of distance between them."""

    @property
    def ordered(self) -> bool:
        return False


Knob = Union[IntKnob, OrdinalKnob, CategoricalKnob]


def knob_from_spec(name: str, spec: Mapping[str, Any] | Sequence[Any]) -> Knob:
    """Build a knob from config: a list (ordinal), or {low, high, step, log} / {choices}."""
    if isinstance(spec, Sequence) and not isinstance(spec, str):
        return OrdinalKnob(name, tuple(spec))
    if not isinstance(spec, Mapping):
        raise ConfigError(f"knob {name!r}: expected a list or a mapping, got {spec!r}")
    if "choices" in spec:
        return CategoricalKnob(name, tuple(spec["choices"]))
    if "values" in spec:
        return OrdinalKnob(name, tuple(spec["values"]))
    if {"low", "high"} <= set(spec):
        return IntKnob(name, int(spec["low"]), int(spec["high"]), int(spec.get("step", 1)), bool(spec.get("log", False)))
    raise ConfigError(f"knob {name!r}: need a list, 'values', 'choices' or 'low'/'high', got {dict(spec)}")


@dataclass(frozen=True)
class KnobSpace(Space):
    """The product of knobs, restricted by known constraints (expressions that must hold)."""

    knobs: tuple[Knob, ...]
    constraints: tuple[Expression, ...] = ()
    kind = "knobs"
    _index: Mapping[str, Knob] = field(init=False, repr=False, compare=False)
    # how sample draws: knob sizes, and (name, frozen values) in Config's sorted order
    _plan: tuple[Any, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "knobs", tuple(self.knobs))
        object.__setattr__(self, "constraints", tuple(
            c if isinstance(c, Expression) else Expression(str(c)) for c in self.constraints
        ))
        index = {k.name: k for k in self.knobs}
        if len(index) != len(self.knobs) or not self.knobs:
            raise ConfigError(f"a knob space needs at least one knob and distinct names, got {[k.name for k in self.knobs]}")
        object.__setattr__(self, "_index", index)
        order = sorted(range(len(self.knobs)), key=lambda d: self.knobs[d].name)
        frozen = [(self.knobs[d].name, d, _frozen_values(self.knobs[d])) for d in order]
        object.__setattr__(self, "_plan", (np.array([k.count for k in self.knobs], dtype=np.int64), frozen))
        for c in self.constraints:
            unknown = c.names - set(index)
            if unknown:
                raise ConfigError(f"constraint {c.text!r} names unknown knobs {sorted(unknown)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.knobs)

    def knob(self, name: str) -> Knob:
        return self._index[name]

    def validate(self, config: Config) -> None:
        if set(config) != set(self._index):
            raise InvalidConfigError(f"config {dict(config)} must set exactly the knobs {list(self.names)}")
        for name, value in config.items():
            if self._index[name].position(value) is None:
                raise InvalidConfigError(f"knob {name!r}={value!r} is not one of its values")

    def check(self, config: Config) -> str | None:
        for c in self.constraints:
            if not c(config):
                return f"known constraint {c.text!r} is false"
        return None

    def partial_ok(self, assigned: Mapping[str, Value]) -> bool:
        """Constraints whose knobs are all assigned hold (used by the decision-DAG view)."""
        return all(c(assigned) for c in self.constraints if c.names <= assigned.keys())

    def prefix_ok(self, values: Sequence[Value]) -> bool:
        """``partial_ok`` for the first ``len(values)`` knobs, in order (the decision DAG's nodes)."""
        return self.partial_ok(dict(zip(self.names, values)))

    def constraint_scopes(self) -> tuple[frozenset[str], ...]:
        """The knobs each known constraint reads: what a partial assignment's feasibility
        can depend on (the decision-DAG view memoises its counts on exactly these)."""
        return tuple(frozenset(c.names) for c in self.constraints)

    def sample(self, rng: np.random.Generator, tries: int = 10_000) -> Config:
        # one draw of every knob's index at once: the same numbers, in the same order, as one
        # rng.integers(len(values)) per knob (numpy draws an array of bounds element by element),
        # without building a dict per draw (issue 23, item 3: random search's per-proposal cost)
        sizes = self._plan[0]
        for _ in range(tries):
            config = self._at(rng.integers(sizes).tolist())
            if config is not None:
                return config
        raise self._no_draw(tries)

    def sampler(self, rng: np.random.Generator) -> Sampler:
        return _BlockSampler(self, rng)

    def _at(self, index: list[int]) -> Config | None:
        """The configuration of one draw of value indices (knob order), or None when it fails
        :meth:`check`. Where the members are listed (:meth:`_drawable`), a draw outside them is
        rejected by one look-up and a member is returned as the listed object itself, so its
        canonical key and hash are made once per process, not per draw."""
        members = self._drawable()
        if members is not None:
            config = members.get(tuple(index))
            if config is None:
                return None
        else:
            _, plan = self._plan
            config = Config.from_sorted(tuple((name, values[index[d]]) for name, d, values in plan))
        return config if self.check(config) is None else None

    def _no_draw(self, tries: int) -> ConfigError:
        return ConfigError(f"no configuration satisfying the known constraints found in {tries} random draws")

    def _drawable(self) -> Mapping[tuple[int, ...], Config] | None:
        """Value-index tuples (knob order) -> the member they make, outside which :meth:`check`
        always fails, or None when any may pass. A subclass whose members are listed (a recorded
        table's space) gives them, so :meth:`sample` rejects most draws without building a
        configuration."""
        return None

    def enumerate(self) -> Iterator[Config]:
        for values in itertools.product(*(k.values for k in self.knobs)):
            config = Config(dict(zip(self.names, values)))
            if self.check(config) is None:
                yield config

    def size(self) -> int:
        return math.prod(k.count for k in self.knobs)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "size": self.size(),
            "knobs": {k.name: list(k.values) if k.count <= 64 else f"{k.count} values" for k in self.knobs},
            "constraints": [c.text for c in self.constraints],
        }


def _frozen_values(knob: Knob) -> Sequence[Value]:
    """The values a draw picks from, as :class:`Config` stores them: an integer range is already canonical, and
    stays a ``range`` (indexable, not built)."""
    if isinstance(knob, IntKnob):
        return knob.range
    return tuple(Config({"v": v})["v"] for v in knob.values)


class _BlockSampler(Sampler):
    """:meth:`KnobSpace.sample`'s draws made :data:`BLOCK` at a time.

    ``rng.integers(sizes, size=(B, d))`` gives the same numbers, in the same order, as B calls of
    ``rng.integers(sizes)`` (tested), at about a twentieth of the cost per row: a third of a
    random replay was numpy's per-call overhead (issue 23, item 3). :meth:`sync` rewinds the
    generator to the block's start and draws again exactly the rows taken, so it then stands where
    one call per row would have left it."""

    BLOCK = 64

    def __init__(self, space: KnobSpace, rng: np.random.Generator) -> None:
        super().__init__(space, rng)
        self.knobs = space
        self._rows: list[list[int]] = []
        self._taken = 0
        self._state: Mapping[str, Any] | None = None  # the generator's state before the block

    def _row(self) -> list[int]:
        if self._taken == len(self._rows):
            self.sync()
            sizes = self.knobs._plan[0]
            self._state = self.rng.bit_generator.state
            self._rows = self.rng.integers(sizes, size=(self.BLOCK, len(sizes))).tolist()
        self._taken += 1
        return self._rows[self._taken - 1]

    def draw(self, tries: int = 10_000) -> Config:
        for _ in range(tries):
            config = self.knobs._at(self._row())
            if config is not None:
                return config
        raise self.knobs._no_draw(tries)

    def sync(self) -> None:
        if self._state is None:
            return
        sizes = self.knobs._plan[0]
        self.rng.bit_generator.state = self._state
        if self._taken:
            self.rng.integers(sizes, size=(self._taken, len(sizes)))
        self._rows, self._taken, self._state = [], 0, None

