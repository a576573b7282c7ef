"""``synthetic_knobs``: a GPU-kernel-like knob space with known and hidden constraints.

Run time falls with more parallelism until resources run out, as on paper 001's
accelerators, so the best configurations sit next to failing ones. Known constraint:
work-group size. Hidden constraints: local memory (RESOURCES), register pressure from
unrolling (COMPILE) and a vector-width/tile mismatch that gives WRONG_OUTPUT.
"""

from __future__ import annotations

import math

from searchlab.adapters._values import ints
from searchlab.adapters.synthetic._common import Delay, config_rng
from searchlab.core.expr import Expression
from searchlab.core.problem import Problem
from searchlab.core.records import Config, FailureMode, Measurement
from searchlab.core.spaces import CategoricalKnob, KnobSpace, OrdinalKnob
from searchlab.errors import ConfigError, EvaluationError


class SyntheticKnobs(Problem):
    name = "synthetic_knobs"
    objective_name = "time_ms"
    capabilities = frozenset({"sensors"})

    def __init__(self, seed: int = 0, noise: float = 0.0, delay_s: float = 0.0, local_mem_kb: int = 48) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            seed: the landscape
            noise: relative noise (0: deterministic)
            delay_s: sleep per evaluation (stands in for an expensive measurement)
            local_mem_kb: the hidden local-memory limit
        """
        super().__init__()
        if noise < 0:
            raise ConfigError(f"problem.noise={noise}: must be >= 0")
        self.seed, self.noise, self.delay, self.local_mem_kb = seed, noise, Delay(delay_s), local_mem_kb
        self.deterministic = noise == 0
        pow2 = tuple(2**i for i in range(7))
        self._space = KnobSpace(
            (OrdinalKnob("block_x", pow2), OrdinalKnob("block_y", pow2), OrdinalKnob("tile", (1, 2, 3, 4, 6, 8)),
             OrdinalKnob("unroll", (1, 2, 4, 8)), CategoricalKnob("vector", ("scalar", "vec2", "vec4"))),
            constraints=(Expression("block_x * block_y <= 1024"), Expression("block_x * block_y >= 8")),
        )
        rng = config_rng(seed, Config(), salt=1)
        self._pref = {"tile": float(rng.uniform(2.5, 5.5)), "unroll": float(rng.uniform(1.5, 3.0))}
        self._vec = {"scalar": 1.0, "vec2": float(rng.uniform(0.75, 0.9)), "vec4": float(rng.uniform(0.65, 0.85))}
        self._calls = 0
        self._optimum: float | None = None

    @property
    def space(self) -> KnobSpace:
        return self._space

    def _local_mem_bytes(self, c: Config) -> int:
        bx, by, tile = ints(c, "block_x", "block_y", "tile")
        return bx * by * tile**2 * 4 * 4

    def _model(self, c: Config) -> float:
        """Noise-free run time in ms, or raise the hidden-constraint failure."""
        bx, by, tile, unroll = ints(c, "block_x", "block_y", "tile", "unroll")
        if self._local_mem_bytes(c) > self.local_mem_kb * 1024:
            raise EvaluationError(FailureMode.RESOURCES, f"local memory {self._local_mem_bytes(c)} B > {self.local_mem_kb} KiB")
        if unroll * tile > 24:
            raise EvaluationError(FailureMode.COMPILE, f"register spill: unroll*tile={unroll * tile} > 24")
        if c["vector"] == "vec4" and tile % 4 and tile > 1:
            raise EvaluationError(FailureMode.WRONG_OUTPUT, "vec4 with a tile not divisible by 4 gave a wrong result")
        threads = bx * by
        occupancy = min(1.0, threads / 256) * (1.0 if threads <= 512 else 0.8)
        shape = 1.0 + 0.15 * abs(math.log2(bx / by))
        reuse = 1.0 + 0.35 * (math.log(tile / self._pref["tile"])) ** 2
        unrolled = 1.0 + 0.2 * (math.log2(unroll) - self._pref["unroll"]) ** 2
        return 10.0 * shape * reuse * unrolled * self._vec[str(c["vector"])] / occupancy

    def evaluate(self, config: Config) -> Measurement:
        self.delay()
        self._calls += 1
        base = self._model(config)
        samples = [base] if self.noise == 0 else list(
            base * (1 + self.noise * config_rng(self.seed, config, salt=self._calls).standard_normal(5)).clip(0.5))
        return Measurement.ok(float(min(samples) if self.noise == 0 else sorted(samples)[len(samples) // 2]),
                              samples=tuple(samples), sensors={"local_mem_bytes": self._local_mem_bytes(config)})

    @property
    def known_optimum(self) -> float:
        if self._optimum is None:
            best = math.inf
            for config in self._space.enumerate():
                try:
                    best = min(best, self._model(config))
                except EvaluationError:
                    continue
            self._optimum = best
        return self._optimum
