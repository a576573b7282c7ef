"""Classic autotuning strategies (Kernel Tuner's, Schoonhoven et al. 2022): contract, neighbourhoods, behaviour."""

from __future__ import annotations

import gc
import math
import threading
import time

import numpy as np
import pytest

from searchlab.adapters.synthetic import SyntheticKnobs
from searchlab.api import Outcome, optimize
from searchlab.core.expr import Expression
from searchlab.core.records import Config, Measurement
from searchlab.core.spaces import CategoricalKnob, IntKnob, KnobSpace, OrdinalKnob
from searchlab.errors import ConfigError
from searchlab.run.loop import Budget
from searchlab.searchers import (
    DualAnnealingSearcher,
    GeneticSearcher,
    GreedyIlsSearcher,
    RandomSearcher,
    SimulatedAnnealingSearcher,
)
from searchlab.searchers._sequential.genetic import CROSSOVERS
from searchlab.searchers._sequential.simulated_annealing import acceptance
from searchlab.searchers._support.neighbours import Grid
from tests.contract import SearcherContract


class TestGreedyIlsContract(SearcherContract):
    searcher_cls = GreedyIlsSearcher


class TestSimulatedAnnealingContract(SearcherContract):
    searcher_cls = SimulatedAnnealingSearcher


class TestGeneticContract(SearcherContract):
    searcher_cls = GeneticSearcher


class TestDualAnnealingContract(SearcherContract):
    searcher_cls = DualAnnealingSearcher


# -- neighbourhoods ---------------------------------------------------------------------
SPACE = KnobSpace((OrdinalKnob("a", (1, 2, 4, 8)), IntKnob("b", 0, 2), CategoricalKnob("c", ("x", "y", "z"))),
                  constraints=(Expression("a * (b + 1) <= 8"),))


def test_hamming_and_adjacent_neighbourhoods_respect_known_constraints() -> None:
    grid = Grid(SPACE)
    here = Config(a=2, b=1, c="x")
    hamming = grid.neighbours(here, "hamming")
    # a: 1, 4 (8 * 2 > 8 is infeasible); b: 0, 2 (2 * 3 <= 8); c: y, z
    assert set(hamming) == {
        Config(a=1, b=1, c="x"), Config(a=4, b=1, c="x"), Config(a=2, b=0, c="x"),
        Config(a=2, b=2, c="x"), Config(a=2, b=1, c="y"), Config(a=2, b=1, c="z")}
    adjacent = grid.neighbours(Config(a=1, b=0, c="y"), "adjacent")
    # ordered knobs move one index step; the categorical takes any other value
    assert set(adjacent) == {
        Config(a=2, b=0, c="y"), Config(a=1, b=1, c="y"), Config(a=1, b=0, c="x"), Config(a=1, b=0, c="z")}
    ball = grid.neighbours(Config(a=1, b=0, c="x"), "strictly_adjacent")
    assert all(grid.feasible(c) for c in ball) and Config(a=1, b=0, c="x") not in ball
    assert Config(a=2, b=1, c="z") in ball and Config(a=4, b=0, c="x") not in ball  # a moved two steps
    assert len(ball) == 2 * 2 * 3 - 1


def test_random_neighbour_is_a_feasible_neighbour() -> None:
    grid = Grid(SPACE)
    rng = np.random.default_rng(0)
    here = Config(a=8, b=0, c="z")
    for method in ("hamming", "adjacent", "strictly_adjacent"):
        for _ in range(20):
            other = grid.random_neighbour(here, method, rng)
            assert other is not None and other != here and grid.feasible(other)
            assert other in grid.neighbours(here, method)


# -- behaviour --------------------------------------------------------------------------
class Bowl(SyntheticKnobs):
    """A smooth separable bowl over 6 knobs of 8 values (262144 members), optimum at index 5."""

    def __init__(self) -> None:
        super().__init__()
        self._space = KnobSpace(tuple(OrdinalKnob(f"k{i}", tuple(2**j for j in range(8))) for i in range(6)))

    def evaluate(self, config: Config) -> Measurement:
        return Measurement.ok(1.0 + sum((math.log2(float(v)) - 5) ** 2 for v in config.values()))  # type: ignore[arg-type,misc]


