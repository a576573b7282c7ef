"""Kernel Tuner cache files replayed as table problems (searchlab.adapters.knobs.kernel_tuner)."""

from __future__ import annotations

import collections
import gzip
import json
from pathlib import Path

import pytest

from searchlab.adapters.knobs import KernelTunerCache, load_kernel_tuner_cache
from searchlab.api import optimize
from searchlab.core.records import Config, FailureMode, Status
from searchlab.core.sensors import sensor_model_of
from searchlab.errors import ConfigError
from searchlab.run.loop import Budget, StopReason
from searchlab.searchers import ProbabilisticSearcher, RandomSearcher

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "kernel_tuner"
SMALL = ROOT / "tests" / "data" / "kt_convolution_A100_small.json.gz"
FILES = sorted(SHARED.glob("*.json.gz")) if SHARED.exists() else []


def _raw(path: Path) -> dict:
    with gzip.open(path, "rt") as fh:
        return json.load(fh)


def test_small_table_modes_charges_and_missing_configurations() -> None:
    raw = _raw(SMALL)
    problem = KernelTunerCache(path=str(SMALL))
    table = problem.table
    assert len(table.rows) == len(raw["cache"]) == 450
    modes = collections.Counter(m.failure_mode for m in table.rows.values())
    assert modes == {FailureMode.NONE: 430, FailureMode.LAUNCH: 14, FailureMode.COMPILE: 6}
    entry = next(e for e in raw["cache"].values() if not isinstance(e["time"], str))
    keys = raw["tune_params_keys"]
    m = problem.evaluate(Config({k: entry[k] for k in keys}))
    assert m.status is Status.OK and m.objective == entry["time"] and len(m.samples) == len(entry["times"])
    assert m.charged_s == pytest.approx((entry["compile_time"] + entry["benchmark_time"]) / 1000)
    assert m.sensors["GFLOP_s"] == entry["GFLOP/s"]
    failed = next(e for e in raw["cache"].values() if e["time"] == "RuntimeFailedConfig")
    m = problem.evaluate(Config({k: failed[k] for k in keys}))
    assert m.failure_mode is FailureMode.LAUNCH and m.charged_s == pytest.approx(
        (failed["compile_time"] + failed["benchmark_time"]) / 1000)
    missing = next(c for c in _product(raw) if c not in table.rows)  # excluded by the tuner's restrictions
    assert problem.space.check(missing) is not None
    assert all(problem.space.check(c) is None for c in problem.space.enumerate())
    assert sum(1 for _ in problem.space.enumerate()) == 450
    invalid = KernelTunerCache(path=str(SMALL), missing="invalid")
    assert invalid.space.check(missing) is None and invalid.evaluate(missing).failure_mode is FailureMode.INVALID
    best = min(e["time"] for e in raw["cache"].values() if not isinstance(e["time"], str))
    assert problem.known_optimum == best


def _product(raw: dict) -> list[Config]:
    import itertools

    keys = raw["tune_params_keys"]
    return [Config(dict(zip(keys, vals))) for vals in itertools.product(*(raw["tune_params"][k] for k in keys))]


def test_charged_time_budget_stops_the_replay() -> None:
    problem = KernelTunerCache(path=str(SMALL))
    outcome = optimize(problem, RandomSearcher(problem.space, seed=0), Budget(evaluations=None, charged_time_s=5.0))
    assert outcome.reason is StopReason.CHARGED_TIME
    charged = [r.measurement.charged for r in outcome.results]
    assert sum(charged) >= 5.0 > sum(charged[:-1])


