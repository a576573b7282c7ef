"""The probabilistic tuning-knob search of paper 001: regression (§5), derived features (§6),
cutoffs (§4.1), scores (§4), the searchers' contract and the sensor model's route."""

from __future__ import annotations

import math

import numpy as np
import pytest

from searchlab.adapters.synthetic import SyntheticDag, SyntheticKnobs
from searchlab.api import optimize
from searchlab.core.records import Config, Direction, FailureMode, Measurement
from searchlab.core.sensors import Normal, SensedKnobSpace, SensorModel, model_from_spec, prob_less
from searchlab.core.spaces import IntKnob, KnobSpace
from searchlab.errors import ConfigError, IncompatibleError
from searchlab.run.loop import Budget
from searchlab.searchers import ProbabilisticSearcher, ProbabilisticTrivialSearcher
from searchlab.searchers._probabilistic.model import QUALITY, Evidence, Options, cutoff_region
from searchlab.searchers._probabilistic.regression import Encoder, Geometry, _gabriel_mask, regress
from tests.contract import SearcherContract

EPS = 1e-7


# -- §5 regression, by hand ---------------------------------------------------------------------
def test_gabriel_regression_one_dimension_by_hand() -> None:
    # Tested 0 -> 0 and 1 -> 1; candidate at 2. Gabriel: 0 is hidden behind 1, so the only
    # neighbour is 1: interp = 1; d = 1 - eps has neighbours 1 and 0, interp(d) = 1 - eps,
    # derivative 1, extrap = 2. Weights {(1, 1), (1, 2)}: mean 1.5, variance 0.25.
    mean, std = regress(np.array([[0.0], [1.0]]), np.array([0.0, 1.0]), np.array([[2.0]]), k=2,
                        method="gabriel", eps=EPS)
    assert mean[0] == pytest.approx(1.5, rel=1e-5)
    assert std[0] == pytest.approx(0.5, rel=1e-5)


def test_knn_regression_one_dimension_by_hand() -> None:
    # k = 2: both tested points are neighbours. interp(2) = (0/2 + 1/1) / (1/2 + 1) = 2/3.
    # From 1 (r = 1, w = 1): extrap 2. From 0 (r = 2, w = 1/4): d = -eps, interp(d) = eps/(1+2eps),
    # derivative -1, extrap -2. The average weighs sum(w) = 1.25.
    mean, std = regress(np.array([[0.0], [1.0]]), np.array([0.0, 1.0]), np.array([[2.0]]), k=2,
                        method="knn", eps=EPS)
    values, weights = np.array([2 / 3, 2.0, -2.0]), np.array([1.25, 1.0, 0.25])
    want_mean = (weights * values).sum() / weights.sum()
    want_var = (weights * (values - want_mean) ** 2).sum() / weights.sum()
    assert mean[0] == pytest.approx(want_mean, rel=1e-5)
    assert std[0] == pytest.approx(math.sqrt(want_var), rel=1e-5)


def test_regression_of_a_plane_by_hand_and_exact_on_constant_values() -> None:
    x = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    flat = Geometry(x, np.array([[0.5, 0.5], [2.0, 2.0]]), k=4, method="gabriel", eps=EPS).predict(np.full(4, 3.0))
    assert flat[0] == pytest.approx([3.0, 3.0]) and flat[1] == pytest.approx([0.0, 0.0], abs=1e-6)
    # f = a + b; candidate (2, 2): its only Gabriel neighbour is (1, 1) (r = 2, w = 1/4), interp 2.
    # Behind (1, 1) the other three points are neighbours of d; the slope is the mean of the
    # slopes to them (§5.2, averaged): ((2-1)/1 + (2-1)/1 + (2-0)/2) / 3 = 1 — the plane's own
    # slope per unit of Manhattan distance — so extrap = 2 + 2 * 1 = 4, the true value (the
    # literal formula summed them: 3, extrap 8). Values {(1/4, 2), (1/4, 4)}: mean 3, std 1.
    mean, std = regress(x, x.sum(axis=1), np.array([[2.0, 2.0]]), k=4, method="gabriel", eps=EPS)
    assert mean[0] == pytest.approx(3.0, rel=1e-5) and std[0] == pytest.approx(1.0, rel=1e-5)


