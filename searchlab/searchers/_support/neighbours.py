"""Neighbourhoods over a knob space's value indices, shared by the classic local searches.

Kernel Tuner's strategies (``kernel_tuner/searchspace.py``; Schoonhoven et al. 2022, §3)
move between configurations by value *index* per parameter:

- **Hamming**: change exactly one knob to any other of its values;
- **adjacent**: change exactly one knob by one index step (an unordered categorical knob
  has no order, so each of its other values counts as adjacent);
- **strictly adjacent** (Kernel Tuner's name): every knob within one index step, at least
  one changed (a Chebyshev ball of radius 1; categorical knobs again take any value).

Every neighbourhood is filtered by the space's *known* constraints
(``space.check(config) is None``), so the classic strategies never spend an evaluation on a
configuration the platform would reject before it reaches a device.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from searchlab.core.records import Config, Value
from searchlab.core.spaces import KnobSpace
from searchlab.errors import ConfigError

Index = tuple[int, ...]
METHODS = ("hamming", "adjacent", "strictly_adjacent")
_ENUMERATE_LIMIT = 4096  # enumerate a Chebyshev ball up to this size, sample beyond


def check_method(method: str, option: str = "neighbour") -> str:
    """Normalise a neighbourhood name (Kernel Tuner spells them ``Hamming``, ``strictly-adjacent``)."""
    name = method.lower().replace("-", "_")
    if name not in METHODS:
        raise ConfigError(f"searcher.{option}={method!r}: must be one of {list(METHODS)}")
    return name


class Grid:
    """A knob space as a grid of value indices, with constraint-aware neighbourhoods."""

    def __init__(self, space: KnobSpace) -> None:
        self.space = space
        self.names = space.names
        self.values: tuple[tuple[Value, ...], ...] = tuple(k.values for k in space.knobs)
        self.ordered = tuple(k.ordered for k in space.knobs)
        self.sizes = tuple(len(v) for v in self.values)
        self._position = [{v: i for i, v in enumerate(values)} for values in self.values]
        self._n_feasible: int | None = None

    @property
    def dims(self) -> int:
        return len(self.names)

    # -- encoding ----------------------------------------------------------------------
    def encode(self, config: Config) -> Index:
        return tuple(pos[config[name]] for pos, name in zip(self._position, self.names))

    def decode(self, index: Sequence[int]) -> Config:
        return Config({n: vals[int(i)] for n, vals, i in zip(self.names, self.values, index)})

    def feasible(self, config: Config) -> bool:
        return self.space.check(config) is None

    # -- random members ----------------------------------------------------------------
    def random(self, rng: np.random.Generator) -> Config:
        return self.space.sample(rng)

    def random_unseen(self, rng: np.random.Generator, seen: Callable[[Config], bool], tries: int = 200) -> Config:
        """A random feasible member not yet seen, if random draws find one; else any member."""
        config = self.random(rng)
        for _ in range(tries):
            if not seen(config):
                return config
            config = self.random(rng)
        return config

    def n_feasible(self, limit: int = 100_000) -> int | None:
        """Members satisfying the known constraints (None when the space is too large to count)."""
        if self._n_feasible is None and self.space.size() <= limit:
            self._n_feasible = sum(1 for _ in self.space.enumerate())
        return self._n_feasible

    # -- neighbourhoods ----------------------------------------------------------------
    def _steps(self, d: int, i: int, method: str) -> list[int]:
        """Other indices knob ``d`` may take from index ``i``."""
        if method == "hamming" or not self.ordered[d]:
            return [j for j in range(self.sizes[d]) if j != i]
        return [j for j in (i - 1, i + 1) if 0 <= j < self.sizes[d]]

    def along(self, config: Config, d: int, method: str) -> list[Config]:
        """Feasible neighbours that differ from ``config`` in knob ``d`` only (hill climbing)."""
        index = list(self.encode(config))
        out = []
        for j in self._steps(d, index[d], "hamming" if method == "hamming" else "adjacent"):
            candidate = self.decode([*index[:d], j, *index[d + 1:]])
            if self.feasible(candidate):
                out.append(candidate)
        return out

    def neighbours(self, config: Config, method: str) -> list[Config]:
        """Every feasible neighbour (a Chebyshev ball too large to enumerate is sampled)."""
        if method != "strictly_adjacent":
            return [c for d in range(self.dims) for c in self.along(config, d, method)]
        index = self.encode(config)
        axes = [[i, *self._steps(d, i, "adjacent")] for d, i in enumerate(index)]
        if math.prod(len(a) for a in axes) > _ENUMERATE_LIMIT:
            raise ValueError("too large to enumerate; use random_neighbour")
        out = [self.decode(p) for p in itertools.product(*axes) if p != index]
        return [c for c in out if self.feasible(c)]

    def random_neighbour(self, config: Config, method: str, rng: np.random.Generator, tries: int = 64) -> Config | None:
        """A uniformly random feasible neighbour, or None when there is none.

        A Chebyshev ball is rejection-sampled (uniform over its feasible points) and only
        enumerated when sampling keeps hitting infeasible points."""
        if method == "strictly_adjacent":
            found = self._sample_ball(config, rng, tries)
            if found is not None:
                return found
        try:
            pool = self.neighbours(config, method)
        except ValueError:
            return None
        return pool[int(rng.integers(len(pool)))] if pool else None

    def _sample_ball(self, config: Config, rng: np.random.Generator, tries: int) -> Config | None:
        index = self.encode(config)
        axes = [[i, *self._steps(d, i, "adjacent")] for d, i in enumerate(index)]
        for _ in range(tries):
            point = tuple(a[int(rng.integers(len(a)))] for a in axes)
            if point != index and self.feasible(candidate := self.decode(point)):
                return candidate
        return None

    def mutate(self, config: Config, rng: np.random.Generator) -> Config:
        """A random Hamming neighbour (Kernel Tuner's GA mutation), or ``config`` if none."""
        return self.random_neighbour(config, "hamming", rng) or config

    def walk(self, config: Config, steps: int, rng: np.random.Generator) -> Iterator[Config]:
        """Successive random Hamming moves (ILS perturbation)."""
        for _ in range(steps):
            config = self.mutate(config, rng)
            yield config

    def nearest(self, config: Config, accept: Callable[[Config], bool], rng: np.random.Generator,
                limit: int = 4096) -> Config | None:
        """The accepted configuration fewest adjacent index steps from ``config`` (a repair).

        Breadth first over the whole grid, through rejected points too (``config`` itself may
        violate a known constraint), ties broken at random; None after ``limit`` points."""
        start = self.encode(config)
        visited, frontier = {start}, [start]
        while frontier and len(visited) < limit:
            ring: list[Index] = []
            for index in frontier:
                for d in range(self.dims):
                    for j in self._steps(d, index[d], "adjacent"):
                        point = (*index[:d], j, *index[d + 1:])
                        if point not in visited:
                            visited.add(point)
                            ring.append(point)
            hits = [c for p in ring if accept(c := self.decode(p))]
            if hits:
                return hits[int(rng.integers(len(hits)))]
            frontier = ring
        return None
