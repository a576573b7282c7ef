"""``synthetic_thresholds``: a Futhark-like threshold tree with a cost model (paper 003 §1.3).

Each comparison ``threshold <= E_par`` picks the guarded version (exploits only the
parallelism E_par measures: fast when E_par fills the device) or goes on towards more
flattened versions (always fill the device, pay flattening overhead). The tree has simple
thresholds and one loop-based threshold whose E_par shrinks each iteration (§3.2).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from searchlab.adapters._values import ints
from searchlab.adapters.synthetic._common import Delay, config_rng
from searchlab.core.problem import Problem
from searchlab.core.records import Config, Measurement
from searchlab.core.spaces import Threshold, ThresholdDataset, ThresholdTree

TRAIN_SIZES = (32, 256, 2048)
VALIDATION_SIZES = (64, 1024)
LOOP_ITERATIONS = 8


def _dataset(n: int, train: bool) -> ThresholdDataset:
    return ThresholdDataset(f"n{n}", {
        "suff_outer_par_0": (n,),
        "suff_intra_par_1": (n * 16,),
        "suff_outer_par_2": tuple(n * (n - i * n // LOOP_ITERATIONS) for i in range(LOOP_ITERATIONS)),
        "suff_intra_par_3": (n * 64,),
    }, train)


class SyntheticThresholds(Problem):
    name = "synthetic_thresholds"
    objective_name = "time_ms"
    capabilities = frozenset({"datasets", "validation"})

    def __init__(self, seed: int = 0, parallelism: int = 4096, noise: float = 0.0, delay_s: float = 0.0) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            seed: the cost model's
            parallelism: the device's parallel width P
            noise: relative noise (0: deterministic)
            delay_s: sleep per evaluation (stands in for an expensive measurement)
        """
        super().__init__()
        self.seed, self.P, self.noise, self.delay = seed, parallelism, noise, Delay(delay_s)
        self.deterministic = noise == 0
        self._space = ThresholdTree(
            (Threshold("suff_outer_par_0"),
             Threshold("suff_intra_par_1", parent="suff_outer_par_0", branch=True),
             Threshold("suff_outer_par_2", parent="suff_outer_par_0", branch=False),
             Threshold("suff_intra_par_3", parent="suff_outer_par_2", branch=False)),
            tuple(_dataset(n, True) for n in TRAIN_SIZES) + tuple(_dataset(n, False) for n in VALIDATION_SIZES),
        )
        rng = np.random.default_rng(seed)
        self._overhead = {name: float(rng.uniform(0.5, 2.0)) for name in self._space.names}
        self._calls = 0

    @property
    def space(self) -> ThresholdTree:
        return self._space

    def _guarded(self, name: str, e: int) -> float:
        """The guarded version: work e spread over min(e, P) lanes."""
        return e / min(e, self.P) * 0.01 + self._overhead[name] * 0.02

    def _flattened(self, name: str, e: int, depth: int) -> float:
        return e / self.P * 0.01 * (1.5 + 0.5 * depth) + self._overhead[name] * 0.05

    def _iteration(self, config: Config, values: dict[str, int], name: str, depth: int) -> float:
        e = values[name]
        taken = ints(config, name)[0] <= e
        below = [t.name for t in self._space.children(name) if t.branch == taken]
        if below:
            return sum(self._iteration(config, values, child, depth + 1) for child in below)
        return self._guarded(name, e) if taken else self._flattened(name, e, depth)

    def dataset_time(self, config: Config, dataset: ThresholdDataset) -> float:
        iterations = max(len(v) for v in dataset.values.values())
        total = 0.0
        for i in range(iterations):
            values = {k: v[min(i, len(v) - 1)] for k, v in dataset.values.items()}
            total += sum(self._iteration(config, values, t.name, 0) for t in self._space.children(None))
        return total

    def evaluate(self, config: Config) -> Measurement:
        self.delay()
        self._calls += 1
        times = {d.name: self.dataset_time(config, d) for d in self._space.train_datasets()}
        if self.noise:
            rng = config_rng(self.seed, config, self._calls)
            times = {k: v * float(max(0.5, 1 + self.noise * rng.standard_normal())) for k, v in times.items()}
        return Measurement.ok(sum(times.values()), datasets=times)

    def validate(self, config: Config) -> dict[str, Any]:
        """Run time on every dataset (the validation datasets included)."""
        return {d.name: self.dataset_time(config, d) for d in self._space.datasets}

    @property
    def known_optimum(self) -> float:
        return min(sum(self.dataset_time(c, d) for d in self._space.train_datasets())
                   for c in self._space.enumerate())


