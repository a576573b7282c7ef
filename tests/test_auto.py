"""searcher=auto: contract, delegation per space kind, and that its model is actually used."""

from __future__ import annotations

import numpy as np
import pytest

from searchlab.adapters.synthetic import SyntheticDag, SyntheticThresholds
from searchlab.api import optimize
from searchlab.errors import ConfigError
from searchlab.loop import Budget
from searchlab.problem import Problem
from searchlab.records import Config, Measurement
from searchlab.searchers import AutoSearcher, RandomSearcher
from searchlab.searchers._gp import GaussianProcess
from searchlab.spaces import IntKnob, KnobSpace
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
    assert AutoSearcher(SyntheticDag().space, seed=0).delegate == "tag"
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
