"""Binary search over Ē + {∞} for loop-based thresholds (paper 003 §3.2, Alg. 5).

Each loop-based threshold, deepest first, is first benchmarked at ∞; then the midpoint of
the remaining range is benchmarked: better than the best so far discards the half towards
∞, otherwise the half away from it, until the range is empty — about log2 |Ē| benchmark
runs per threshold, relying on run time being unimodal in the threshold (§2.2, Fig. 2.4).

The direction follows the thesis's tuner (``binary-tuner.py``), which lists Ē from ∞
downwards and applies Alg. 5's ``Lower = Midpoint + 1`` / ``Upper = Midpoint - 1`` to that
list: a midpoint that beats ∞ moves the search towards smaller thresholds (more of the
guarded version). Read over an ascending Ē, the printed pseudocode would instead move
towards ∞ after an improvement and could never reach a threshold below its first midpoint.
Simple thresholds use Alg. 2 (Alg. 3). One benchmark run = one evaluation on all training
datasets (their summed run time).
"""

from __future__ import annotations

from collections.abc import Generator

from searchlab.searchers._schema import searcher_config
from searchlab.searchers._threshold.generator import Need
from searchlab.searchers._threshold.simple import SimpleSearcher


class BinarySearcher(SimpleSearcher):
    name = "binary"

    def _tune_loop(self, name: str) -> Generator[Need, None, int]:
        m = self.model.m[name]
        # position j of the list [∞, v_m, ..., v_1] is plateau index m - j
        first_config = self.probe(name, m)
        yield Need((first_config,))
        best_time, best = self.cost(first_config), m
        tried = [m]
        first, last = 1, m
        while first < last:
            mid = (first + last) // 2
            config = self.probe(name, m - mid)
            yield Need((config,))
            tried.append(m - mid)
            t = self.cost(config)
            if t < best_time:
                best_time, best = t, m - mid
                first = mid + 1
            else:
                last = mid - 1
        self._decide(name, "alg5", best, tried=tried)
        return best


# tie_break: Alg. 2's heuristic on the simple thresholds
BinaryConfig = searcher_config(BinarySearcher)
