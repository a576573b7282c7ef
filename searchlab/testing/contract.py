"""Shared contract tests that every searcher reuses (as Optuna's sampler tests do).

Subclass :class:`SearcherContract` (``from searchlab.testing import SearcherContract``) in a
``test_*.py`` module and set ``searcher_cls`` (and ``options``); the tests run on a small and
a full problem of each space kind and skip the kinds the searcher refuses (it must refuse with a reason, never crash).

    class TestRandom(SearcherContract):
        searcher_cls = RandomSearcher
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import pytest

from searchlab.adapters.synthetic import SyntheticDag, SyntheticKnobs, SyntheticThresholds
from searchlab.api import optimize
from searchlab.core.expr import Expression
from searchlab.core.problem import Problem
from searchlab.core.records import Candidate, Config, Measurement, Result
from searchlab.core.spaces import KnobSpace, OrdinalKnob, Threshold, ThresholdDataset, ThresholdTree
from searchlab.errors import DuplicateResultError, IncompatibleError, UnknownCandidateError
from searchlab.run.loop import Budget, StopReason
from searchlab.searchers import Searcher


class TinyKnobs(SyntheticKnobs):
    """Six members, one known-infeasible: small enough to exhaust."""

    def __init__(self) -> None:
        super().__init__()
        self._space = KnobSpace((OrdinalKnob("block_x", (1, 2, 4)), OrdinalKnob("block_y", (8, 16))),
                                constraints=(Expression("block_x * block_y <= 32"),))

    def evaluate(self, config: Config) -> Measurement:
        return Measurement.ok(100.0 / (int(config["block_x"]) * int(config["block_y"])))  # type: ignore[arg-type]


class TinyThresholds(SyntheticThresholds):
    def __init__(self) -> None:
        super().__init__()
        self._space = ThresholdTree(
            (Threshold("t0"), Threshold("t1", parent="t0", branch=False)),
            (ThresholdDataset("a", {"t0": (10,), "t1": (100,)}), ThresholdDataset("b", {"t0": (20,), "t1": (50, 40)})),
        )

    def evaluate(self, config: Config) -> Measurement:
        t0, t1 = int(config["t0"]), int(config["t1"])  # type: ignore[arg-type]
        return Measurement.ok(1.0 + abs(t0 - 15) / 10 + abs(t1 - 45) / 100)


PROBLEMS: dict[str, Callable[[], Problem]] = {
    "tiny_knobs": TinyKnobs,
    "tiny_dag": lambda: SyntheticDag(arity=(2, 3, 2)),
    "tiny_thresholds": TinyThresholds,
    "knobs": SyntheticKnobs,
    "dag": SyntheticDag,
    "thresholds": SyntheticThresholds,
}
TINY = ("tiny_knobs", "tiny_dag", "tiny_thresholds")


class SearcherContract:
    searcher_cls: ClassVar[type[Searcher]]
    options: ClassVar[dict[str, Any]] = {}
    budget: ClassVar[int] = 40  # evaluations per run in these tests

    def make(self, problem: Problem, seed: int = 0) -> Searcher:
        if self.searcher_cls.incompatibility(problem.space):  # the space itself: the constructor must refuse
            with pytest.raises(IncompatibleError):
                self.searcher_cls(problem.space, direction=problem.direction, seed=seed, **self.options)
            pytest.skip(f"{self.searcher_cls.name} refuses {problem.name}")
        if self.searcher_cls.incompatibility(problem.space, problem.capabilities):  # checked by the app
            pytest.skip(f"{self.searcher_cls.name} needs capabilities {problem.name} lacks")
        return self.searcher_cls(problem.space, direction=problem.direction, seed=seed, **self.options)

    @pytest.fixture(params=sorted(PROBLEMS))
    def problem(self, request: pytest.FixtureRequest) -> Problem:
        return PROBLEMS[request.param]()

    @staticmethod
    def _measure(problem: Problem, candidate: Candidate) -> Result:
        reason = problem.space.check(candidate.config)
        m = Measurement.infeasible(reason) if reason else _safe_evaluate(problem, candidate.config)
        return Result(candidate, m)

    def test_ask_tell_any_order_several_in_flight(self, problem: Problem) -> None:
        searcher = self.make(problem)
        rng = np.random.default_rng(0)
        told = 0
        for _ in range(self.budget):
            batch = searcher.ask(4)
            assert len(batch) <= 4
            if not batch and not searcher.pending:
                break
            pending = list(searcher.pending.values())
            if not pending:
                continue
            rng.shuffle(pending)
            for candidate in pending[: max(1, len(pending) // 2)]:  # keep some in flight
                searcher.tell(self._measure(problem, candidate))
                told += 1
        for candidate in list(searcher.pending.values()):
            searcher.tell(self._measure(problem, candidate))
            told += 1
        assert not searcher.pending
        assert len(searcher.history) == told > 0

    def test_no_duplicate_proposals_when_unique(self, problem: Problem) -> None:
        searcher = self.make(problem)
        if not searcher.unique:
            pytest.skip(f"{searcher.name} does not promise unique proposals")
        outcome = optimize(problem, searcher, Budget(evaluations=self.budget))
        proposals = [r.candidate.proposal for r in outcome.results]
        assert len(proposals) == len(set(proposals))

    def test_same_seed_same_trajectory(self, problem: Problem) -> None:
        runs = []
        for _ in range(2):
            fresh = type(problem)() if not isinstance(problem, SyntheticDag) else SyntheticDag(arity=problem.graph.arity)
            outcome = optimize(fresh, self.make(fresh, seed=7), Budget(evaluations=self.budget // 2))
            runs.append([r.config for r in outcome.results])
        assert runs[0] == runs[1]

    def test_unknown_or_twice_told_ids_refused(self, problem: Problem) -> None:
        searcher = self.make(problem)
        batch = searcher.ask(1)
        assert batch, "a fresh searcher must propose something"
        stranger = Candidate(10**9, batch[0].config, batch[0].proposal)
        with pytest.raises(UnknownCandidateError):
            searcher.tell(self._measure(problem, stranger))
        result = self._measure(problem, batch[0])
        searcher.tell(result)
        with pytest.raises(DuplicateResultError):
            searcher.tell(result)

    def test_finishes_on_exhausted_space(self, problem: Problem) -> None:
        if problem.name not in {PROBLEMS[n]().name for n in TINY} or problem.space.size() > 12:
            pytest.skip("only tiny spaces are exhausted")
        searcher = self.make(problem)
        outcome = optimize(problem, searcher, Budget(evaluations=200))
        assert outcome.reason in (StopReason.EXHAUSTED, StopReason.EVALUATIONS)
        if searcher.unique:
            assert len(outcome.results) <= problem.space.size()
        assert outcome.best is not None

    def test_replay_restores_state(self, problem: Problem) -> None:
        first = self.make(problem, seed=3)
        outcome = optimize(problem, first, Budget(evaluations=10))
        second = self.make(problem, seed=3)
        for result in outcome.results:
            second.replay(result)
        assert second.best is not None and first.best is not None
        assert second.best.objective == first.best.objective
        if second.unique and not second.done:
            for candidate in second.ask(3):
                assert candidate.proposal not in {r.candidate.proposal for r in outcome.results}
                assert candidate.id > max(r.id for r in outcome.results)


def _safe_evaluate(problem: Problem, config: Config) -> Measurement:
    from searchlab.core.problem import DeviceInfo
    from searchlab.run.execution import WorkerRuntime

    runtime = WorkerRuntime(problem, DeviceInfo())
    return runtime.evaluate(config)[0]
