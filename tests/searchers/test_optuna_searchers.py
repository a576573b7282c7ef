"""Optuna samplers behind ask/tell: contract, encodings, failures as constraints, duplicates."""

from __future__ import annotations

import math
from typing import ClassVar

import pytest

from searchlab.adapters.synthetic import SyntheticDag, SyntheticKnobs, SyntheticThresholds
from searchlab.api import optimize
from searchlab.core.problem import Problem
from searchlab.core.records import Candidate, Config, FailureMode, Measurement, Result, Status
from searchlab.core.spaces import CategoricalKnob, IntKnob, KnobSpace, OrdinalKnob
from searchlab.errors import IncompatibleError
from searchlab.run.loop import Budget
from searchlab.searchers import (
    OptunaCmaesSearcher,
    OptunaGpSearcher,
    OptunaQmcSearcher,
    OptunaRandomSearcher,
    OptunaTpeSearcher,
)
from searchlab.searchers._optuna import base as _optuna_base
from searchlab.searchers._optuna import samplers as _optuna
from tests.contract import PROBLEMS, TINY, SearcherContract


class TestTpeContract(SearcherContract):
    searcher_cls = OptunaTpeSearcher


class TestCmaesContract(SearcherContract):
    searcher_cls = OptunaCmaesSearcher


class TestQmcContract(SearcherContract):
    searcher_cls = OptunaQmcSearcher


class TestRandomContract(SearcherContract):
    searcher_cls = OptunaRandomSearcher


class TestGpContract(SearcherContract):
    """GP asks cost seconds each on a shared 2-core machine: tiny problems, few GP asks."""

    searcher_cls = OptunaGpSearcher
    options: ClassVar[dict[str, object]] = {"n_startup_trials": 3, "max_retries": 1}
    budget = 6

    @pytest.fixture(params=[n for n in TINY if n != "tiny_dag"])
    def problem(self, request: pytest.FixtureRequest) -> Problem:
        return PROBLEMS[request.param]()


# -- encodings ----------------------------------------------------------------------------
def test_knob_encoding_int_ordinal_categorical() -> None:
    space = KnobSpace((IntKnob("n", 1, 64, log=True), IntKnob("s", 0, 12, step=4), IntKnob("ls", 2, 10, step=2, log=True),
                       OrdinalKnob("tile", (1, 2, 4, 8)), CategoricalKnob("v", ("a", ("b", 2)))))
    searcher = OptunaTpeSearcher(space, seed=0)
    candidate = searcher.ask(1)[0]
    trial = searcher._open[candidate.proposal]
    dists = trial.distributions
    assert dists["n"].log and (dists["n"].low, dists["n"].high) == (1, 64)  # IntKnob: the integer itself
    assert dists["s"].step == 4
    assert (dists["ls"].low, dists["ls"].high, dists["ls"].log) == (0, 4, False)  # log + step: an index
    assert (dists["tile"].low, dists["tile"].high) == (0, 3)  # ordinal: an index, order kept
    assert dists["v"].choices == (0, 1)  # categorical over indices (tuples are not Optuna choices)
    assert candidate.config["tile"] == space.knob("tile").values[trial.params["tile"]]


def test_thresholds_are_plateau_indices() -> None:
    problem = SyntheticThresholds()
    searcher = OptunaTpeSearcher(problem.space, seed=0)
    candidate = searcher.ask(1)[0]
    trial = searcher._open[candidate.proposal]
    for name in problem.space.names:
        assert trial.distributions[name].high == len(problem.space.plateau_values(name)) - 1
        assert candidate.config[name] == problem.space.plateau_values(name)[trial.params[name]]


def test_dag_is_define_by_run_over_productive_arcs() -> None:
    problem = SyntheticDag(arity=(2, 3, 1))
    graph = problem.space
    searcher = OptunaTpeSearcher(graph, seed=0)
    candidate = searcher.ask(1)[0]
    trial = searcher._open[candidate.proposal]
    node: object = graph.root
    for label in candidate.meta["path"]:
        arcs = [lbl for lbl, child in graph.children(node) if graph.count_sinks(child)]
        if len(arcs) > 1:  # a decision: a categorical named after the node's key
            assert trial.params[graph.key(node)] == label
            assert set(trial.distributions[graph.key(node)].choices) == set(arcs)
        node = graph.follow([label], node)
    assert graph.is_word(node) and candidate.config == graph.word_config(node)


@pytest.mark.parametrize("cls", [OptunaCmaesSearcher, OptunaQmcSearcher, OptunaGpSearcher])
def test_samplers_without_conditional_models_refuse_dags(cls: type) -> None:
    with pytest.raises(IncompatibleError, match="IntersectionSearchSpace"):
        cls(SyntheticDag().space)


