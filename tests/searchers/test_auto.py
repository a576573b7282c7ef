"""searcher=auto: contract, delegation per space kind, and that its model is actually used."""

from __future__ import annotations

import numpy as np
import pytest

from searchlab.adapters.synthetic import SyntheticDag, SyntheticThresholds
from searchlab.api import optimize
from searchlab.core.problem import Problem
from searchlab.core.records import Config, FailureMode, Measurement
from searchlab.core.spaces import IntKnob, KnobSpace
from searchlab.errors import ConfigError
from searchlab.run.loop import Budget
from searchlab.searchers import AutoSearcher, RandomSearcher
from searchlab.searchers._auto.knobs import _two_adic
from searchlab.searchers._support.gp import GaussianProcess
from tests.contract import SearcherContract


class TestAutoContract(SearcherContract):
    searcher_cls = AutoSearcher


def test_gp_interpolates_and_is_uncertain_away_from_data() -> None:
    rng = np.random.default_rng(0)
    x = rng.random((25, 2))
    y = np.sin(4 * x[:, 0]) + x[:, 1] ** 2
    gp = GaussianProcess().fit(x, (y - y.mean()) / y.std())
    mean, std = gp.predict(x)
    assert np.allclose(mean, (y - y.mean()) / y.std(), atol=0.1)
    _, far = gp.predict(np.array([[5.0, 5.0]]))
    assert far[0] > 5 * std.max()


def test_delegates_by_space_kind() -> None:
    assert AutoSearcher(SyntheticThresholds().space, seed=0).delegate == "binary"
    assert AutoSearcher(SyntheticDag().space, seed=0).delegate == "dp_tag"  # issue 38: DP when it fits, else tag_scaled
    assert AutoSearcher(SyntheticDag().space, seed=0, dag="tag").delegate == "tag"
    with pytest.raises(ConfigError, match="searcher.dag"):
        AutoSearcher(SyntheticDag().space, seed=0, dag="auto")


class Bowl(Problem):
    """A smooth 3-knob landscape (9261 configurations) where a working surrogate must home in."""

    name = "bowl"

    def __init__(self) -> None:
        super().__init__()
        self._space = KnobSpace((IntKnob("a", 0, 20), IntKnob("b", 0, 20), IntKnob("c", 0, 20)))

    @property
    def space(self) -> KnobSpace:
        return self._space

    def evaluate(self, config: Config) -> Measurement:
        a, b, c = (int(config[k]) for k in "abc")  # type: ignore[call-overload]
        return Measurement.ok(1.0 + (a - 13) ** 2 + 0.5 * (b - 4) ** 2 + 2.0 * (c - 17) ** 2)


def test_model_homes_in_where_random_search_cannot() -> None:
    """30 evaluations of 9261: the GP x EI search finds the bowl's bottom; random search does not
    (its expected best after 30 draws is far above 1). Fails if the model steps are not used."""
    problem = Bowl()
    for seed in range(3):
        out = optimize(problem, AutoSearcher(problem.space, seed=seed), Budget(evaluations=30))
        assert out.best is not None and out.best.measurement.objective == 1.0
        rand = optimize(problem, RandomSearcher(problem.space, seed=seed), Budget(evaluations=30))
        assert rand.best is not None and rand.best.measurement.objective is not None
        assert rand.best.measurement.objective > 1.0


def test_alignment_feature_marks_power_of_two_multiples() -> None:
    """block_size_x = 16, 32, ..., 256 (the shared tables): 256 > 128 > 64 = 192 > 32 = 96 > 48 > others."""
    twos = _two_adic(list(range(16, 257, 16)))
    assert twos is not None
    by_value = dict(zip(range(16, 257, 16), twos))
    assert by_value[256] == 1.0 and by_value[16] == by_value[48] == 0.0
    assert by_value[128] > by_value[64] == by_value[192] > by_value[32] == by_value[96] > by_value[48]
    assert _two_adic([1, 2, 4, 8, 16]) is None  # all powers of two: the index already says it
    assert _two_adic(["a", "b", "c"]) is None and _two_adic([3, 5]) is None


def test_length_scale_prior_gradient_and_effect() -> None:
    """The MAP objective's analytic gradient matches finite differences, and on pure noise the prior
    keeps the length scales off the lower bound that maximum likelihood runs to (to interpolate)."""
    rng = np.random.default_rng(3)
    x, y = rng.random((30, 4)), rng.standard_normal(30)
    gp = GaussianProcess(prior=(0.0, 1.0))
    theta = np.array([-1.0, -0.5, 0.2, 0.7, 0.1, -3.0])
    _, grad = gp._neg_log_likelihood(theta, x, y)
    eps = 1e-6
    numeric = [(gp._neg_log_likelihood(theta + eps * e, x, y)[0] - gp._neg_log_likelihood(theta - eps * e, x, y)[0])
               / (2 * eps) for e in np.eye(len(theta))]
    assert np.allclose(grad, numeric, rtol=1e-4, atol=1e-5)
    ml = GaussianProcess().fit(x, y)
    gp.fit(x, y)
    assert ml.lengths is not None and gp.lengths is not None
    assert np.median(np.log(gp.lengths)) > np.median(np.log(ml.lengths)) + 0.5