def test_bad_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        KernelTunerCache(path=str(tmp_path / "nope.json"))
    (tmp_path / "other.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(ConfigError, match="not a Kernel Tuner cache"):
        load_kernel_tuner_cache(tmp_path / "other.json")
    with pytest.raises(ConfigError, match="missing"):
        load_kernel_tuner_cache(SMALL, missing="drop")
    with pytest.raises(ConfigError, match="problem.path"):
        KernelTunerCache()


def test_sensor_model_reaches_the_searcher() -> None:
    problem = KernelTunerCache(path=str(SMALL))
    model = sensor_model_of(problem.space)
    assert model.objective.text == "time" and "compile_time" in model.sensors
    assert ProbabilisticSearcher(problem.space, seed=0).model is model


@pytest.mark.skipif(not FILES, reason="../shared/data/kernel_tuner is not present")
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_shared_cache_files_load_and_probabilistic_runs(path: Path) -> None:
    raw = _raw(path)
    problem = KernelTunerCache(path=str(path))
    assert len(problem.table.rows) == len(raw["cache"])
    strings = collections.Counter(e["time"] for e in raw["cache"].values() if isinstance(e["time"], str))
    modes = collections.Counter(m.failure_mode for m in problem.table.rows.values() if m.status is not Status.OK)
    assert modes.get(FailureMode.COMPILE, 0) == strings.get("CompilationFailedConfig", 0)
    assert modes.get(FailureMode.LAUNCH, 0) == strings.get("RuntimeFailedConfig", 0)
    searcher = ProbabilisticSearcher(problem.space, direction=problem.direction, seed=0, candidates=30)
    outcome = optimize(problem, searcher, Budget(evaluations=12))
    assert len(outcome.results) == 12 and outcome.best is not None
    assert all(r.status is not Status.INFEASIBLE for r in outcome.results)  # never proposes excluded ones


A100 = SHARED / "convolution_A100.json.gz"


def _failed(raw: dict) -> set[Config]:
    keys = raw["tune_params_keys"]
    return {Config({k: e[k] for k in keys}) for e in raw["cache"].values() if isinstance(e["time"], str)}


def test_recorded_failures_known_are_never_evaluated_hidden_are_met() -> None:
    """Issue 22 (3): Kernel Tuner 1.5's simulation mode never proposes a configuration the cache
    records as failed; ``recorded_failures=known`` replays the cache the same way."""
    raw = _raw(SMALL)
    failed = _failed(raw)
    assert len(failed) == 20  # 14 launch + 6 compile failures in the small table
    known = KernelTunerCache(path=str(SMALL), recorded_failures="known")
    assert sum(1 for _ in known.space.enumerate()) == 430
    assert all(known.space.check(c) is not None for c in failed)
    outcome = optimize(known, RandomSearcher(known.space, seed=0), Budget(evaluations=430))
    assert len(outcome.results) == 430 and all(r.status is Status.OK for r in outcome.results)
    hidden = KernelTunerCache(path=str(SMALL))
    outcome = optimize(hidden, RandomSearcher(hidden.space, seed=0), Budget(evaluations=450))
    assert {r.candidate.config for r in outcome.results if r.status is Status.FAILED} == failed
    assert known.fingerprint() != hidden.fingerprint()
    with pytest.raises(ConfigError, match="recorded_failures"):
        KernelTunerCache(path=str(SMALL), recorded_failures="drop")
    with pytest.raises(ConfigError, match="missing=constraint"):
        KernelTunerCache(path=str(SMALL), recorded_failures="known", missing="invalid")


@pytest.mark.skipif(not A100.exists(), reason="../shared/data/kernel_tuner is not present")
def test_known_failures_match_kernel_tuner_search_space_on_a100() -> None:
    known = KernelTunerCache(path=str(A100), recorded_failures="known")
    hidden = KernelTunerCache(path=str(A100))
    assert sum(1 for _ in known.space.enumerate()) == 4201  # Kernel Tuner 1.5 tune_cache's search space
    assert sum(1 for _ in hidden.space.enumerate()) == 4362  # every recorded configuration, 161 failed
    for name in ("auto", "genetic"):
        from searchlab import registry

        searcher = registry.searcher_class(name)(known.space, direction=known.direction, seed=1)
        outcome = optimize(known, searcher, Budget(evaluations=60))
        measured = [r for r in outcome.results if r.status is not Status.INFEASIBLE]
        assert len(measured) == 60 and all(r.status is Status.OK for r in measured)
