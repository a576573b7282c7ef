"""Futhark-style threshold trees (paper 003 §1.3, §2).

Incremental flattening makes several code versions per parallel construct and picks one at
run time with predicates ``threshold <= E_par(input)``; a true comparison runs the guarded
(outer-parallel) version, false descends towards the fully flattened one. Thresholds form
a tree: a threshold is only compared when its parent took ``branch``. A node may have
several children (Fig. 1.7).

For each dataset a threshold is compared with one E_par value (a *simple* threshold) or,
inside a sequential loop, with several (*loop-based*, §3.2). The distinct training values
``v1 < ... < vm`` split the integers into m+1 *plateaus* with identical behaviour; the
representatives ``v1..vm, vm+1`` are all a tuner needs to try (§3.1, plateau indices §3.5).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from searchlab.core.records import Config
from searchlab.core.spaces._base import Space
from searchlab.errors import ConfigError, InvalidConfigError

FUTHARK_DEFAULT_THRESHOLD = 32768  # 2**15, Futhark's default for unset size thresholds


@dataclass(frozen=True)
class Threshold:
    name: str
    parent: str | None = None
    branch: bool = True  # the parent's outcome under which this threshold is compared
    default: int = FUTHARK_DEFAULT_THRESHOLD


@dataclass(frozen=True)
class ThresholdDataset:
    """A dataset: the E_par values each threshold is compared against (one or many)."""

    name: str
    values: Mapping[str, tuple[int, ...]]
    train: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", {k: tuple(int(x) for x in v) for k, v in self.values.items()})


@dataclass(frozen=True)
class ThresholdTree(Space):
    thresholds: tuple[Threshold, ...]
    datasets: tuple[ThresholdDataset, ...]
    kind = "thresholds"
    _plateaus: Mapping[str, tuple[int, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "thresholds", tuple(self.thresholds))
        object.__setattr__(self, "datasets", tuple(self.datasets))
        names = [t.name for t in self.thresholds]
        if not names or len(set(names)) != len(names):
            raise ConfigError(f"a threshold tree needs at least one threshold and distinct names, got {names}")
        seen: set[str] = set()
        for t in self.thresholds:  # parents first: rules out cycles and dangling parents
            if t.parent is not None and t.parent not in seen:
                raise ConfigError(f"threshold {t.name!r}: parent {t.parent!r} must be listed before it")
            seen.add(t.name)
        for d in self.datasets:
            unknown = set(d.values) - seen
            if unknown:
                raise ConfigError(f"dataset {d.name!r} names unknown thresholds {sorted(unknown)}")
        if not any(d.train for d in self.datasets):
            raise ConfigError("a threshold tree needs at least one training dataset")
        object.__setattr__(self, "_plateaus", {n: self._plateau_values(n) for n in names})

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.thresholds)

    def threshold(self, name: str) -> Threshold:
        return next(t for t in self.thresholds if t.name == name)

    def children(self, name: str | None) -> list[Threshold]:
        """Thresholds whose parent is ``name`` (None: the roots)."""
        return [t for t in self.thresholds if t.parent == name]

    def train_datasets(self) -> tuple[ThresholdDataset, ...]:
        return tuple(d for d in self.datasets if d.train)

    def validation_datasets(self) -> tuple[ThresholdDataset, ...]:
        return tuple(d for d in self.datasets if not d.train)

    def comparison_values(self, name: str, train_only: bool = True) -> tuple[int, ...]:
        pool = self.train_datasets() if train_only else self.datasets
        return tuple(sorted({v for d in pool for v in d.values.get(name, ())}))

    def _plateau_values(self, name: str) -> tuple[int, ...]:
        values = self.comparison_values(name)
        if not values:
            return (self.threshold(name).default,)
        return (*values, values[-1] + 1)

    def plateau_values(self, name: str) -> tuple[int, ...]:
        """Representatives ``v1..vm, vm+1``: index 0 is true everywhere, the last false."""
        return self._plateaus[name]

    def plateau_index(self, name: str, value: int) -> int:
        """Index of the plateau ``value`` falls in (same outcome on every training value)."""
        reps = self._plateaus[name]
        for i, rep in enumerate(reps[:-1]):
            if value <= rep:
                return i
        return len(reps) - 1

    def is_loop_based(self, name: str) -> bool:
        return any(len(d.values.get(name, ())) > 1 for d in self.datasets)

    def validate(self, config: Config) -> None:
        if set(config) != set(self.names):
            raise InvalidConfigError(f"config {dict(config)} must set exactly the thresholds {list(self.names)}")
        for name, value in config.items():
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidConfigError(f"threshold {name}={value!r} must be an integer")

    def sample(self, rng: np.random.Generator) -> Config:
        return Config({n: v[int(rng.integers(len(v)))] for n, v in self._plateaus.items()})

    def enumerate(self) -> Iterator[Config]:
        for values in itertools.product(*(self._plateaus[n] for n in self.names)):
            yield Config(dict(zip(self.names, values)))

    def size(self) -> int:
        return math.prod(len(v) for v in self._plateaus.values())

    def default_config(self) -> Config:
        """Futhark's behaviour with no tuning file: every threshold at its default."""
        return Config({t.name: t.default for t in self.thresholds})

    def all_false(self) -> Config:
        """Every comparison false: the fully flattened version everywhere."""
        return Config({n: max(self.comparison_values(n, train_only=False) or (0,)) + 1 for n in self.names})

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "size": self.size(),
            "thresholds": {
                t.name: {"parent": t.parent, "branch": t.branch, "plateaus": len(self._plateaus[t.name]),
                         "loop_based": self.is_loop_based(t.name)}
                for t in self.thresholds
            },
            "datasets": {d.name: "train" if d.train else "validation" for d in self.datasets},
        }


def tree_from_spec(thresholds: Sequence[Mapping[str, Any]], datasets: Sequence[Mapping[str, Any]]) -> ThresholdTree:
    """Build a tree from plain config data (lists of dicts)."""
    return ThresholdTree(
        tuple(Threshold(**t) for t in thresholds),
        tuple(ThresholdDataset(d["name"], d["values"], bool(d.get("train", True))) for d in datasets),
    )
