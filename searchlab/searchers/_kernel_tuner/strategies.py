"""The ``kt_*`` searchers: one per Kernel Tuner 1.5 strategy, its ``strategy_options`` as options.

Each constructor's keyword options are the strategy's ``strategy_options`` with Kernel Tuner's
defaults (``kernel_tuner/strategies/<strategy>.py``, ``_options``); ``max_fevals`` is not among
them: the bridge passes what is left of the run's budget (:mod:`.searcher`). The options marked
``Tunable`` are the ones Kernel Tuner's ``hyper.py`` tunes, over the values it lists there
(Willemsen, van Nieuwpoort & van Werkhoven, "Tuning the Tuner", arXiv 2509.26300): a list of
integers becomes the integer range it spans, a list of floats the float range with as many grid
points, a list of words or booleans its choices. Where a default lies outside hyper.py's list
the range is widened to hold it (firefly's ``gamma``, default 1.0, listed 0.1-0.5).

``constraint_aware`` defaults to None: not passed, as in Kernel Tuner's default run. Kernel Tuner
1.5 reads it twice: the strategy (default True) starts from valid members, while its cost
function repairs an invalid point to a valid neighbour only when the option was given
(``CostFunc``: ``bool(strategy_options.get("constraint_aware"))``); so by default invalid points
cost ``sys.float_info.max`` unrepaired. ``True`` or ``False`` is passed as given. (Passing True
made ``kt_pso`` fall behind Kernel Tuner's default pso by 0.06 of the optimum @220 on the four
convolution tables: bench/kt_bridge.py.)
"""

from __future__ import annotations

from typing import Any

from searchlab.core.spaces import Space
from searchlab.errors import ConfigError
from searchlab.searchers._kernel_tuner.searcher import KernelTunerSearcher
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._tunable import Annotated, Tunable

GA_METHODS = ("single_point", "two_point", "uniform", "disruptive_uniform")
DA_METHODS = ("COBYLA", "L-BFGS-B", "SLSQP", "CG", "Powell", "Nelder-Mead", "BFGS", "trust-constr")
BH_METHODS = ("Nelder-Mead", "Powell", "CG", "BFGS", "L-BFGS-B", "TNC", "COBYLA", "SLSQP")
DE_METHODS = ("best1bin", "rand1bin", "best2bin", "rand2bin", "best1exp", "rand1exp", "best2exp", "rand2exp",
              "currenttobest1bin", "currenttobest1exp", "randtobest1bin", "randtobest1exp")
NEIGHBORS = ("Hamming", "adjacent")
FLAGS = (True, False)


def _require(name: str, ok: bool, rule: str) -> None:
    if not ok:
        raise ConfigError(f"searcher.{name}: {rule}")


def _positive(**values: float) -> None:
    for key, value in values.items():
        _require(f"{key}={value!r}", value > 0, "must be > 0")


def _choice(key: str, value: Any, allowed: tuple[Any, ...]) -> None:
    _require(f"{key}={value!r}", value in allowed, f"must be one of {list(allowed)}")


class KtGeneticAlgorithmSearcher(KernelTunerSearcher):
    name, strategy = "kt_genetic_algorithm", "genetic_algorithm"

    def __init__(self, space: Space, *, popsize: Annotated[int, Tunable(2, 50)] = 26,
                 maxiter: Annotated[int, Tunable(10, 190)] = 90,
                 method: Annotated[str, Tunable(choices=GA_METHODS)] = "single_point",
                 mutation_chance: Annotated[int, Tunable(5, 95)] = 55, constraint_aware: bool | None = None,
                 **kwargs: Any) -> None:
        _choice("method", method, GA_METHODS)
        _positive(popsize=popsize, maxiter=maxiter, mutation_chance=mutation_chance)
        super().__init__(space, **kwargs)
        self.strategy_options = dict(popsize=popsize, maxiter=maxiter, method=method,
                                     mutation_chance=mutation_chance, constraint_aware=constraint_aware)


class KtPsoSearcher(KernelTunerSearcher):
    name, strategy = "kt_pso", "pso"

    def __init__(self, space: Space, *, popsize: Annotated[int, Tunable(2, 50)] = 50,
                 maxiter: Annotated[int, Tunable(10, 190)] = 190, w: float = 0.5,
                 c1: Annotated[float, Tunable(1.0, 3.5, points=11)] = 3.5,
                 c2: Annotated[float, Tunable(0.5, 2.0, points=7)] = 1.0, constraint_aware: bool | None = None,
                 **kwargs: Any) -> None:
        _positive(popsize=popsize, maxiter=maxiter)
        super().__init__(space, **kwargs)
        self.strategy_options = dict(popsize=popsize, maxiter=maxiter, w=w, c1=c1, c2=c2,
                                     constraint_aware=constraint_aware)


