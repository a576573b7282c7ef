"""``sphere_knobs``: a shifted sphere on integer knobs (numpy only, no device), known optimum 0.

The point is the registration, not the physics: the Problem class itself, registered by one
entry point, with no YAML file and no config class: its options are its constructor's typed
keyword parameters (searchlab derives the config from them, as for a searcher).
"""

from __future__ import annotations

import numpy as np

from searchlab.core.problem import Problem
from searchlab.core.records import Config, Measurement
from searchlab.core.spaces import IntKnob, KnobSpace
from searchlab.errors import ConfigError


class SphereKnobs(Problem):
    """Shifted sphere on integer knobs: sum of squared distances to a seeded centre."""

    name = "sphere_knobs"
    objective_name = "distance2"
    deterministic = True

    def __init__(self, dims: int = 3, size: int = 11, seed: int = 0) -> None:
        """``dims`` knobs of ``size`` values each (0 .. size-1); ``seed``: where the optimum lies."""
        if dims < 1 or size < 2:
            raise ConfigError(f"problem.dims={dims}, problem.size={size}: need dims >= 1 and size >= 2")
        super().__init__()
        self._space = KnobSpace(tuple(IntKnob(f"x{i}", 0, size - 1) for i in range(dims)))
        self._centre = np.random.default_rng(seed).integers(0, size, dims)

    @property
    def space(self) -> KnobSpace:
        return self._space

    @property
    def known_optimum(self) -> float:
        return 0.0

    def evaluate(self, config: Config) -> Measurement:
        x = np.array([int(config[f"x{i}"]) for i in range(len(self._centre))])  # type: ignore[arg-type]
        return Measurement.ok(float(np.sum((x - self._centre) ** 2)))
