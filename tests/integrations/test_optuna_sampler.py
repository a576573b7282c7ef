"""searchlab searchers as an Optuna sampler (issue 36, item 2), with real studies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

COST = {"a": 3.0, "b": 0.0, "c": 1.0, "d": 2.5, "e": 4.0}


def two_parameters(trial: Any) -> float:
    """64 x 5: an integer and a categorical; the optimum (0) only at x=41, y='b'."""
    x = trial.suggest_int("x", 0, 63)
    y = trial.suggest_categorical("y", list(COST))
    return (x - 41) ** 2 / 50 + COST[y]


def _searcher(sampler: Any) -> Any:
    assert sampler._relative is not None
    return sampler._relative.driver.searcher


def quiet_study(**kwargs: Any) -> Any:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna.create_study(**kwargs)


def test_auto_finds_the_optimum_of_a_64_by_5_space_within_40_trials() -> None:
    from searchlab.integrations.optuna import Sampler

    study = quiet_study(sampler=Sampler("auto", seed=0))
    study.optimize(two_parameters, n_trials=40)
    assert study.best_value == 0.0 and study.best_params == {"x": 41, "y": "b"}
    assert len(_searcher(study.sampler).history) == 39  # every trial after the first was heard by auto


def test_define_by_run_with_conditional_parameters() -> None:
    from searchlab.integrations.optuna import Sampler

    def objective(trial: Any) -> float:
        kind = trial.suggest_categorical("kind", ["linear", "log"])
        lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
        extra = trial.suggest_int("depth", 1, 8) if kind == "linear" else 0
        return abs(np.log10(lr) + 2) + extra * 0.1

    sampler = Sampler("random", seed=1, float_grid=33)
    study = quiet_study(sampler=sampler)
    study.optimize(objective, n_trials=15)
    assert sorted(sampler._relative.names) == ["kind", "lr"]  # the intersection: depth is conditional
    grid = set(np.geomspace(1e-4, 1.0, 33))
    lrs = [t.params["lr"] for t in study.trials[1:]]
    assert all(any(np.isclose(v, g) for g in grid) for v in lrs)  # a float on its fine grid (the relative space)
    assert len({(t.params["kind"], t.params["lr"]) for t in study.trials[1:]}) == 14  # never repeated


def test_failing_and_pruned_trials_reach_the_searcher_as_failures() -> None:
    from searchlab.integrations.optuna import Sampler

    def objective(trial: Any) -> float:
        value = two_parameters(trial)
        if trial.params["x"] < 20:
            raise ValueError("does not build")
        if trial.params["x"] > 55:
            raise optuna.TrialPruned()
        return value

    sampler = Sampler("random", seed=2)
    study = quiet_study(sampler=sampler)
    study.optimize(objective, n_trials=30, catch=(ValueError,))
    history = _searcher(sampler).history
    bad = [t for t in study.trials[:-1] if t.state.name in ("FAIL", "PRUNED")]  # the last is heard at the next sample
    failed = sorted(r.candidate.config["x"] for r in history if r.measurement.status.value == "failed")
    assert bad and failed == sorted(t.params["x"] for t in bad)
    assert {t.state.name for t in bad} == {"FAIL", "PRUNED"}


def test_constraints_func_reaches_the_searcher_as_a_constraint() -> None:
    from searchlab.integrations.optuna import Sampler

    sampler = Sampler("auto", seed=3, constraints_func=lambda t: [t.params["x"] - 30.0])
    study = quiet_study(sampler=sampler)
    study.optimize(two_parameters, n_trials=25)
    history = _searcher(sampler).history
    modes = {r.measurement.failure_mode.value for r in history if r.candidate.config["x"] > 30}
    assert modes == {"constraint"}
    assert all(r.measurement.status.value == "ok" for r in history if r.candidate.config["x"] <= 30)
    feasible = [t for t in study.trials if t.params["x"] <= 30]
    assert feasible and study.trials[0].constraints is not None


def test_resumed_study_with_sqlite_storage_replays_what_it_did(tmp_path: Path) -> None:
    from searchlab.integrations.optuna import Sampler

    storage = f"sqlite:///{tmp_path / 'study.db'}"
    first = quiet_study(sampler=Sampler("auto", seed=4), storage=storage, study_name="s")
    first.optimize(two_parameters, n_trials=8)
    sampler = Sampler("auto", seed=4)
    again = optuna.load_study(study_name="s", storage=storage, sampler=sampler)
    again.optimize(two_parameters, n_trials=8)
    assert len(again.trials) == 16
    replayed = _searcher(sampler).history
    assert len(replayed) == 15  # the first process's 8 trials replayed, then 7 of its own heard
    configs = [(t.params["x"], t.params["y"]) for t in again.trials]
    assert len(set(configs[1:])) == 15  # the resumed searcher did not propose what the first process measured


def test_reseed_rng_and_library_manners() -> None:
    from searchlab.integrations.optuna import Sampler

    optuna.logging.set_verbosity(optuna.logging.INFO)
    sampler = Sampler("optuna_tpe", seed=5)
    study = optuna.create_study(sampler=sampler)
    optuna.logging.set_verbosity(optuna.logging.INFO)
    study.optimize(two_parameters, n_trials=3)
    assert optuna.logging.get_verbosity() == optuna.logging.INFO  # building a searcher left Optuna's level alone
    seed, searcher = sampler.seed, _searcher(sampler)
    sampler.reseed_rng()
    assert sampler.seed == seed and _searcher(sampler) is searcher  # kept, pending trials and all (issue 47, item 2)
    study.optimize(two_parameters, n_trials=2)
    assert len(_searcher(sampler).history) == 4 and _searcher(sampler) is searcher
    optuna.logging.set_verbosity(optuna.logging.WARNING)


def test_multi_objective_studies_are_refused_in_one_line() -> None:
    from searchlab.errors import ConfigError
    from searchlab.integrations.optuna import Sampler

    study = quiet_study(sampler=Sampler("auto"), directions=["minimize", "minimize"])
    with pytest.raises(ConfigError, match="one objective"):
        study.optimize(lambda t: (two_parameters(t), 1.0), n_trials=2)
