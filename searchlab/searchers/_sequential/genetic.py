"""A generational genetic algorithm over knob value indices, after Kernel Tuner's.

From Schoonhoven, van Werkhoven & Batenburg, *Benchmarking optimization algorithms for
auto-tuning GPU kernels*, IEEE TEVC 2022, where the GA is among the best strategies
(Kernel Tuner's ``strategies/genetic_algorithm.py``); our own code with its parameters:

- a population of ``popsize`` distinct random feasible configurations (default 30, but at
  most half the space when left at the default, as Kernel Tuner does);
- each generation: rank the population by loss; pick two distinct parents with a rank
  index drawn from ``Beta(1, 2.5) * popsize`` (favours the head of the ranking); make two
  children by ``crossover`` (single_point, two_point, uniform, disruptive_uniform); mutate
  each child with probability ``1 / mutation_chance`` to a random Hamming neighbour; keep a
  child if it is feasible and not already in the next population; the new population
  replaces the old one (no elitism);
- after ``maxiter`` generations (Kernel Tuner stops) the driver restarts with a fresh
  random population.

Several evaluations in flight: a whole generation is one batch, so up to ``popsize``
evaluations run concurrently; the next generation is bred once all its parents' results
are in. Children already evaluated are not proposed again (their loss is reused).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from searchlab.core.records import Config
from searchlab.core.spaces import Space
from searchlab.errors import ConfigError
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._sequential.base import Algorithm, SequentialSearcher
from searchlab.searchers._support.neighbours import Index
from searchlab.searchers._tunable import Annotated, Tunable

Crossover = Callable[[Index, Index, np.random.Generator], tuple[Index, Index]]


def single_point(a: Index, b: Index, rng: np.random.Generator) -> tuple[Index, Index]:
    pos = int(rng.integers(len(a)))
    return (*a[:pos], *b[pos:]), (*b[:pos], *a[pos:])


def two_point(a: Index, b: Index, rng: np.random.Generator) -> tuple[Index, Index]:
    if len(a) < 3:
        return single_point(a, b, rng)
    start, end = (0, len(a)) if len(a) < 5 else (1, len(a) - 1)
    p, q = sorted(int(x) for x in rng.choice(np.arange(start, end), size=2, replace=False))
    return (*a[:p], *b[p:q], *a[q:]), (*b[:p], *a[p:q], *b[q:])


def uniform(a: Index, b: Index, rng: np.random.Generator) -> tuple[Index, Index]:
    take = rng.random(len(a)) > 0.5
    return (tuple(x if t else y for x, y, t in zip(a, b, take)),
            tuple(y if t else x for x, y, t in zip(a, b, take)))


def disruptive_uniform(a: Index, b: Index, rng: np.random.Generator) -> tuple[Index, Index]:
    """Swap half (rounded up) of the differing genes: children differ from both parents."""
    differ = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    swap = {differ[int(i)] for i in rng.permutation(len(differ))[: (len(differ) + 1) // 2]}
    return (tuple(b[i] if i in swap else a[i] for i in range(len(a))),
            tuple(a[i] if i in swap else b[i] for i in range(len(a))))


CROSSOVERS: dict[str, Crossover] = {
    "single_point": single_point, "two_point": two_point, "uniform": uniform,
    "disruptive_uniform": disruptive_uniform,
}


class GeneticSearcher(SequentialSearcher):
    name = "genetic"

    def __init__(self, space: Space, *, popsize: Annotated[int, Tunable(4, 64, log=True)] = 30,
                 maxiter: Annotated[int, Tunable(5, 150, log=True)] = 30,
                 method: Annotated[str, Tunable(choices=tuple(CROSSOVERS))] = "uniform",
                 mutation_chance: Annotated[int, Tunable(2, 50, log=True)] = 20, **kwargs: object) -> None:
        if method not in CROSSOVERS:
            raise ConfigError(f"searcher.method={method!r}: must be one of {list(CROSSOVERS)}")
        if popsize < 2 or maxiter < 1 or mutation_chance < 1:
            raise ConfigError(f"searcher.popsize={popsize}, maxiter={maxiter}, mutation_chance={mutation_chance}: "
                              "need popsize >= 2, maxiter >= 1, mutation_chance >= 1")
        super().__init__(space, **kwargs)
        self.maxiter, self.mutation_chance = maxiter, mutation_chance
        self.crossover = CROSSOVERS[method]
        members = self.space.size()
        if members <= 2 * popsize:  # small: count what the known constraints leave
            members = self.grid.n_feasible() or members
        self.popsize = max(2, min(round(members / 2), popsize) if popsize == 30 else min(members, popsize))

    def _population(self) -> list[Config]:
        population: list[Config] = []
        members: set[Config] = set()  # membership by hash, not by a scan of the list
        for _ in range(100 * self.popsize):
            config = self.start_point()
            if config not in members:
                population.append(config)
                members.add(config)
            if len(population) == self.popsize:
                break
        return population

    def _parents(self, ranked: list[Config]) -> tuple[Config, Config]:
        """Two distinct parents, favouring good ranks (Kernel Tuner's Beta(1, 2.5) index)."""
        first = min(int(self.rng.beta(1.0, 2.5) * len(ranked)), len(ranked) - 1)
        second = first
        while second == first:
            second = min(int(self.rng.beta(1.0, 2.5) * len(ranked)), len(ranked) - 1)
        return ranked[first], ranked[second]

    def _breed(self, ranked: list[Config]) -> list[Config]:
        population: list[Config] = []
        members: set[Config] = set()  # membership by hash, not by a scan of the list
        for _ in range(100 * self.popsize):
            a, b = self._parents(ranked)
            for genes in self.crossover(self.grid.encode(a), self.grid.encode(b), self.rng):
                child = self.grid.decode(genes)
                if int(self.rng.random() * self.mutation_chance) == 0:
                    child = self.grid.mutate(child, self.rng)
                if child not in members and self.grid.feasible(child):
                    population.append(child)
                    members.add(child)
                if len(population) == self.popsize:
                    return population
        return population + [c for c in self._population() if c not in members][: self.popsize - len(population)]

    def _run(self) -> Algorithm:
        population = self._population()
        for _ in range(self.maxiter):
            losses = yield population
            order = sorted(range(len(population)), key=lambda i: losses[i])
            ranked = [population[i] for i in order]
            if len(ranked) < 2:
                return
            population = self._breed(ranked)


# maxiter: generations before a restart with a fresh population
# method: single_point | two_point | uniform | disruptive_uniform
# mutation_chance: a child mutates with probability 1 / mutation_chance
GeneticConfig = searcher_config(GeneticSearcher)