def test_gabriel_mask_matches_brute_force_and_the_ellipse_keeps_more_neighbours() -> None:
    rng = np.random.default_rng(0)
    x, q = rng.random((25, 3)), rng.random((40, 3))
    mask = _gabriel_mask(q, x, 1.0)
    for i in range(len(q)):
        for t in range(len(x)):
            blocked = any(u != t and np.dot(x[u] - q[i], x[u] - x[t]) < -1e-12 for u in range(len(x)))
            assert mask[i, t] == (not blocked)
    thin = _gabriel_mask(q, x, 0.5)
    assert (thin | ~mask).all() and thin.sum() > mask.sum()


def test_encoder_scales_each_knob_to_unit_range() -> None:
    space = KnobSpace((IntKnob("a", 1, 5), IntKnob("b", 1, 1024, log=True)))
    enc = Encoder(space)
    assert enc.encode([Config(a=1, b=1), Config(a=5, b=32)]).tolist() == [[0.0, 0.0], [1.0, 0.5]]


# -- §6 derived features, §4.1 cutoffs ---------------------------------------------------------------
def test_normal_arithmetic_follows_section_6() -> None:
    a, b = Normal(10.0, 1.0), Normal(4.0, 2.0)
    assert (a + b) == Normal(14.0, 3.0)  # standard deviations add (§6)
    assert (a - b) == Normal(6.0, 3.0)
    prod = a * b
    assert prod.mean == 40.0 and prod.std == pytest.approx(math.sqrt(100 * 4 + 16 * 1 + 4))
    ratio = a / b
    assert ratio.mean == 2.5 and ratio.std == pytest.approx(math.sqrt((1 / 4) ** 2 + (10 * 2 / 16) ** 2))
    assert math.exp(prob_less(Normal(0.0, 1.0), Normal(0.0, 0.0))) == pytest.approx(0.5)


def test_cutoff_region_by_hand() -> None:
    # overlap: from the lowest failure (10) to the lowest failure above the best success (20)
    c = cutoff_region([10.0, 14.0, 20.0], [8.0, 12.0, 15.0])
    region = [10.0, 14.0, 20.0, 12.0, 15.0]
    assert c is not None and c.mean == pytest.approx(np.mean(region)) and c.std == pytest.approx(np.std(region))
    single = cutoff_region([20.0, 25.0], [5.0, 8.0])  # no overlap: one value
    assert single == Normal(20.0, 0.0)
    assert cutoff_region([], [1.0]) is None


def test_sensor_model_parses_and_refuses_bad_formulas() -> None:
    m = model_from_spec({"sensors": ["t", "mem"], "features": {"tm": "t * mem"}, "objective": "tm",
                         "constraints": [{"name": "mem", "formula": "mem <= limit", "modes": ["resources"]},
                                         {"name": "ct", "proxy": "mem", "modes": ["compile"]}]},
                        knobs=["a"], constants={"limit": 5.0})
    assert m.raw_names(m.objective, ["a"]) == {"t", "mem"}
    with pytest.raises(ConfigError, match="one comparison"):
        model_from_spec({"constraints": [{"name": "x", "formula": "a + 1"}]}, knobs=["a"])
    with pytest.raises(ConfigError, match="not allowed"):  # parsed safely: no arbitrary code
        model_from_spec({"sensors": ["t"], "objective": "__import__('os')"}, knobs=["a"])
    with pytest.raises(ConfigError, match="not a sensor"):
        model_from_spec({"sensors": ["t"], "objective": "t + typo"}, knobs=["a"])
    with pytest.raises(ConfigError, match="unknown failure modes"):
        model_from_spec({"constraints": [{"name": "x", "proxy": "a", "modes": ["nope"]}]}, knobs=["a"])


def test_failures_are_attributed_by_name_then_mode_and_order_proves_passes() -> None:
    m = model_from_spec({"sensors": ["mem", "size"], "constraints": [
        {"name": "local_mem", "formula": "mem <= 4", "modes": ["resources"]},
        {"name": "compile_time", "proxy": "size", "modes": ["compile"]}],
        "order": ["local_mem", "launch", "compile_time", "output"]})
    local, ct = m.constraints
    mem_fail = Measurement.failed(FailureMode.RESOURCES, "", extra={"violated": "local_mem"})
    out_fail = Measurement.failed(FailureMode.WRONG_OUTPUT, "", extra={"violated": "output"})
    launch_fail = Measurement.failed(FailureMode.LAUNCH, "", extra={"violated": "launch"})
    assert m.attributed(mem_fail) == (local,) and m.attributed(out_fail) == ()
    assert m.passed(ct, out_fail) is True and m.passed(ct, launch_fail) is None and m.passed(ct, mem_fail) is None
    assert m.passed(local, launch_fail) is True and m.passed(local, mem_fail) is False


