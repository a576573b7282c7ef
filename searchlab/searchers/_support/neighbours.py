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
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

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
        # decode builds configurations straight in Config's canonical form (names sorted, values frozen):
        # neighbourhoods and populations decode many per proposal (issue 23, item 3)
        self._order = tuple(sorted(range(len(self.names)), key=lambda d: self.names[d]))
        self._frozen = tuple(tuple(Config({"v": v})["v"] for v in values) for values in self.values)

    @property
    def dims(self) -> int:
        return len(self.names)

    # -- encoding ----------------------------------------------------------------------
    def encode(self, config: Config) -> Index:
        return tuple(pos[config[name]] for pos, name in zip(self._position, self.names))

    def decode(self, index: Sequence[int]) -> Config:
        names, frozen = self.names, self._frozen
        return Config.from_sorted(tuple((names[d], frozen[d][int(index[d])]) for d in self._order))

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
        """Members satisfying the known constraints (None when the space is too large to count).

        Counted once per space and process (a study replays one table's space many times); a
        space that lists its members (a replayed table's) is counted over them, not over its grid."""
        if self._n_feasible is None and self.space.size() <= limit:
            self._n_feasible = _count_feasible(self.space, self)
        return self._n_feasible

    # -- neighbourhoods ----------------------------------------------------------------
    def _steps(self, d: int, i: int, method: str) -> list[int]:
        """Other indices knob ``d`` may take from index ``i``."""
        if method == "hamming" or not self.ordered[d]:
            return [j for j in range(self.sizes[d]) if j != i]
        return [j for j in (i - 1, i + 1) if 0 <= j < self.sizes[d]]

    @property
    def _points(self) -> frozenset[Index] | None:
        """The feasible members as index points, where the space lists its members (a replayed
        table): feasibility of a neighbour is then a set look-up, and only the neighbour chosen is
        built as a Config. Made once per space and process (a study replays one space many times)."""
        return _feasible_points(self.space, self)

    def feasible_point(self, point: Index) -> bool:
        points = self._points
        return point in points if points is not None else self.feasible(self.decode(point))

    def _along_points(self, index: Index, d: int, method: str) -> list[Index]:
        steps = self._steps(d, index[d], "hamming" if method == "hamming" else "adjacent")
        return [p for j in steps if self.feasible_point(p := (*index[:d], j, *index[d + 1:]))]

    def along(self, config: Config, d: int, method: str) -> list[Config]:
        """Feasible neighbours that differ from ``config`` in knob ``d`` only (hill climbing)."""
        return [self.decode(p) for p in self._along_points(self.encode(config), d, method)]

    def _neighbour_points(self, config: Config, method: str) -> list[Index]:
        index = self.encode(config)
        if method != "strictly_adjacent":
            return [p for d in range(self.dims) for p in self._along_points(index, d, method)]
        axes = [[i, *self._steps(d, i, "adjacent")] for d, i in enumerate(index)]
        if math.prod(len(a) for a in axes) > _ENUMERATE_LIMIT:
            raise ValueError("too large to enumerate; use random_neighbour")
        return [p for p in itertools.product(*axes) if p != index and self.feasible_point(p)]

    def neighbours(self, config: Config, method: str) -> list[Config]:
        """Every feasible neighbour (a Chebyshev ball too large to enumerate is sampled)."""
        return [self.decode(p) for p in self._neighbour_points(config, method)]

    def random_neighbour(self, config: Config, method: str, rng: np.random.Generator, tries: int = 64) -> Config | None:
        """A uniformly random feasible neighbour, or None when there is none.

        A Chebyshev ball is rejection-sampled (uniform over its feasible points) and only
        enumerated when sampling keeps hitting infeasible points."""
        if method == "strictly_adjacent":
            found = self._sample_ball(config, rng, tries)
            if found is not None:
                return found
        try:
            pool = self._neighbour_points(config, method)
        except ValueError:
            return None
        return self.decode(pool[int(rng.integers(len(pool)))]) if pool else None

    def _sample_ball(self, config: Config, rng: np.random.Generator, tries: int) -> Config | None:
        index = self.encode(config)
        axes = [[i, *self._steps(d, i, "adjacent")] for d, i in enumerate(index)]
        for _ in range(tries):
            point = tuple(a[int(rng.integers(len(a)))] for a in axes)
            if point != index and self.feasible_point(point):
                return self.decode(point)
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


_FACTS: dict[int, tuple[weakref.ref[KnobSpace], dict[str, Any]]] = {}  # id(space) -> (the space, what was counted)


def _facts(space: KnobSpace) -> dict[str, Any]:
    cached = _FACTS.get(id(space))
    if cached is not None and cached[0]() is space:
        return cached[1]
    facts: dict[str, Any] = {}
    _FACTS[id(space)] = (weakref.ref(space), facts)
    return facts


def _feasible_points(space: KnobSpace, grid: Grid) -> frozenset[Index] | None:
    facts = _facts(space)
    if "points" not in facts:
        members = getattr(space, "members", None)
        facts["points"] = frozenset(grid.encode(m) for m in members if _on_grid(grid, m) and space.check(m) is None) \
            if isinstance(members, (set, frozenset)) and members else None
    points: frozenset[Index] | None = facts["points"]
    return points


def _count_feasible(space: KnobSpace, grid: Grid) -> int:
    facts = _facts(space)
    if "count" not in facts:
        points = _feasible_points(space, grid)
        facts["count"] = len(points) if points is not None else sum(1 for _ in space.enumerate())
    count: int = facts["count"]
    return count


def _on_grid(grid: Grid, config: Config) -> bool:
    """``config`` sets exactly the grid's knobs, each to one of its values (as enumerate makes them)."""
    return len(config) == grid.dims and all(n in config and config[n] in pos for n, pos in zip(grid.names, grid._position))