def test_gp_refuses_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_optuna, "find_spec", lambda name: None if name == "torch" else object())
    with pytest.raises(IncompatibleError, match="'torch'"):
        OptunaGpSearcher(SyntheticKnobs().space)


# -- failures, duplicates, replay ------------------------------------------------------------
class HalfBroken(SyntheticKnobs):
    """Every configuration with block_x >= 8 fails to compile: a sampler must learn to avoid them."""

    def evaluate(self, config: Config) -> Measurement:
        if int(config["block_x"]) >= 8:  # type: ignore[arg-type]
            return Measurement.failed(FailureMode.COMPILE, "too big")
        return Measurement.ok(1.0 + int(config["tile"]) + int(config["unroll"]))  # type: ignore[arg-type]


def test_failures_are_constraint_violations_and_tpe_learns_from_them() -> None:
    problem = HalfBroken()
    searcher = OptunaTpeSearcher(problem.space, seed=0)
    outcome = optimize(problem, searcher, Budget(evaluations=80))
    trials = {t.number: t for t in searcher.study.trials}
    failed = [t for t in trials.values() if t.constraints.get(_optuna_base.CONSTRAINT, 0) > 0]
    assert failed and all(t.value is not None for t in failed)  # told with the worst loss, as violations
    tpe_late = sum(r.status is Status.FAILED for r in outcome.results[40:])
    rand = optimize(problem, OptunaRandomSearcher(problem.space, seed=0), Budget(evaluations=80))
    random_late = sum(r.status is Status.FAILED for r in rand.results[40:])
    assert tpe_late < 0.5 * random_late, (tpe_late, random_late)


def test_known_infeasible_configurations_are_never_proposed() -> None:
    problem = SyntheticKnobs()
    searcher = OptunaQmcSearcher(problem.space, seed=0)
    outcome = optimize(problem, searcher, Budget(evaluations=60))
    assert not any(r.status is Status.INFEASIBLE for r in outcome.results)
    violations = [t for t in searcher.study.trials if t.constraints.get(_optuna_base.CONSTRAINT, 0) > 0]
    assert any(problem.space.check(Config(_decode(problem.space, t.params))) for t in violations)


def _decode(space: KnobSpace, params: dict[str, int]) -> dict[str, object]:
    return {k.name: k.values[params[k.name]] for k in space.knobs}


def test_duplicates_are_told_known_losses_not_proposed() -> None:
    problem = SyntheticThresholds()
    searcher = OptunaCmaesSearcher(problem.space, seed=1)
    outcome = optimize(problem, searcher, Budget(evaluations=60))
    proposals = [r.candidate.proposal for r in outcome.results]
    assert len(set(proposals)) == len(proposals)
    assert searcher.duplicates > 0  # CMA-ES on plateau indices repeats itself; the repeats were told
    assert len(searcher.study.trials) >= len(proposals) + searcher.duplicates - len(searcher._twins)


def test_twins_in_flight_are_told_when_the_first_result_arrives() -> None:
    space = KnobSpace((OrdinalKnob("a", (1, 2)),))
    searcher = OptunaRandomSearcher(space, seed=0)
    first, second = searcher.ask(2)
    assert {first.config["a"], second.config["a"]} == {1, 2}
    assert searcher.ask(1) == [] and searcher.done  # both members in flight: exhausted, nothing repeated
    for candidate in (first, second):
        searcher.tell(Result(candidate, Measurement.ok(float(candidate.config["a"]))))  # type: ignore[arg-type]
    assert all(t.state.name == "COMPLETE" for t in searcher.study.trials)


def test_replay_builds_trials_with_paths_and_failures() -> None:
    problem = SyntheticDag(arity=(3, 2, 2))
    first = OptunaTpeSearcher(problem.space, seed=0, direction=problem.direction)
    outcome = optimize(problem, first, Budget(evaluations=12))
    broken = Result(Candidate(99, outcome.results[0].config, Config()), Measurement.failed(FailureMode.RUNTIME))
    second = OptunaTpeSearcher(problem.space, seed=5, direction=problem.direction)
    for result in [broken, *outcome.results[1:]]:
        second.replay(result)
    complete = [t for t in second.study.trials if t.state.name == "COMPLETE"]
    assert len(complete) == len(outcome.results)
    assert first.best is not None and first.best.objective is not None
    assert math.isclose(-second.study.best_value, first.best.objective)
    assert all(t.value is not None and math.isfinite(t.value) for t in complete)


