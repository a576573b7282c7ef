"""searchlab searchers as a Ray Tune searcher (issue 36, item 3): a real ``tune.Tuner`` on a local Ray, and the
searcher's own protocol (suggest, complete, errors, concurrency, save/restore) driven by hand."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray.tune")

COST = {"a": 3.0, "b": 0.0, "c": 1.0, "d": 2.5, "e": 4.0}


def space() -> dict[str, Any]:
    from ray import tune

    return {"x": tune.randint(0, 64), "y": tune.choice(list(COST)), "label": "constant"}


def value(config: dict[str, Any]) -> float:
    return (config["x"] - 41) ** 2 / 50 + COST[config["y"]]


def test_protocol_by_hand(tmp_path: Path) -> None:
    from searchlab.integrations.tune import Searcher

    searcher = Searcher("auto", metric="loss", mode="min", seed=0, space=space(), max_concurrent=2)
    first, second = searcher.suggest("t0"), searcher.suggest("t1")
    assert first is not None and second is not None and first["label"] == "constant"
    assert searcher.suggest("t2") is None  # max_concurrent: two pending
    searcher.on_trial_complete("t0", {"loss": value(first)})
    searcher.on_trial_complete("t1", None, error=True)
    assert [r.measurement.status.value for r in searcher.driver.searcher.history] == ["ok", "failed"]
    third = searcher.suggest("t2")
    assert third is not None
    searcher.save(str(tmp_path / "ckpt"))
    restored = Searcher()
    restored.restore(str(tmp_path / "ckpt"))
    assert len(restored.driver.searcher.history) == 2  # rebuilt and replayed
    seen = {(c["x"], c["y"]) for c in (first, second)}
    fresh = restored.suggest("t3")
    assert fresh is not None and (fresh["x"], fresh["y"]) not in seen
    assert pickle.loads(pickle.dumps(restored)).get_state()["told"] == restored.get_state()["told"]


def test_a_tuner_run_tells_the_searcher_every_trial_and_its_failures(tmp_path: Path) -> None:
    """A real ``tune.Tuner``: every trial (those whose trainable raises too) reaches the searcher in order. That
    ``auto`` finds the optimum within 30 trials is the docs example's claim, run by test_docs_examples (one 30-trial
    Tuner run in the suite is enough: each trial costs Ray Tune about 3 s here)."""
    import ray
    from ray import tune

    from searchlab.integrations.tune import Searcher

    def trainable(config: dict[str, Any]) -> dict[str, float]:
        if config["x"] < 32:
            raise ValueError("does not build")
        return {"loss": value(config)}

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        searcher = Searcher("auto", seed=0, max_concurrent=1)  # sequential: the same trials every run
        tuner = tune.Tuner(trainable, param_space=space(),
                           tune_config=tune.TuneConfig(search_alg=searcher, metric="loss", mode="min", num_samples=8,
                                                       reuse_actors=True),
                           run_config=tune.RunConfig(storage_path=str(tmp_path), verbose=0))
        grid = tuner.fit()
    finally:
        ray.shutdown()
    assert len(grid) == 8
    errored = sorted(int(r.config["x"]) for r in grid if r.error is not None)
    assert errored and errored == sorted(x for r in grid if (x := int(r.config["x"])) < 32)
    best = grid.get_best_result(metric="loss", mode="min")
    assert best.metrics["loss"] == min(value(r.config) for r in grid if r.error is None)
