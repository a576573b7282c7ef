"""Budget-dependent schedules span the run's budget (issue 22, item 7; Kernel Tuner's rule)."""

from __future__ import annotations

import math

import pytest

from searchlab.adapters.synthetic import SyntheticKnobs
from searchlab.api import optimize
from searchlab.run.loop import Budget
from searchlab.searchers import RandomSearcher, SimulatedAnnealingSearcher


@pytest.mark.parametrize("budget", [50, 220, 1000])
def test_annealing_reaches_its_final_temperature_within_the_budget(budget: int) -> None:
    """The temperature falls from T to T_min over the run's budget: at the end it is within a
    few steps of T_min, and halfway it is still about the geometric middle. With the fixed
    1,379-evaluation schedule a 220-evaluation run ended at T = 0.33 (T_min = 0.001)."""
    problem = SyntheticKnobs(seed=1)
    searcher = SimulatedAnnealingSearcher(problem.space, seed=0)
    halfway: list[float] = []
    outcome = optimize(problem, searcher, Budget(evaluations=budget),
                       progress=lambda state, _: halfway.append(searcher.temperature) if state.done == budget // 2 else None)
    assert len(outcome.results) == budget and searcher.starts == 1
    assert searcher.span == budget
    log_end = math.log(searcher.temperature) / math.log(searcher.T_min)  # 1: T_min reached
    assert log_end >= 1 - 4 / budget, (budget, searcher.temperature)
    assert halfway and 0.35 < math.log(halfway[-1]) / math.log(searcher.T_min) < 0.65


def test_an_explicit_max_fevals_and_a_run_without_budget_keep_their_schedules() -> None:
    space = SyntheticKnobs().space
    fixed = SimulatedAnnealingSearcher(space, seed=0, max_fevals=500)
    fixed.set_budget(50)
    unbounded = SimulatedAnnealingSearcher(space, seed=0)
    assert fixed._span() == 500 and unbounded._span() == unbounded.max_iter == 1379
    capped = SimulatedAnnealingSearcher(space, seed=0)
    capped.set_budget(10**6)
    assert capped._span() == capped.grid.n_feasible(limit=100_000)  # no longer than the space (Kernel Tuner's min)


def test_the_loop_tells_every_searcher_its_budget() -> None:
    problem = SyntheticKnobs()
    searcher = RandomSearcher(problem.space, seed=0)
    assert searcher.evaluation_budget is None
    optimize(problem, searcher, Budget(evaluations=7))
    assert searcher.evaluation_budget == 7
    with pytest.raises(ValueError, match="positive"):
        searcher.set_budget(0)


def test_auto_tells_its_delegate_the_budget() -> None:
    """``auto`` on a threshold tree delegates; the delegate's schedule must span the same run."""
    from searchlab.adapters.synthetic.thresholds import SyntheticThresholds
    from searchlab.searchers._auto.searcher import AutoSearcher

    searcher = AutoSearcher(SyntheticThresholds().space, seed=0, thresholds="simulated_annealing")
    searcher.set_budget(37)
    assert searcher._inner is not None and searcher._inner.evaluation_budget == 37
