"""Active learning for loop-based thresholds (paper 003 §3.4, Alg. 6 with Alg. 7).

Per loop-based threshold: benchmark ``initial`` random values of Ē + ∞ (3 in the thesis),
fit a second-degree polynomial of run time against the threshold value, benchmark the
unlabelled value it predicts best, and repeat. Alg. 7's endpoint sampling decides
convergence: when a new guess does not beat the best label, the best's neighbours in Ē
are benchmarked; if neither is better the search stops, else it goes on. As in the
thesis's tuner, ∞ is placed at v_m + 1 on the value axis (the fit uses values scaled to
[0, 1], the same model). Simple thresholds use Alg. 2 (Alg. 3). One benchmark run = one
evaluation on all training datasets (their summed run time).
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any

import numpy as np

from searchlab.core.spaces import ThresholdTree
from searchlab.errors import ConfigError
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._threshold.generator import Need
from searchlab.searchers._threshold.simple import SimpleSearcher


class ActiveSearcher(SimpleSearcher):
    name = "active"

    def __init__(self, space: ThresholdTree, *, initial: int = 3, **kwargs: Any) -> None:
        if isinstance(initial, bool) or not isinstance(initial, int) or initial < 1:
            raise ConfigError(f"searcher.initial={initial!r}: must be a positive integer (Alg. 6 uses 3)")
        self.initial = initial
        super().__init__(space, **kwargs)

    def _predict_best(self, name: str, labelled: dict[int, float]) -> int:
        xs = np.array(self.model.reps[name], dtype=float)
        xs = xs / xs.max() if xs.max() > 0 else xs
        keys = [k for k, t in labelled.items() if math.isfinite(t)]
        unlabelled = [k for k in range(len(xs)) if k not in labelled]
        if len(keys) < 3:  # too few finite labels for a quadratic: fit what there is
            deg = max(0, len(keys) - 1)
        else:
            deg = 2
        if not keys:
            return unlabelled[0]
        coef = np.polyfit(xs[keys], [labelled[k] for k in keys], deg)
        pred = np.polyval(coef, xs[unlabelled])
        return unlabelled[int(np.argmin(pred))]

    def _label(self, name: str, ks: list[int], labelled: dict[int, float]) -> Generator[Need, None, None]:
        configs = [self.probe(name, k) for k in ks]
        yield Need(tuple(configs))
        for k, c in zip(ks, configs):
            labelled[k] = self.cost(c)

    def _tune_loop(self, name: str) -> Generator[Need, None, int]:
        size = self.model.m[name] + 1
        guesses = sorted(int(g) for g in self.rng.choice(size, size=min(self.initial, size), replace=False))
        labelled: dict[int, float] = {}
        yield from self._label(name, guesses, labelled)
        order = list(guesses)
        while len(labelled) < size:
            best_k = min(labelled, key=lambda k: (labelled[k], -k))
            best_t = labelled[best_k]
            guess = self._predict_best(name, labelled)
            yield from self._label(name, [guess], labelled)
            order.append(guess)
            if labelled[guess] < best_t:
                continue  # Alg. 7 line 12: the best changed, keep learning
            converged = True
            for ep in (best_k + 1, best_k - 1):  # endpoint sampling (Alg. 7 lines 14-23)
                if not 0 <= ep < size:
                    continue
                if ep not in labelled:
                    yield from self._label(name, [ep], labelled)
                    order.append(ep)
                if labelled[ep] < best_t:
                    converged = False
                    break
            if converged:
                break
        best = min(labelled, key=lambda k: (labelled[k], -k))
        self._decide(name, "alg6+7", best, tried=order)
        return best


# initial: random initial guesses per threshold (Alg. 6 line 6)
ActiveConfig = searcher_config(ActiveSearcher)
