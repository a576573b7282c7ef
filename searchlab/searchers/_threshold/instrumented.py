"""The instrumentation tuner (paper 003 §3.5, Alg. 8): combined area under the curves.

Needs a problem with per-iteration instrumentation (``Measurement.extra
["instrumentation"]``: per dataset, records of construct, loop iteration, comparisons
made and the profiled time of the version that ran). For a loop-based threshold T, deepest
first: one run with T = 1 gives every (dataset, iteration)'s time under T's true branch
(OptTrue), one with T = ∞ the time under its false branch (OptFalse). For every candidate
breakpoint e of Ē + ∞ the run time is Σ_{E ≥ e} OptTrue + Σ_{E < e} OptFalse (Eq. 3.1);
T takes the argmin. That is complete information: any run with the others fixed is a sum
of recorded iteration times, so the T = ∞ run is composed from the runs made for the
nodes below and is never benchmarked — one benchmark per code version (plus the first
all-false run and the final check). Simple thresholds use Alg. 2 (Alg. 3), with dataset
times also composed from the instrumentation. One benchmark run = one evaluation of one
configuration on all training datasets.
"""

from __future__ import annotations

import math
from collections.abc import Generator

from searchlab.core.records import Config
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._threshold.generator import Need
from searchlab.searchers._threshold.simple import SimpleSearcher


class InstrumentedSearcher(SimpleSearcher):
    name = "instrumented"
    requires = frozenset({"instrumentation"})
    instrumented = True

    def _iteration_times(self, config: Config, root: str) -> dict[tuple[str, int], float] | None:
        """Per (dataset, iteration) time of ``root``'s construct under ``config``."""
        out = {}
        for d in self.model.train:
            for i in range(self.model.iterations[(d.name, root)]):
                t = self.obs.instr.get((d.name, root, i, self.model.leaves(config, d, root, i)))
                if t is None:
                    return None
                out[(d.name, i)] = t
        return out

    def available(self, config: Config) -> bool:
        if super().available(config):
            return True
        return all(self._iteration_times(config, r) is not None for r in self.model.roots)

    def _tune_loop(self, name: str) -> Generator[Need, None, int]:
        m, root = self.model.m[name], self.model.root_of[name]
        c_true, c_false = self.probe(name, 0), self.probe(name, m)
        yield Need((c_true, c_false))
        opt_true, opt_false = self._iteration_times(c_true, root), self._iteration_times(c_false, root)
        if opt_true is None or opt_false is None:  # a run failed or had no instrumentation
            k = 0 if self.cost(c_true) < self.cost(c_false) else m
            self._decide(name, "alg8-total", k)
            return k
        points = []  # (E, OptTrue, OptFalse) for every comparison of T
        for d in self.model.train:
            for i in range(self.model.iterations[(d.name, root)]):
                e = self.model.value(d, name, i)
                if e is not None:
                    points.append((e, opt_true[(d.name, i)], opt_false[(d.name, i)]))
        runtimes = []
        for k in range(m + 1):  # breakpoint Ē[k]: true for E >= Ē[k] (Eq. 3.1)
            cut = self.model.reps[name][k] if k < m else math.inf
            runtimes.append(sum(t if e >= cut else f for e, t, f in points))
        best = min(runtimes)
        k = max(i for i, r in enumerate(runtimes) if r == best)
        self._decide(name, "alg8", k, curve=runtimes)
        return k


InstrumentedConfig = searcher_config(InstrumentedSearcher)
