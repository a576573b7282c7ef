"""The base of the ``kt_*`` searchers: a Kernel Tuner strategy behind searchlab's ask/tell.

Why: to compare and tune Kernel Tuner's strategies on the same footing as ours — the same
loop, budget, records, caches, failures and resume — rather than beside them in Kernel Tuner's
own simulation mode (bench/peers_kt.py), and to make their ``strategy_options`` tunable by
``problem=searcher_settings`` (issue 23, item 5; Willemsen, van Nieuwpoort & van Werkhoven,
"Tuning the Tuner", arXiv 2509.26300, who tune them in Kernel Tuner).

The strategy's own code (Kernel Tuner 1.5, the optional ``bench`` extra) runs unchanged in a
thread (:mod:`.bridge`); its runner hands each batch of new configurations to this searcher's
ask side and waits (:mod:`.runner`). The driver is :class:`SequentialSearcher`'s:

- **Counting.** Every configuration the strategy hands over is one searchlab evaluation,
  counted by ``budget.evaluations`` like any other searcher's; repeats are answered from the
  results told (Kernel Tuner's cache) and never counted; known-infeasible configurations are
  never proposed (the strategy's search space holds only the feasible members).
- **Budget.** ``max_fevals`` is not an option: each strategy run gets what is left of the run's
  budget (``Searcher.set_budget``; the space's feasible size when there is none), as Kernel
  Tuner passes its evaluation budget. When the loop's budget is spent the thread is stopped at
  once (Kernel Tuner's ``StopCriterionReached``) and joined; :meth:`close` does the same for any
  other stop, and so does discarding the searcher.
- **Restarts.** A strategy that ends before the budget (dual annealing after SciPy's ``maxfun``,
  a genetic algorithm after ``maxiter`` generations, a converged swarm) is started again with a
  fresh seed drawn from the searcher's generator, as our classic strategies restart
  (:mod:`searchlab.searchers._sequential.base`); the new run does not know the old one's
  results except through the repeats it is answered for free.
- **In flight.** One batch of the strategy at a time: a whole population for the population
  strategies (their ``runner.run`` batch, so several workers can measure it), one configuration
  for the sequential ones (annealing, greedy ILS, dual annealing).
- **Seeds.** Each strategy run's global ``random``/``numpy.random`` states are seeded from the
  searcher's seed and swapped in only while the strategy runs, and SciPy's unseeded
  ``LatinHypercube`` (diff_evo's first population) gets a seed from them (:mod:`.seeding`), so a
  seeded searcher repeats its trajectory (tested for every ``kt_*`` searcher). Kernel Tuner's
  own simulation runs are not reproducible this way: ``tune_kernel(seed=...)`` reaches only pymoo.

Deviations from Kernel Tuner's simulation mode: the strategy minimises searchlab's loss (``time``,
or minus a maximised objective); a strategy that ends early is restarted instead of leaving the
rest of the budget unspent; diff_evo and firefly get a smaller population on spaces too small for
theirs, where Kernel Tuner 1.5 fails (:mod:`.strategies`).
"""

from __future__ import annotations

import importlib.util
from typing import Any, ClassVar

from searchlab.core.records import Candidate, Result, Status
from searchlab.core.spaces import KnobSpace, Space
from searchlab.errors import ConfigError
from searchlab.searchers._kernel_tuner.bridge import Bridge
from searchlab.searchers._kernel_tuner.space import build_searchspace, too_large
from searchlab.searchers._sequential.base import Algorithm, SequentialSearcher

INSTALL = "pip install 'searchlab[bench]' (kernel_tuner==1.5.0)"


def require_kernel_tuner(name: str) -> None:
    if importlib.util.find_spec("kernel_tuner") is None:
        raise ConfigError(f"searcher={name} needs Kernel Tuner, which is not installed: {INSTALL}")


class KernelTunerSearcher(SequentialSearcher):
    """A Kernel Tuner strategy (``kernel_tuner.strategies.<strategy>``) as a searcher."""

    strategy: ClassVar[str] = ""

    def __init__(self, space: Space, **kwargs: Any) -> None:
        require_kernel_tuner(self.name)
        super().__init__(space, **kwargs)
        self.strategy_options: dict[str, Any] = {}
        self._searchspace: Any = None
        self._bridge: Bridge | None = None
        self._counted = 0  # results that count toward budget.evaluations

    @classmethod
    def _check_space(cls, space: Space) -> str | None:
        return too_large(space) if isinstance(space, KnobSpace) else None

    def _run(self) -> Algorithm:
        if self._searchspace is None:
            assert isinstance(self.space, KnobSpace)
            self._searchspace = build_searchspace(self.space)
        left = (self.evaluation_budget - self._counted) if self.evaluation_budget is not None else None
        max_fevals = max(1, min(left, self._searchspace.size) if left is not None else self._searchspace.size)
        seed = int(self.rng.integers(2**32))
        bridge = self._bridge = Bridge(self.strategy, self._searchspace, self.grid, self._losses,
                                       self.options_for(self._searchspace.size), max_fevals, seed)
        bridge.start()
        return _drive(bridge)  # holds the bridge, not the searcher: discarding the searcher stops the thread

    def options_for(self, members: int) -> dict[str, Any]:
        """The ``strategy_options`` of a run on a space of ``members`` feasible members (a hook
        for strategies that would fail on a small space)."""
        return {k: v for k, v in self.strategy_options.items() if v is not None}  # None: Kernel Tuner's default

    def _tell(self, candidate: Candidate, result: Result) -> None:
        super()._tell(candidate, result)
        if not (result.measurement.status is Status.INFEASIBLE and not result.cache_hit):
            self._counted += 1
        if self._budget_spent():
            self.close()

    def _budget_spent(self) -> bool:
        return self.evaluation_budget is not None and self._counted >= self.evaluation_budget

    def _done(self) -> bool:
        return super()._done() or self._budget_spent()

    def close(self) -> None:
        """Stop the strategy's thread now (it ends through ``StopCriterionReached``) and wait for it."""
        if self._algorithm is not None:
            self._algorithm.close()
            self._algorithm, self._request = None, []
        if self._bridge is not None:
            self._bridge.stop()
            self._bridge = None


def _drive(bridge: Bridge) -> Algorithm:
    """The strategy's batches as the coroutine :class:`SequentialSearcher` drives; closing it
    (or dropping it) stops the thread."""
    try:
        while (batch := bridge.next_batch()) is not None:
            yield batch
            bridge.resume()
    finally:
        bridge.stop()