class KtSimulatedAnnealingSearcher(KernelTunerSearcher):
    name, strategy = "kt_simulated_annealing", "simulated_annealing"

    def __init__(self, space: Space, *, T: Annotated[float, Tunable(0.1, 2.0, points=20)] = 0.1,
                 T_min: Annotated[float, Tunable(0.0001, 0.0991, log=True, points=12)] = 0.0001,
                 alpha: Annotated[float, Tunable(choices=(0.9925, 0.995, 0.9975))] = 0.9975,
                 maxiter: Annotated[int, Tunable(1, 9)] = 1, constraint_aware: bool | None = None, **kwargs: Any) -> None:
        _positive(T=T, T_min=T_min, maxiter=maxiter)
        _require(f"T_min={T_min}, T={T}", T_min < T, "need T_min < T")
        _require(f"alpha={alpha}", 0 < alpha < 1, "must lie in (0, 1)")
        super().__init__(space, **kwargs)
        self.strategy_options = dict(T=T, T_min=T_min, alpha=alpha, maxiter=maxiter, constraint_aware=constraint_aware)


class KtDualAnnealingSearcher(KernelTunerSearcher):
    name, strategy = "kt_dual_annealing", "dual_annealing"

    def __init__(self, space: Space, *, method: Annotated[str, Tunable(choices=DA_METHODS)] = "COBYLA",
                 **kwargs: Any) -> None:
        _choice("method", method, DA_METHODS)
        super().__init__(space, **kwargs)
        self.strategy_options = dict(method=method)


class KtGreedyIlsSearcher(KernelTunerSearcher):
    name, strategy = "kt_greedy_ils", "greedy_ils"

    def __init__(self, space: Space, *, neighbor: Annotated[str, Tunable(choices=NEIGHBORS)] = "Hamming",
                 restart: Annotated[bool, Tunable(choices=FLAGS)] = True,
                 no_improvement: Annotated[int, Tunable(10, 75)] = 50,
                 random_walk: Annotated[float, Tunable(0.1, 0.5, points=5)] = 0.3, **kwargs: Any) -> None:
        _choice("neighbor", neighbor, NEIGHBORS)
        _positive(no_improvement=no_improvement, random_walk=random_walk)
        super().__init__(space, **kwargs)
        self.strategy_options = dict(neighbor=neighbor, restart=restart, no_improvement=no_improvement,
                                     random_walk=random_walk)


