"""The simple-case tuner (paper 003 §2.1, Algs. 1-3) and the frame the loop tuners share.

Alg. 1 tunes one tree at a time, the other trees held at their current values. Alg. 2
visits a tree's thresholds deepest first; for a threshold T it benchmarks T set to 1 (the
guarded version) and to ∞ (the subtree below, already tuned), with T's ancestors set so
that T is reached. Each dataset's faster choice gives it a range ([1, E] or [E+1, ∞]);
the ranges are intersected and T takes the upper end (generalises best). An empty
intersection is broken by the heuristic of §2.1: try T = max(lower ends) and T = min(upper
ends) and keep the better (summed, optionally weighted, run time). Caching per dataset
path gives "one benchmark run per code version" when an assignment satisfying every
dataset exists: the ∞ choice of a node is composed from the runs of the node below.

Alg. 3: a threshold compared with several E_par values in a dataset (a loop-based one)
goes to a loop strategy; this tuner's is Alg. 4 (try every value of Ē + ∞ with the others
fixed); the binary, active, CMA and instrumentation tuners subclass it and replace it.

One benchmark run = one evaluation of one configuration on all training datasets; its
per-dataset times are what Alg. 2 compares.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Iterator
from typing import Any

from searchlab.core.records import Config, as_int
from searchlab.core.spaces import ThresholdTree
from searchlab.errors import ConfigError
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._threshold.common import THRESHOLD_MAX
from searchlab.searchers._threshold.generator import GeneratorSearcher, Need


class SimpleSearcher(GeneratorSearcher):
    name = "simple"

    def __init__(self, space: ThresholdTree, *, tie_break: bool = True, **kwargs: Any) -> None:
        if not isinstance(tie_break, bool):
            raise ConfigError(f"searcher.tie_break={tie_break!r}: must be true or false")
        self.tie_break = tie_break
        self.assign: dict[str, int] = {}
        super().__init__(space, **kwargs)

    # -- Algs. 1 and 3 -----------------------------------------------------------------
    def _algorithm(self) -> Iterator[Need]:
        self.assign = self.model.all_false()  # untuned incremental flattening: all false
        for root in self.model.roots:
            loop_tree = any(self.model.loop_based[n] for n in self.model.subtree[root])
            yield from self._tune_tree(root, loop_tree)
        self.final = self.model.final(self.assign)
        yield Need((self.final,), force=True,
                   meta={"final": True, "assignment": {n: as_int(v) for n, v in self.final.items()}})

    def _tune_tree(self, root: str, loop_tree: bool) -> Iterator[Need]:
        for name in self.model.postorder(root):
            if loop_tree and self.model.loop_based[name]:
                self.assign[name] = yield from self._tune_loop(name)
            else:
                self.assign[name] = yield from self._tune_simple(name)

    def probe(self, name: str, k: int, assign: dict[str, int] | None = None) -> Config:
        """BenchmarkSingleChoice's configuration: ``name`` at plateau ``k``, its ancestors
        set so that it is compared, the rest at their current (tuned) values."""
        a = dict(self.assign if assign is None else assign)
        for ancestor, branch in self.model.ancestors(name):
            a[ancestor] = 0 if branch else self.model.m[ancestor]
        a[name] = k
        return self.model.probe(a)

    def _decide(self, name: str, how: str, k: int, **extra: Any) -> None:
        self.trace.append({"threshold": name, "strategy": how, "index": k,
                           "value": self.model.final_value(name, k), **extra})

    # -- Alg. 2 ----------------------------------------------------------------------------
    def _tune_simple(self, name: str) -> Generator[Need, None, int]:
        """Alg. 2 for one threshold; returns its plateau index."""
        m = self.model.m[name]
        c_true, c_false = self.probe(name, 0), self.probe(name, m)
        yield Need((c_true, c_false))
        t_true, t_false = self.dataset_costs(c_true), self.dataset_costs(c_false)
        if t_true is None or t_false is None:  # no per-dataset times: compare the totals
            k = 0 if self.cost(c_true) < self.cost(c_false) else m
            self._decide(name, "alg2-total", k)
            return k
        lower, upper = 1, THRESHOLD_MAX
        for d in self.model.train:
            e = self.model.value(d, name, 0)
            if e is None or t_true[d.name] == t_false[d.name]:
                continue  # not compared, or indifferent: no constraint
            if t_true[d.name] < t_false[d.name]:
                upper = min(upper, e)
            else:
                lower = max(lower, e + 1)
        if lower <= upper or not self.tie_break:
            k = self.model.index(name, upper)
            self._decide(name, "alg2", k, range=[lower, upper])
            return k
        options = [self.model.index(name, v) for v in (upper, lower)]  # the merged ends
        configs = [self.probe(name, k) for k in options]
        yield Need(tuple(configs))
        costs = [self.cost(c) for c in configs]
        k = options[0] if costs[0] <= costs[1] else options[1]
        self._decide(name, "alg2-tie-break", k, range=[lower, upper], costs=costs)
        return k

    # -- Alg. 4 (this tuner's loop strategy) -------------------------------------------------
    def _tune_loop(self, name: str) -> Generator[Need, None, int]:
        """Alg. 4: every value of Ē + ∞, the best by summed run time. Returns the index."""
        configs = [self.probe(name, k) for k in range(self.model.m[name] + 1)]
        yield Need(tuple(configs))
        costs = [self.cost(c) for c in configs]
        best = min(costs)
        k = max(i for i, c in enumerate(costs) if c == best) if math.isfinite(best) else self.model.m[name]
        self._decide(name, "alg4", k)
        return k


# tie_break: §2.1's heuristic for empty intersections (else keep the upper end)
SimpleConfig = searcher_config(SimpleSearcher)
