"""CMA-ES over plateau indices (paper 003 §3.3, the "CMAIndex" tuner).

A loop-based tree is tuned as a whole: each threshold is one coordinate in [0, 1] that
rounds to an index into its Ē + ∞ (so most proposals land on distinct plateaus instead of
repeating one, §3.3), the search starts from the all-false solution (every coordinate at
∞), with sigma = 1/4 of the width and the default population 4 + ⌊3 ln N⌋ (pycma's defaults
cited by the thesis). Each generation is one batch of benchmark runs (run concurrently);
solutions whose paths were already measured are scored from the cache without a run.
CMA-ES stops on its own criteria (``should_stop``) or after ``max_generations``. Simple
trees use Alg. 2 (Alg. 3). One benchmark run = one evaluation on all training datasets.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from searchlab.core.spaces import ThresholdTree
from searchlab.errors import ConfigError
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._threshold.generator import Need
from searchlab.searchers._threshold.simple import SimpleSearcher


class CmaIndexSearcher(SimpleSearcher):
    name = "cma_index"

    def __init__(self, space: ThresholdTree, *, sigma: float = 0.25, popsize: int = 0, max_generations: int = 40,
                 **kwargs: Any) -> None:
        if not 0 < sigma <= 1:
            raise ConfigError(f"searcher.sigma={sigma!r}: must be in (0, 1] (a share of the index range)")
        if isinstance(popsize, bool) or not isinstance(popsize, int) or popsize < 0 or popsize == 1:
            raise ConfigError(f"searcher.popsize={popsize!r}: must be 0 (default) or an integer >= 2")
        if isinstance(max_generations, bool) or not isinstance(max_generations, int) or max_generations < 1:
            raise ConfigError(f"searcher.max_generations={max_generations!r}: must be a positive integer")
        self.sigma, self.popsize, self.max_generations = float(sigma), popsize, max_generations
        super().__init__(space, **kwargs)

    def _tune_tree(self, root: str, loop_tree: bool) -> Iterator[Need]:
        if not loop_tree:
            yield from super()._tune_tree(root, loop_tree)
            return
        from cmaes import CMA

        names = self.model.subtree[root]
        dims = max(2, len(names))  # cmaes needs two dimensions; a spare one is ignored
        bounds = np.array([[0.0, 1.0]] * dims)
        opt = CMA(mean=np.ones(dims), sigma=self.sigma, bounds=bounds, seed=int(self.rng.integers(2**31)),
                  population_size=self.popsize or None)
        best = (math.inf, {n: self.assign[n] for n in names})
        generations = 0
        while generations < self.max_generations and not opt.should_stop():
            xs = [opt.ask() for _ in range(opt.population_size)]
            assigns = [self._decode(names, x) for x in xs]
            configs = [self.model.probe({**self.assign, **a}) for a in assigns]
            yield Need(tuple(dict.fromkeys(configs)))
            costs = [self.cost(c) for c in configs]
            finite = [c for c in costs if math.isfinite(c)]
            penalty = 10 * max(finite) if finite else 1e9
            opt.tell([(x, c if math.isfinite(c) else penalty) for x, c in zip(xs, costs)])
            for c, a in zip(costs, assigns):
                if c < best[0]:
                    best = (c, a)
            generations += 1
        self.assign.update(best[1])
        for n in names:
            self._decide(n, "cma-index", best[1][n], generations=generations)

    def _decode(self, names: list[str], x: np.ndarray) -> dict[str, int]:
        return {n: int(min(self.model.m[n], max(0, round(float(x[i]) * self.model.m[n]))))
                for i, n in enumerate(names)}


# sigma: initial step size, as a share of each index range
# popsize: 0: 4 + floor(3 ln N)
CmaIndexConfig = searcher_config(CmaIndexSearcher)
