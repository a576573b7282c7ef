"""Issue 46 item 2: the main example (``make demo`` = ``problem=lud searcher=tag``) is a real search.

Before, it was an exhaustive pass over the 32 configurations of LUD's threshold tree with a budget
of 100 ("every configuration in the space was measured"). Now the plain command tunes the block
and tile sizes too (``problem.sizes=true`` in conf/problem/lud.yaml) with a budget that must stay
a small fraction of that space."""

from __future__ import annotations

import pytest

from searchlab.cli.compose import compose
from tests.futhark_support import served

DEMO = ["problem=lud", "searcher=tag"]  # the Makefile's demo target


def test_the_demo_tunes_sizes_with_a_budget_of_its_own() -> None:
    cfg = compose(DEMO).cfg
    assert cfg.problem.sizes is True and cfg.problem._target_.endswith("FutharkLud")
    assert cfg.budget.evaluations == 20  # the problem's default budget (budget=demo) ...
    assert cfg.budget.wall_time_s == 180  # ... or 3 minutes of search: the demo's bound holds on a busy machine
    assert compose([*DEMO, "budget.evaluations=7"]).cfg.budget.evaluations == 7  # ... which the command line overrides
    assert compose([*DEMO, "budget=large"]).cfg.budget.evaluations == 1000
    assert compose(["problem=matmul"]).cfg.budget.evaluations == 100  # other problems keep budget=default


@pytest.mark.slow
def test_the_demo_measures_under_a_quarter_of_its_space() -> None:
    """The compiled program's real space (thresholds and sizes), as the demo builds it."""
    from searchlab.recompose import build_problem

    cfg = compose(DEMO).cfg
    with served(lambda: build_problem(cfg.problem)) as (problem, _):
        size = problem.space.size()
        assert cfg.budget.evaluations < 0.25 * size, (cfg.budget.evaluations, size)
        assert problem.space.kind == "thresholds+sizes"
