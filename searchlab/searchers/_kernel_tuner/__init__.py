"""Kernel Tuner's strategies as searchlab searchers (``searcher=kt_<strategy>``), run in searchlab's loop.

- :mod:`.space`: Kernel Tuner's ``Searchspace`` from a knob space (feasible members only);
- :mod:`.runner`: the runner the strategy calls, answered by searchlab;
- :mod:`.bridge`: one strategy run in a background thread;
- :mod:`.seeding`: the strategy's global random states, seeded and kept apart from searchlab's;
- :mod:`.searcher`: the ask/tell base (counting, budget, restarts, seeds, closing);
- :mod:`.strategies`: one registered searcher per strategy, its ``strategy_options`` as options.

Kernel Tuner (1.5.0, the ``bench`` extra) is imported only when a strategy runs.
"""

from searchlab.searchers._kernel_tuner.searcher import KernelTunerSearcher
from searchlab.searchers._kernel_tuner.strategies import (
    SCHEMAS,
    KtBasinhoppingSearcher,
    KtDiffEvoSearcher,
    KtDualAnnealingSearcher,
    KtFireflyAlgorithmSearcher,
    KtGeneticAlgorithmSearcher,
    KtGreedyIlsSearcher,
    KtGreedyMlsSearcher,
    KtPsoSearcher,
    KtRandomSampleSearcher,
    KtSimulatedAnnealingSearcher,
)

__all__ = ["SCHEMAS", "KernelTunerSearcher", "KtBasinhoppingSearcher", "KtDiffEvoSearcher", "KtDualAnnealingSearcher",
           "KtFireflyAlgorithmSearcher", "KtGeneticAlgorithmSearcher", "KtGreedyIlsSearcher", "KtGreedyMlsSearcher",
           "KtPsoSearcher", "KtRandomSampleSearcher", "KtSimulatedAnnealingSearcher"]
