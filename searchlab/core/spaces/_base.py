"""The space base class: what every searchable space offers the platform."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from searchlab.core.records import Config


class Space(ABC):
    """A set of configurations a searcher can propose."""

    kind: ClassVar[str] = "space"

    @abstractmethod
    def validate(self, config: Config) -> None:
        """Raise :class:`InvalidConfigError` unless ``config`` is a member of the space."""

    def check(self, config: Config) -> str | None:
        """Reason a member violates a *known* constraint (never sent to a device), or None."""
        return None

    @abstractmethod
    def sample(self, rng: np.random.Generator) -> Config:
        """A uniformly random member satisfying the known constraints."""

    def sampler(self, rng: np.random.Generator) -> Sampler:
        """Draws of :meth:`sample` from ``rng``, possibly made ahead in blocks (:class:`Sampler`)."""
        return Sampler(self, rng)

    @abstractmethod
    def enumerate(self) -> Iterator[Config]:
        """Every member satisfying the known constraints, in a fixed order."""

    @abstractmethod
    def size(self) -> int:
        """Number of members (before known constraints)."""

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "size": self.size()}


class Sampler:
    """Repeated :meth:`Space.sample` draws from one generator.

    Why: a searcher that draws many random members (random search above all) pays numpy's
    per-call overhead on every draw; a space may draw ahead in blocks (KnobSpace does) and give
    exactly the members one ``sample`` call per draw would. Drawing ahead moves the generator
    further than the draws taken, so whoever uses ``rng`` otherwise calls :meth:`sync` first,
    which leaves it where one call per draw would have left it."""

    def __init__(self, space: Space, rng: np.random.Generator) -> None:
        self.space, self.rng = space, rng

    def draw(self) -> Config:
        return self.space.sample(self.rng)

    def sync(self) -> None:
        """Put ``rng`` where one ``sample`` call per draw taken would have left it (a no-op here)."""