# -- §4 scores ----------------------------------------------------------------------------------------
def _space(model: SensorModel | None = None) -> SensedKnobSpace:
    return SensedKnobSpace((IntKnob("a", 0, 20), IntKnob("b", 0, 20)), sensor_model=model)


def test_constraint_prediction_steers_away_from_failures_and_trivial_gives_them_the_lowest_quality() -> None:
    model = model_from_spec({"sensors": ["time", "mem"], "objective": "time",
                             "constraints": [{"name": "mem", "formula": "mem <= 10", "modes": ["resources"]}]},
                            knobs=["a", "b"])
    space = _space(model)
    enc = Encoder(space)
    ev = Evidence(model, enc, Direction.MINIMIZE, Options(neighbors="gabriel"))
    trivial = Evidence(model, enc, Direction.MINIMIZE, Options(neighbors="gabriel", trivial=True))
    for a in range(0, 21, 4):
        for b in (0, 10, 20):
            c, mem = Config(a=a, b=b), float(a)  # memory grows with a; time falls with a
            m = (Measurement.ok(100.0 - 4 * a, sensors={"time": 100.0 - 4 * a, "mem": mem}) if mem <= 10 else
                 Measurement.failed(FailureMode.RESOURCES, "", sensors={"mem": mem}, extra={"violated": "mem"}))
            for e in (ev, trivial):
                e.add(c, enc.encode([c])[0], m)
    cands = [Config(a=9, b=5), Config(a=15, b=5)]  # ok-ish vs well past the memory limit
    scores = ev.log_scores(cands, enc.encode(cands), None)
    assert scores[0] > scores[1]
    series = trivial.series(QUALITY)
    assert series is not None
    failed = [i for i, r in enumerate(trivial.rows) if r.measurement is not None and not r.measurement.objective]
    assert len(failed) == 9 and all(series[1][i] == -100.0 for i in failed)  # the lowest quality (time 100)


# -- the searchers -----------------------------------------------------------------------------------
def test_refuses_dag_spaces_and_bad_options() -> None:
    dag = SyntheticDag(arity=(2, 2))
    with pytest.raises(IncompatibleError, match="knobs"):
        ProbabilisticSearcher(dag.space)
    assert ProbabilisticTrivialSearcher.incompatibility(dag.space)
    space = SyntheticKnobs().space
    for bad in ({"neighbors": "ball"}, {"candidates": 0}, {"gabriel_alpha": 1.5}, {"combine": "max"}):
        with pytest.raises(ConfigError):
            ProbabilisticSearcher(space, **bad)  # type: ignore[arg-type]


def test_sensor_model_comes_with_the_space_else_objective_and_failures() -> None:
    model = model_from_spec({"sensors": ["x"], "objective": "x"})
    assert ProbabilisticSearcher(_space(model), seed=0).model is model
    assert ProbabilisticSearcher(_space(model), seed=0, use_sensors=False).model.objective.text == "objective"
    assert ProbabilisticSearcher(SyntheticKnobs().space, seed=0).model.constraints == ()


def test_beats_random_on_average_on_the_synthetic_knobs() -> None:
    problem = SyntheticKnobs()
    opt = problem.known_optimum
    ratios = {}
    for cls in (ProbabilisticSearcher, None):
        got = []
        for seed in range(3):
            from searchlab.searchers import RandomSearcher

            searcher = (cls or RandomSearcher)(problem.space, direction=problem.direction, seed=seed,
                                               **({"neighbors": "knn"} if cls else {}))
            best = optimize(problem, searcher, Budget(evaluations=30)).best
            got.append(opt / best.objective if best and best.objective else 0.0)
        ratios[cls] = float(np.mean(got))
    assert ratios[ProbabilisticSearcher] > ratios[None]


class TestProbabilisticContract(SearcherContract):
    searcher_cls = ProbabilisticSearcher
    options = {"candidates": 20, "neighbors": "knn"}
    budget = 24


class TestProbabilisticTrivialContract(SearcherContract):
    searcher_cls = ProbabilisticTrivialSearcher
    options = {"candidates": 20, "neighbors": "knn"}
    budget = 24
