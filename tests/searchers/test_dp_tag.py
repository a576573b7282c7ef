"""``searcher=dp_tag``: DP first exactly when it fits the budget, then tag_scaled (issue 38, item 3)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from searchlab.adapters.grammar import GrammarProblem
from searchlab.api import optimize
from searchlab.core.problem import Problem
from searchlab.errors import ConfigError
from searchlab.run.loop import Budget
from searchlab.searchers import DpSearcher, DpTagSearcher
from tests.contract import SearcherContract
from tests.searchers.test_dag_searchers import ScheduleWithSubproblems, TinyWithSubproblems


def _needed(problem: Problem) -> int:
    return DpSearcher(problem.space, direction=problem.direction).evaluations_needed()


def test_dp_opens_the_run_when_it_fits_and_tag_scaled_spends_the_rest() -> None:
    problem = ScheduleWithSubproblems()
    need = _needed(problem)
    searcher = DpTagSearcher(problem.space, direction=problem.direction, seed=0)
    outcome = optimize(problem, searcher, Budget(evaluations=need + 15))
    phases = [r.candidate.meta.get("phase") for r in outcome.results]
    assert searcher.plan == "dp+tag_scaled"
    assert phases[:need] == ["dp"] * need and set(phases[need:]) == {"tag"} and len(phases) == need + 15
    assert all(r.measurement.is_subproblem for r in outcome.results[:need - 2])  # DP measures sub-problems first
    words = [str(r.config["word"]) for r in outcome.results if not r.measurement.is_subproblem]
    assert len(words) == len(set(words))  # tag_scaled never re-measures DP's full-size plans
    top = max((r for r in outcome.results[:need] if not r.measurement.is_subproblem), key=lambda r: r.objective or 0)
    assert outcome.best is not None and (outcome.best.objective or 0) >= (top.objective or 0)


def test_without_room_for_dp_the_run_is_tag_scaled() -> None:
    problem = ScheduleWithSubproblems()
    searcher = DpTagSearcher(problem.space, direction=problem.direction, seed=0)
    outcome = optimize(problem, searcher, Budget(evaluations=_needed(problem) - 1))
    assert searcher.plan == "tag_scaled"
    assert {r.candidate.meta.get("phase") for r in outcome.results} == {"tag"}
    assert not any(r.measurement.is_subproblem for r in outcome.results)


def test_a_problem_without_subproblems_never_gets_dp() -> None:
    plain = GrammarProblem("schedule.yaml")
    searcher = DpTagSearcher(plain.space, direction=plain.direction, seed=0)
    searcher.set_budget(10_000)
    assert searcher.plan == "tag_scaled"


def test_resume_mid_dp_continues_where_it_stopped() -> None:
    problem = ScheduleWithSubproblems()
    budget = _needed(problem) + 10
    first = DpTagSearcher(problem.space, direction=problem.direction, seed=1)
    first.set_budget(budget)
    done = optimize(problem, first, Budget(evaluations=7)).results
    second = DpTagSearcher(problem.space, direction=problem.direction, seed=1)
    second.set_budget(budget)
    for result in done:
        second.replay(result)
    rest = optimize(problem, second, Budget(evaluations=budget - 7)).results
    assert [r.candidate.meta.get("phase") for r in done + rest].count("dp") == _needed(problem)
    full = [str(r.config["word"]) for r in done + rest if not r.measurement.is_subproblem]
    assert len(full) == len(set(full))


@pytest.mark.parametrize("fit", [0.0, 1.5, True, "1"])
def test_fit_is_checked(fit: Any) -> None:
    with pytest.raises(ConfigError, match="searcher.fit"):
        DpTagSearcher(TinyWithSubproblems().space, fit=fit)


class TestDpTagContract(SearcherContract):
    searcher_cls = DpTagSearcher


class TestDpTagWithDpContract(SearcherContract):
    searcher_cls = DpTagSearcher
    options: ClassVar[dict[str, Any]] = {}

    @pytest.fixture(params=["tiny"])
    def problem(self, request: pytest.FixtureRequest) -> Problem:
        return TinyWithSubproblems()
