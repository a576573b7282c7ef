"""Greedy iterated local search (ILS) over knob value indices.

One of the strongest strategies in Schoonhoven, van Werkhoven & Batenburg, *Benchmarking
optimization algorithms for auto-tuning GPU kernels*, IEEE TEVC 2022 (Kernel Tuner's
``strategies/greedy_ils.py`` with ``hillclimbers.base_hillclimb``). Our own code, after
Kernel Tuner's design:

1. start at a random feasible configuration;
2. *greedy hill climbing*: visit the knobs in random order and, per knob, its neighbouring
   values (``neighbour``: Hamming or adjacent) in random order; move to the **first**
   improving neighbour and start the sweep again from there (Kernel Tuner's
   ``restart=True``); stop at a local optimum (a full sweep without improvement);
3. *perturb*: a random walk of ``max(1, int(random_walk * knobs))`` Hamming moves from that
   local optimum, and climb again from where the walk ends;
4. after ``no_improvement`` evaluations without improving the run's best, restart at a new
   random configuration (Kernel Tuner's option text; its code counts ILS iterations).

Differences from Kernel Tuner's code, on purpose: its ``base_hillclimb`` returns after the
first improvement when ``restart=True`` (so it perturbs after every improving step); here the
climb continues to a local optimum, which is what the option's help text describes.

Several evaluations in flight: a sweep's neighbours are proposed ``width`` at a time (the
number of free workers at the latest ask) and the first improving one *in sweep order* is
taken, so with one worker the search is exactly sequential first-improvement and with more
workers the extra neighbours are speculative. Nothing else is proposed while a chunk is out.
"""

from __future__ import annotations

from collections.abc import Generator

from searchlab.core.records import Config
from searchlab.core.spaces import Space
from searchlab.errors import ConfigError
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._sequential.base import Algorithm, SequentialSearcher
from searchlab.searchers._support.neighbours import check_method
from searchlab.searchers._tunable import Annotated, Tunable


class GreedyIlsSearcher(SequentialSearcher):
    name = "greedy_ils"

    def __init__(self, space: Space, *, neighbour: Annotated[str, Tunable(choices=("hamming", "adjacent"))] = "hamming",
                 random_walk: Annotated[float, Tunable(0.0, 1.0)] = 0.3,
                 no_improvement: Annotated[int, Tunable(5, 200, log=True)] = 50, **kwargs: object) -> None:
        self.neighbour = check_method(neighbour)
        if self.neighbour == "strictly_adjacent":
            raise ConfigError("searcher.neighbour='strictly_adjacent': greedy_ils climbs one knob at a time; "
                              "use hamming or adjacent")
        if not 0 <= random_walk <= 1:
            raise ConfigError(f"searcher.random_walk={random_walk}: must be in [0, 1]")
        if no_improvement < 1:
            raise ConfigError(f"searcher.no_improvement={no_improvement}: must be >= 1")
        super().__init__(space, **kwargs)
        self.random_walk, self.no_improvement = random_walk, no_improvement
        self.walk_length = max(1, int(random_walk * self.grid.dims))

    def _sweep(self, base: Config) -> list[Config]:
        """Neighbours of ``base``: knobs in random order, each knob's values in random order."""
        children: list[Config] = []
        for d in self.rng.permutation(self.grid.dims):
            along = self.grid.along(base, int(d), self.neighbour)
            children.extend(along[int(i)] for i in self.rng.permutation(len(along)))
        return children

    def _climb(self, base: Config, loss: float) -> Generator[list[Config], list[float], tuple[Config, float]]:
        """First-improvement hill climbing to a local optimum."""
        improved = True
        while improved:
            improved = False
            children = self._sweep(base)
            start = 0
            while start < len(children) and not improved:
                chunk = children[start:start + max(1, self._width)]
                start += len(chunk)
                losses = yield chunk
                for child, child_loss in zip(chunk, losses):
                    if child_loss < loss:
                        base, loss, improved = child, child_loss, True
                        break
        return base, loss

    def _run(self) -> Algorithm:
        current = self.start_point()
        (loss,) = yield [current]
        best, best_at = loss, self.n_seen
        while True:
            current, loss = yield from self._climb(current, loss)
            if loss < best:
                best, best_at = loss, self.n_seen
            if self.n_seen - best_at >= self.no_improvement:
                return  # the driver restarts at a new random configuration
            current = list(self.grid.walk(current, self.walk_length, self.rng))[-1]
            (loss,) = yield [current]
            if loss < best:
                best, best_at = loss, self.n_seen


# neighbour: hamming | adjacent
# random_walk: perturbation size as a share of the knobs
# no_improvement: evaluations without a new best before a random restart
GreedyIlsConfig = searcher_config(GreedyIlsSearcher)
