"""Simulated annealing over knob value indices, after Kernel Tuner's strategy.

From Schoonhoven, van Werkhoven & Batenburg, *Benchmarking optimization algorithms for
auto-tuning GPU kernels*, IEEE TEVC 2022 (Kernel Tuner's ``strategies/simulated_annealing.py``);
our own code with Kernel Tuner's parameters and rules:

- a neighbour is drawn from the Hamming neighbourhood with probability 0.2, else from the
  strictly-adjacent one (every knob within one index step); a point without feasible
  neighbours jumps to a random configuration;
- acceptance: always when better; a failed neighbour is never accepted once a working
  configuration is held, and always accepted while the current one failed; otherwise
  ``exp(-(new - old) / |old| / T)`` — Kernel Tuner's relative-cost rule, on our loss
  (an absolute difference when ``old`` is 0);
- temperature ``T = T_start * alpha ** (max_iter / max_fevals * c)`` with ``c`` the
  configurations evaluated in this annealing run and ``max_iter = ceil(log(T_min) / log(alpha))``,
  so the schedule spans ``max_fevals`` evaluations; ``maxiter`` neighbours per temperature step;
- ``max_fevals`` left unset is the run's evaluation budget (what is left of it when an
  annealing run starts: :meth:`Searcher.set_budget`), capped at the feasible configurations
  when they are countable. That is Kernel Tuner's rule (``strategies/simulated_annealing.py``:
  ``max_fevals = strategy_options.get("max_fevals", max_iter)``, then
  ``min(searchspace.size, max_fevals)``, where ``max_fevals`` is the run's budget). Without a
  budget it is ``max_iter`` (1,379 evaluations at the defaults), as before; a 220-evaluation
  run then ended at T = 0.33, still hot, never reaching ``T_min`` (issue 22, item 7);
- stuck (100 steps without a new configuration): jump to a random configuration.

When the temperature falls below ``T_min`` (Kernel Tuner stops there) the driver restarts
annealing from a new random configuration, so a larger budget is still spent.

Several evaluations in flight: each temperature step proposes ``max(maxiter, width)``
neighbours of the current point at once (``width``: free workers at the latest ask) and
applies the acceptance rule to them in order; with one worker and ``maxiter=1`` this is
Kernel Tuner's sequential loop.
"""

from __future__ import annotations

import math

from searchlab.core.records import Config
from searchlab.core.spaces import Space
from searchlab.errors import ConfigError
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._sequential.base import Algorithm, SequentialSearcher
from searchlab.searchers._tunable import Annotated, Tunable


def acceptance(old: float, new: float, temperature: float) -> float:
    """Probability of moving from loss ``old`` to loss ``new`` (Kernel Tuner's rule)."""
    if not math.isfinite(old):
        return 1.0
    if not math.isfinite(new):
        return 0.0
    if new < old:
        return 1.0
    scale = abs(old) if old != 0 else 1.0
    return math.exp(-(new - old) / scale / temperature)


class SimulatedAnnealingSearcher(SequentialSearcher):
    name = "simulated_annealing"

    def __init__(self, space: Space, *, T: Annotated[float, Tunable(0.1, 10.0, log=True)] = 1.0,
                 T_min: Annotated[float, Tunable(1e-4, 0.05, log=True)] = 0.001,
                 alpha: Annotated[float, Tunable(choices=(0.9, 0.95, 0.98, 0.99, 0.995, 0.9975, 0.999))] = 0.995,
                 maxiter: Annotated[int, Tunable(1, 10)] = 1, max_fevals: int | None = None,
                 hamming_share: Annotated[float, Tunable(0.0, 1.0)] = 0.2,
                 **kwargs: object) -> None:
        if not 0 < T_min < T:
            raise ConfigError(f"searcher.T={T}, T_min={T_min}: need 0 < T_min < T")
        if not 0 < alpha < 1:
            raise ConfigError(f"searcher.alpha={alpha}: must be in (0, 1)")
        if maxiter < 1 or (max_fevals is not None and max_fevals < 1):
            raise ConfigError(f"searcher.maxiter={maxiter}, max_fevals={max_fevals}: must be >= 1")
        if not 0 <= hamming_share <= 1:
            raise ConfigError(f"searcher.hamming_share={hamming_share}: must be in [0, 1]")
        super().__init__(space, **kwargs)
        self.T, self.T_min, self.alpha, self.maxiter, self.hamming_share = T, T_min, alpha, maxiter, hamming_share
        self.max_iter = math.ceil(math.log(T_min) / math.log(alpha))
        self.max_fevals = max_fevals
        self.temperature = T  # the current annealing run's temperature
        self.span = 0  # evaluations the current annealing run's schedule spans

    def _span(self) -> int:
        """Evaluations this annealing run's schedule spans: ``max_fevals`` if given, else what is
        left of the run's budget (at most the feasible configurations), else ``max_iter``."""
        if self.max_fevals is not None:
            return self.max_fevals
        if self.evaluation_budget is None:
            return self.max_iter
        left = max(1, self.evaluation_budget - self.n_seen)
        feasible = self.grid.n_feasible(limit=100_000)
        return max(1, min(left, feasible)) if feasible is not None else left

    def _neighbour(self, position: Config) -> Config:
        method = "hamming" if self.rng.random() < self.hamming_share else "strictly_adjacent"
        return self.grid.random_neighbour(position, method, self.rng) or self.start_point()

    def _run(self) -> Algorithm:
        self.span = span = self._span()
        position = self.start_point()
        (cost,) = yield [position]
        first_seen = self.n_seen
        temperature, stuck, last_count, steps = self.T, 0, 0, 0
        self.temperature = temperature
        while temperature > self.T_min and steps <= 10 * self.max_iter:
            steps += 1
            batch = [self._neighbour(position) for _ in range(max(self.maxiter, self._width))]
            losses = yield batch
            for config, loss in zip(batch, losses):
                if acceptance(cost, loss, temperature) > self.rng.random():
                    position, cost = config, loss
            count = self.n_seen - first_seen
            temperature = self.temperature = self.T * self.alpha ** (self.max_iter / span * count)
            stuck = stuck + 1 if count == last_count else 0
            last_count = count
            if stuck > 100:
                position, stuck = self.start_point(), 0
                (cost,) = yield [position]


# T: start temperature
# maxiter: neighbours per temperature step
# max_fevals: evaluations the schedule spans (None: the run's budget left, else ceil(log T_min / log alpha))
# hamming_share: probability of a Hamming instead of a strictly-adjacent move
SimulatedAnnealingConfig = searcher_config(SimulatedAnnealingSearcher)