class KtDiffEvoSearcher(KernelTunerSearcher):
    name, strategy = "kt_diff_evo", "diff_evo"

    def __init__(self, space: Space, *, popsize: Annotated[int, Tunable(2, 50)] = 16,
                 popsize_times_dimensions: Annotated[bool, Tunable(choices=FLAGS)] = True,
                 maxiter: int = 10**15, F: Annotated[float, Tunable(0.1, 2.0, points=20)] = 0.7,
                 CR: Annotated[float, Tunable(0.05, 1.0, points=20)] = 0.6,
                 method: Annotated[str, Tunable(choices=DE_METHODS)] = "best1bin", constraint_aware: bool | None = None,
                 **kwargs: Any) -> None:
        _choice("method", method, DE_METHODS)
        _positive(popsize=popsize, maxiter=maxiter, F=F, CR=CR)
        super().__init__(space, **kwargs)
        self.strategy_options = dict(popsize=popsize, popsize_times_dimensions=popsize_times_dimensions,
                                     maxiter=maxiter, F=F, CR=CR, method=method, constraint_aware=constraint_aware)

    def options_for(self, members: int) -> dict[str, Any]:
        """Deviation: Kernel Tuner 1.5's diff_evo fails (IndexError) when its population exceeds half
        the space (its Latin-hypercube sample is cut to that); there the population is cut to it."""
        options = super().options_for(members)
        size = options["popsize"] * (self.grid.dims if options["popsize_times_dimensions"] else 1)
        if size > members // 2:
            options.update(popsize=max(2, members // 2), popsize_times_dimensions=False)
        return options


class KtFireflyAlgorithmSearcher(KernelTunerSearcher):
    name, strategy = "kt_firefly_algorithm", "firefly_algorithm"

    def __init__(self, space: Space, *, popsize: Annotated[int, Tunable(10, 30)] = 20,
                 maxiter: Annotated[int, Tunable(50, 150)] = 100,
                 B0: Annotated[float, Tunable(0.5, 1.5, points=3)] = 1.0,
                 gamma: Annotated[float, Tunable(0.1, 1.0, log=True, points=5)] = 1.0,
                 alpha: Annotated[float, Tunable(0.1, 0.3, points=3)] = 0.2, constraint_aware: bool | None = None,
                 **kwargs: Any) -> None:
        _positive(popsize=popsize, maxiter=maxiter)
        super().__init__(space, **kwargs)
        self.strategy_options = dict(popsize=popsize, maxiter=maxiter, B0=B0, gamma=gamma, alpha=alpha,
                                     constraint_aware=constraint_aware)

    def options_for(self, members: int) -> dict[str, Any]:
        """Deviation: Kernel Tuner 1.5's firefly fails (IndexError) on a space smaller than its
        swarm (its random sample is cut to the space); there the swarm is cut to the space."""
        options = super().options_for(members)
        options["popsize"] = min(options["popsize"], members)
        return options


class KtRandomSampleSearcher(KernelTunerSearcher):
    """Kernel Tuner's random sampling. ``fraction`` is used only when the run has no evaluation
    budget: given ``max_fevals``, Kernel Tuner samples that many members instead."""

    name, strategy = "kt_random_sample", "random_sample"

    def __init__(self, space: Space, *, fraction: float = 0.1, **kwargs: Any) -> None:
        _require(f"fraction={fraction}", 0 < fraction <= 1, "must lie in (0, 1]")
        super().__init__(space, **kwargs)
        self.strategy_options = dict(fraction=fraction)


class KtGreedyMlsSearcher(KernelTunerSearcher):
    """Kernel Tuner's greedy multi-start local search (``order`` is not exposed: the knobs' order)."""

    name, strategy = "kt_greedy_mls", "greedy_mls"

    def __init__(self, space: Space, *, neighbor: Annotated[str, Tunable(choices=NEIGHBORS)] = "Hamming",
                 restart: Annotated[bool, Tunable(choices=FLAGS)] = True,
                 randomize: Annotated[bool, Tunable(choices=FLAGS)] = True, **kwargs: Any) -> None:
        _choice("neighbor", neighbor, NEIGHBORS)
        super().__init__(space, **kwargs)
        self.strategy_options = dict(neighbor=neighbor, restart=restart, randomize=randomize)


class KtBasinhoppingSearcher(KernelTunerSearcher):
    name, strategy = "kt_basinhopping", "basinhopping"

    def __init__(self, space: Space, *, method: Annotated[str, Tunable(choices=BH_METHODS)] = "L-BFGS-B",
                 T: Annotated[float, Tunable(0.1, 1.5, points=7)] = 1.0, **kwargs: Any) -> None:
        _choice("method", method, BH_METHODS)
        _positive(T=T)
        super().__init__(space, **kwargs)
        self.strategy_options = dict(method=method, T=T)


KtGeneticAlgorithmConfig = searcher_config(KtGeneticAlgorithmSearcher)
KtPsoConfig = searcher_config(KtPsoSearcher)
KtSimulatedAnnealingConfig = searcher_config(KtSimulatedAnnealingSearcher)
KtDualAnnealingConfig = searcher_config(KtDualAnnealingSearcher)
KtGreedyIlsConfig = searcher_config(KtGreedyIlsSearcher)
KtDiffEvoConfig = searcher_config(KtDiffEvoSearcher)
KtFireflyAlgorithmConfig = searcher_config(KtFireflyAlgorithmSearcher)
KtRandomSampleConfig = searcher_config(KtRandomSampleSearcher)
KtGreedyMlsConfig = searcher_config(KtGreedyMlsSearcher)
KtBasinhoppingConfig = searcher_config(KtBasinhoppingSearcher)

SCHEMAS: dict[str, type] = {
    "kt_genetic_algorithm": KtGeneticAlgorithmConfig, "kt_pso": KtPsoConfig,
    "kt_simulated_annealing": KtSimulatedAnnealingConfig, "kt_dual_annealing": KtDualAnnealingConfig,
    "kt_greedy_ils": KtGreedyIlsConfig, "kt_diff_evo": KtDiffEvoConfig,
    "kt_firefly_algorithm": KtFireflyAlgorithmConfig, "kt_random_sample": KtRandomSampleConfig,
    "kt_greedy_mls": KtGreedyMlsConfig, "kt_basinhopping": KtBasinhoppingConfig,
}
