"""Every door closes its searcher (issue 52, item 2): a searcher that holds something (a Kernel Tuner strategy's
thread) must let it go when the host is done, through Kernel Tuner, Optuna and Ray Tune alike."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any, ClassVar

import pytest

from searchlab.searchers import RandomSearcher

SMALL = Path(__file__).resolve().parents[2] / "tests" / "data" / "kt_convolution_A100_small.json.gz"


class Closing(RandomSearcher):
    """Random search that counts how often each instance is closed."""

    name = "closing"
    closes: ClassVar[list[int]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.index = len(Closing.closes)
        Closing.closes.append(0)

    def close(self) -> None:
        Closing.closes[self.index] += 1


@pytest.fixture(autouse=True)
def _fresh() -> None:
    Closing.closes.clear()


def test_kernel_tuners_door_closes_its_searcher(tmp_path: Path) -> None:
    pytest.importorskip("kernel_tuner")
    from searchlab.integrations.kernel_tuner import Strategy
    from tests.integrations.test_kernel_tuner_strategy import simulate

    results, _ = simulate(SMALL, tmp_path, Strategy(Closing, seed=0), 12)
    assert len(results) == 12 and Closing.closes == [1]


def test_optunas_door_closes_on_replacement_close_and_garbage_collection() -> None:
    optuna = pytest.importorskip("optuna")
    from searchlab.integrations.optuna import Sampler

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = Sampler(Closing, seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: (t.suggest_int("x", 0, 30) - 9) ** 2 + t.suggest_int("y", 0, 3), n_trials=6)
    study.optimize(lambda t: t.suggest_int("x", 0, 30), n_trials=4)  # the intersection shrinks: a new space
    assert Closing.closes == [1, 0]  # the searcher of the first space, replaced
    sampler.close()
    assert Closing.closes == [1, 1]
    again = optuna.create_study(sampler=Sampler(Closing, seed=1))
    again.optimize(lambda t: t.suggest_int("x", 0, 30), n_trials=3)
    del again
    gc.collect()
    assert Closing.closes == [1, 1, 1]  # the sampler went away: so did its searcher's hold


def test_ray_tunes_door_closes_when_finished_restored_or_closed() -> None:
    pytest.importorskip("ray.tune")
    from ray import tune

    from searchlab.integrations.tune import Searcher

    searcher = Searcher(Closing, metric="m", mode="min", seed=0, space={"x": tune.randint(0, 4)})
    for i in range(5):  # four configurations, then FINISHED
        config = searcher.suggest(f"t{i}")
        if isinstance(config, dict):
            searcher.on_trial_complete(f"t{i}", {"m": config["x"]})
    assert config == Searcher.FINISHED and Closing.closes == [1]
    other = Searcher(Closing, metric="m", mode="min", seed=0, space={"x": tune.randint(0, 40)})
    other.suggest("a")
    other.set_state(other.get_state())  # a restored state replaces the searcher
    assert Closing.closes == [1, 1]
    other.suggest("b")
    other.close()
    assert Closing.closes == [1, 1, 1]