class Cliff(Problem):
    """Faster towards a resource limit that fails past it (a + b > 16: a hidden constraint), like
    work-group or register limits on real kernels: the best configurations sit at the cliff."""

    name = "cliff"

    def __init__(self) -> None:
        super().__init__()
        self._space = KnobSpace((IntKnob("a", 0, 20), IntKnob("b", 0, 20)))

    @property
    def space(self) -> KnobSpace:
        return self._space

    def evaluate(self, config: Config) -> Measurement:
        a, b = int(config["a"]), int(config["b"])  # type: ignore[call-overload]
        if a + b > 16:
            return Measurement.failed(FailureMode.RESOURCES, "too many registers")
        return Measurement.ok(100.0 / (1 + a + b) + 0.1 * abs(a - b))


def test_model_steps_skip_likely_failures() -> None:
    """``min_feasibility`` (default 0.5) keeps model steps off configurations predicted to fail;
    with 0 (EI x p only) most model steps fail at the cliff (docs/baselines.md, held-out kernels)."""
    problem = Cliff()
    failures = {}
    for threshold in (0.5, 0.0):
        failures[threshold] = [
            sum(not r.ok for r in optimize(problem, AutoSearcher(problem.space, seed=seed, min_feasibility=threshold),
                                           Budget(evaluations=40)).results[10:])  # the 30 model steps
            for seed in range(3)]
    assert max(failures[0.5]) < min(failures[0.0]), failures
    for bad in (1.0, -0.1, True):
        with pytest.raises(ConfigError, match="searcher.min_feasibility"):
            AutoSearcher(problem.space, seed=0, min_feasibility=bad)  # type: ignore[arg-type]


def test_leave_one_table_out_choice_never_reads_the_held_out_table() -> None:
    """Issues 22 (6) and 53: a fold's setting is chosen on the other tables only (bench/auto_loto.py)."""
    from bench.auto_loto import choose

    scores = {"a": {"t1": 0.99, "t2": 0.80, "t3": 0.80, "t4": 0.80},  # best only where it is held out
              "b": {"t1": 0.50, "t2": 0.85, "t3": 0.85, "t4": 0.85},
              "c": {"t1": 0.95, "t2": 0.84, "t3": 0.70, "t4": 0.84}}
    assert choose(scores, ["t2", "t3", "t4"])[0] == "b"
    assert choose(scores, ["t1", "t2", "t4"])[0] == "c"  # on t1, t2, t4: c 0.877 > a 0.863 > b 0.733
    chosen, train = choose(scores, ["t1", "t3", "t4"])
    assert train["b"] == pytest.approx((0.50 + 0.85 + 0.85) / 3) and chosen == max(train, key=lambda s: train[s])
    tied = {"ref": {"t1": 0.9, "t2": 0.8}, "other": {"t1": 0.9, "t2": 0.8}}
    assert choose(tied, ["t1", "t2"])[0] == "ref"  # a tie keeps the reference (listed first)


def test_the_kept_valid_pool_is_per_space_object_not_per_equal_space() -> None:
    """Issue 45 ("auto must stay quick"): ``valid_pool`` keeps a space's full enumeration across runs on
    the same space object. Two recorded tables over the same knobs compare equal (``members`` is not
    compared), so the cache must not hand one table's pool to the other, nor let a run's appended row leak."""
    from searchlab.integrations.kernel_tuner import knob_space
    from searchlab.searchers._auto.knobs import valid_pool

    params = {"a": [1, 2, 4], "b": [8, 16]}
    first = knob_space(params, [(1, 8), (2, 16)])
    second = knob_space(params, [(4, 8)])
    assert first == second and first is not second  # equal by knobs, different tables
    assert knob_space(params, [(1, 8), (2, 16)]) is first  # the harness's next repeat: the same object
    rng = np.random.default_rng(0)
    pool = valid_pool(first, 100, rng)
    assert sorted(c["a"] for c in pool) == [1, 2]
    assert [c["a"] for c in valid_pool(second, 100, rng)] == [4]
    pool.append(Config({"a": 4, "b": 16}))  # what a model does with a replayed configuration
    assert sorted(c["a"] for c in valid_pool(first, 100, rng)) == [1, 2]
