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

    @abstractmethod
    def enumerate(self) -> Iterator[Config]:
        """Every member satisfying the known constraints, in a fixed order."""

    @abstractmethod
    def size(self) -> int:
        """Number of members (before known constraints)."""

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "size": self.size()}