def _best(outcome: Outcome) -> float:
    assert outcome.best is not None and outcome.best.objective is not None
    return outcome.best.objective


@pytest.mark.parametrize("cls", [GreedyIlsSearcher, SimulatedAnnealingSearcher, GeneticSearcher, DualAnnealingSearcher])
def test_classic_strategies_descend_a_bowl_better_than_random(cls: type) -> None:
    """On a smooth landscape each local/evolutionary method beats random search clearly."""
    problem, budget = Bowl(), 200
    mine = [_best(optimize(problem, cls(problem.space, seed=s), Budget(evaluations=budget))) for s in range(4)]
    rand = [_best(optimize(problem, RandomSearcher(problem.space, seed=s), Budget(evaluations=budget))) for s in range(4)]
    assert np.mean(mine) < 0.75 * np.mean(rand), (mine, rand)


def test_greedy_ils_with_one_worker_is_first_improvement() -> None:
    """Sequential first improvement: after the start, every accepted move improves the incumbent."""
    problem = Bowl()
    searcher = GreedyIlsSearcher(problem.space, seed=1, no_improvement=10_000)
    outcome = optimize(problem, searcher, Budget(evaluations=60))
    assert _best(outcome) <= 3.0  # two knobs one step off at most, within 60 evaluations
    assert searcher.starts == 1


def test_simulated_annealing_acceptance_rule() -> None:
    assert acceptance(10.0, 9.0, 1.0) == 1.0
    assert acceptance(math.inf, 50.0, 1.0) == 1.0 and acceptance(10.0, math.inf, 1.0) == 0.0
    assert acceptance(10.0, 11.0, 1.0) == pytest.approx(math.exp(-0.1))
    assert acceptance(10.0, 11.0, 0.01) < 1e-4  # cold: worse moves are (almost) never taken
    assert acceptance(-10.0, -9.0, 1.0) == pytest.approx(math.exp(-0.1))  # maximising: loss = -objective


def test_crossovers_keep_genes_of_the_parents() -> None:
    rng = np.random.default_rng(0)
    a, b = (0, 1, 2, 3, 4, 5), (5, 4, 3, 2, 1, 0)
    for name, crossover in CROSSOVERS.items():
        c1, c2 = crossover(a, b, rng)
        assert all(x in (p, q) for x, p, q in zip(c1, a, b)), name
        assert all({x, y} == {p, q} for x, y, p, q in zip(c1, c2, a, b)), name
    c1, _ = CROSSOVERS["disruptive_uniform"](a, b, rng)
    assert c1 not in (a, b)


def test_bad_options_are_refused_with_the_rule() -> None:
    space = SyntheticKnobs().space
    with pytest.raises(ConfigError, match="neighbour"):
        GreedyIlsSearcher(space, neighbour="diagonal")
    with pytest.raises(ConfigError, match="alpha"):
        SimulatedAnnealingSearcher(space, alpha=1.5)
    with pytest.raises(ConfigError, match="method"):
        GeneticSearcher(space, method="three_point")
    with pytest.raises(ConfigError, match="method"):
        DualAnnealingSearcher(space, method="newton")


def test_dual_annealing_thread_stops_when_searcher_is_discarded() -> None:
    problem = SyntheticKnobs()
    searcher = DualAnnealingSearcher(problem.space, seed=0)
    optimize(problem, searcher, Budget(evaluations=5))
    assert any(t.name == "searchlab-dual-annealing" for t in threading.enumerate())
    del searcher
    gc.collect()
    deadline = time.time() + 60  # a wait, not a limit: a loaded machine may take a while to end it
    while any(t.name == "searchlab-dual-annealing" for t in threading.enumerate()) and time.time() < deadline:
        time.sleep(0.01)
    assert not any(t.name == "searchlab-dual-annealing" for t in threading.enumerate())


def test_genetic_batches_a_generation_for_parallel_workers() -> None:
    searcher = GeneticSearcher(SyntheticKnobs().space, seed=0, popsize=12)
    batch = searcher.ask(20)
    assert len(batch) == 12 and len({c.proposal for c in batch}) == 12
    assert searcher.ask(5) == []  # the next generation needs these results
