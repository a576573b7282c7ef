"""The search loop: budgets, known constraints, cache, stop reasons."""

from __future__ import annotations

import pytest

from searchlab.adapters.synthetic import SyntheticDag, SyntheticKnobs
from searchlab.api import optimize
from searchlab.core.records import Config, FailureMode, Measurement, Status
from searchlab.errors import ConfigError
from searchlab.run.loop import Budget, StopReason
from searchlab.searchers import ExhaustiveSearcher, RandomSearcher


@pytest.mark.parametrize("kwargs, match", [
    ({"evaluations": -3}, r"budget.evaluations=-3"),
    ({"evaluations": 0}, r"budget.evaluations=0"),
    ({"wall_time_s": 0}, r"budget.wall_time_s=0"),
    ({"max_failure_rate": 1.5}, r"budget.max_failure_rate=1.5"),
    ({"evaluations": None}, r"at least one"),
])
def test_budget_rejects_bad_values(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Budget(**kwargs)  # type: ignore[arg-type]


def test_stops_on_evaluation_budget_and_records_failures_by_mode() -> None:
    p = SyntheticKnobs()
    outcome = optimize(p, RandomSearcher(p.space, seed=0), Budget(evaluations=120))
    assert outcome.reason is StopReason.EVALUATIONS and len(outcome.results) == 120
    modes = {r.measurement.failure_mode for r in outcome.results if not r.ok}
    assert modes <= {FailureMode.RESOURCES, FailureMode.COMPILE, FailureMode.WRONG_OUTPUT}
    assert modes, "synthetic_knobs has hidden constraints that random search must hit"


def test_known_constraints_never_reach_the_problem() -> None:
    p = SyntheticKnobs()
    seen: list[Config] = []
    original = p.evaluate

    def spy(config: Config) -> Measurement:
        seen.append(config)
        return original(config)

    p.evaluate = spy  # type: ignore[method-assign]
    space = p.space
    bad = Config(block_x=64, block_y=64, tile=1, unroll=1, vector="scalar")
    assert space.check(bad) is not None

    class Proposer(RandomSearcher):
        def _ask(self, n: int) -> list[Config]:
            return [bad] if not self.seen(bad) else super()._ask(n)

    outcome = optimize(p, Proposer(space, seed=0), Budget(evaluations=3))
    assert outcome.results[0].status is Status.INFEASIBLE
    # recorded, but not counted: the budget buys three real measurements (issue 11, part 5)
    assert bad not in seen and len(seen) == 3 and len(outcome.results) == 4


def test_infeasible_proposals_are_capped_separately() -> None:
    """A searcher that proposes nothing but known-infeasible configurations is stopped by
    ``budget.max_infeasible_proposals`` (reported as such), not by the evaluation budget."""
    p = SyntheticKnobs()
    space = p.space
    bad = [c for c in (Config(block_x=bx, block_y=by, tile=t, unroll=u, vector=v)
                       for bx in (32, 64) for by in (32, 64) for t in (1, 2, 4) for u in (1, 2, 4)
                       for v in ("scalar",)) if space.check(c) is not None]
    assert len(bad) >= 5

    class Pathological(RandomSearcher):
        def _ask(self, n: int) -> list[Config]:
            return [bad[len(self.history) % len(bad)]]

    outcome = optimize(p, Pathological(space, seed=0), Budget(evaluations=10, max_infeasible_proposals=25))
    assert outcome.reason is StopReason.INFEASIBLE_PROPOSALS
    assert len(outcome.results) == 25 and all(r.status is Status.INFEASIBLE for r in outcome.results)
    with pytest.raises(ConfigError, match="budget.max_infeasible_proposals=0"):
        Budget(max_infeasible_proposals=0)


def test_target_and_exhaustion() -> None:
    p = SyntheticDag(arity=(2, 2, 2))
    optimum = p.known_optimum
    outcome = optimize(p, ExhaustiveSearcher(p.space, direction=p.direction), Budget(evaluations=100, target=optimum))
    assert outcome.reason is StopReason.TARGET and outcome.best is not None and outcome.best.objective == optimum
    outcome = optimize(p, ExhaustiveSearcher(p.space, direction=p.direction), Budget(evaluations=100))
    assert outcome.reason is StopReason.EXHAUSTED and len(outcome.results) == 8


def test_failure_rate_bound() -> None:
    p = SyntheticKnobs(local_mem_kb=1)  # nearly everything exceeds local memory
    outcome = optimize(p, RandomSearcher(p.space, seed=0),
                       Budget(evaluations=500, max_failure_rate=0.5, failure_rate_after=10))
    assert outcome.reason is StopReason.FAILURE_RATE and len(outcome.results) < 500


def test_cache_hits_skip_the_problem() -> None:
    class DictCache:
        def __init__(self) -> None:
            self.data: dict[Config, Measurement] = {}

        def get(self, config: Config) -> Measurement | None:
            return self.data.get(config)

        def put(self, config: Config, m: Measurement) -> None:
            self.data[config] = m

    cache = DictCache()
    p = SyntheticDag(arity=(2, 3))
    first = optimize(p, ExhaustiveSearcher(p.space, direction=p.direction), Budget(evaluations=10), cache=cache)
    second = optimize(p, ExhaustiveSearcher(p.space, direction=p.direction), Budget(evaluations=10), cache=cache)
    assert not any(r.cache_hit for r in first.results) and all(r.cache_hit for r in second.results)
    assert [r.objective for r in first.results] == [r.objective for r in second.results]
