"""searcher=auto: contract, delegation per space kind, and that its model is actually used."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from searchlab.adapters.knobs import KernelTunerCache
from searchlab.adapters.synthetic import SyntheticDag, SyntheticThresholds
from searchlab.api import optimize
from searchlab.errors import ConfigError
from searchlab.loop import Budget
from searchlab.searchers import AutoSearcher
from searchlab.searchers._gp import GaussianProcess
from tests.contract import SearcherContract

SMALL = Path(__file__).resolve().parents[1] / "tests" / "data" / "kt_convolution_A100_small.json.gz"


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


def test_model_beats_its_own_space_filling_start_on_a_table() -> None:
    """After the space-filling design, model steps must find better configurations than more
    space-filling would: compare against random search over the same valid set (5 seeds)."""
    problem = KernelTunerCache(path=str(SMALL))
    opt = problem.known_optimum
    assert opt is not None

    def frac(searcher_seed: int, initial: int) -> float:
        s = AutoSearcher(problem.space, direction=problem.direction, seed=searcher_seed, initial=initial)
        out = optimize(problem, s, Budget(evaluations=40))
        assert out.best is not None and out.best.measurement.objective is not None
        return opt / out.best.measurement.objective

    model = [frac(seed, 10) for seed in range(5)]
    filling = [frac(seed, 40) for seed in range(5)]  # never leaves the space-filling design
    assert np.mean(model) > np.mean(filling)