def test_gp_acquisition_optimiser_options_reach_the_sampler() -> None:
    """Optuna 5.0 keeps these private; a later Optuna without them keeps its own (docs/threads.md)."""
    from searchlab.errors import ConfigError

    space = SyntheticKnobs().space
    sampler = OptunaGpSearcher(space, seed=0, acqf_samples=300, local_searches=3).study.sampler
    assert (sampler._n_preliminary_samples, sampler._n_local_search) == (300, 3)
    default = OptunaGpSearcher(space, seed=0).study.sampler
    assert (default._n_preliminary_samples, default._n_local_search) == (_optuna.ACQF_SAMPLES, _optuna.LOCAL_SEARCHES)
    for bad in ({"acqf_samples": 0}, {"local_searches": 1}, {"local_searches": True}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            OptunaGpSearcher(space, seed=0, **bad)  # type: ignore[arg-type]


def _constrained() -> KnobSpace:
    """6 x 6 grid, the upper-right triangle known-infeasible: a GP draws there often."""
    return KnobSpace((OrdinalKnob("x", (1, 2, 4, 8, 16, 32)), OrdinalKnob("y", (1, 2, 4, 8, 16, 32))),
                     constraints=("x * y <= 32",))


def test_grid_nearest_walks_through_infeasible_points_to_the_closest_accepted() -> None:
    import numpy as np

    from searchlab.searchers._support.neighbours import Grid

    space = _constrained()
    grid = Grid(space)
    start = Config({"x": 32, "y": 32})  # infeasible; the nearest feasible (i + j = 5) are 5 index steps away
    found = {grid.nearest(start, grid.feasible, np.random.default_rng(s)) for s in range(20)}
    assert found and all(c is not None and grid.feasible(c) for c in found)
    distance = {sum(abs(a - b) for a, b in zip(grid.encode(c), grid.encode(start))) for c in found if c is not None}
    assert distance == {5} and len(found) > 1  # only the closest, ties broken at random
    assert grid.nearest(start, lambda c: False, np.random.default_rng(0)) is None


def test_gp_repairs_a_settled_draw_instead_of_fitting_again() -> None:
    """One GP proposal per ask (issue 16): a repeated or known-infeasible draw is settled, then
    the nearest fresh valid configuration is proposed; with ``repair=false`` the GP is asked again."""
    space = _constrained()
    counts = {}
    for repair in (True, False):
        searcher = OptunaGpSearcher(space, seed=0, n_startup_trials=3, repair=repair, max_retries=4)
        sampler, calls = searcher.study.sampler, [0]
        original = sampler.sample_relative

        def counted(*args: object, _original: object = original, _calls: list[int] = calls) -> object:
            _calls[0] += 1
            return _original(*args)  # type: ignore[operator]

        sampler.sample_relative = counted
        proposals = []
        for _ in range(14):
            (candidate,) = searcher.ask(1)
            proposals.append(candidate.config)
            x, y = int(candidate.config["x"]), int(candidate.config["y"])  # type: ignore[call-overload]
            searcher.tell(Result(candidate, Measurement.ok(float(abs(x - 4) + abs(y - 8)))))
        assert len(set(proposals)) == len(proposals) and all(space.check(c) is None for c in proposals)
        counts[repair] = (calls[0], searcher.repairs, searcher.duplicates)
    (gp_calls, repairs, _), (gp_calls_off, repairs_off, _) = counts[True], counts[False]
    assert repairs > 0 and gp_calls == 14, counts  # every ask one draw
    assert repairs_off == 0 and gp_calls_off > 14, counts  # asked again on every settled draw


def test_univariate_tpe_asks_its_sampler_at_most_twice_per_proposal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Univariate TPE redraws measured configurations; after univariate_retries draws it proposes a random
    unseen one (issue 23: 16 asks per proposal made a 220-evaluation replay cost 2 minutes)."""
    from searchlab.errors import ConfigError

    space = SyntheticKnobs(seed=1).space
    assert OptunaTpeSearcher(space, seed=0, multivariate=False).max_retries == 2
    assert OptunaTpeSearcher(space, seed=0, multivariate=False, univariate_retries=5, max_retries=3).max_retries == 3
    assert OptunaTpeSearcher(space, seed=0).max_retries == 16  # multivariate TPE keeps max_retries
    with pytest.raises(ConfigError, match="univariate_retries"):
        OptunaTpeSearcher(space, seed=0, univariate_retries=0)
    problem = SyntheticKnobs(seed=1)
    searcher = OptunaTpeSearcher(problem.space, seed=0, multivariate=False, n_startup_trials=3)
    asks = 0
    ask = searcher.study.ask

    def counted(*args: object, **kwargs: object) -> object:
        nonlocal asks
        asks += 1
        return ask(*args, **kwargs)

    monkeypatch.setattr(searcher.study, "ask", counted)
    outcome = optimize(problem, searcher, Budget(evaluations=60))
    configs = [r.config for r in outcome.results]
    assert len(configs) == 60 and len(set(configs)) == 60
    assert asks <= 3 * 60  # at most 2 sampler draws and one enqueued fallback trial per proposal
