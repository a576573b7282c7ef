"""The measurement protocol on a real pocl kernel (searchlab.adapters.knobs), its options, and a device
problem's summary: noise (CV) of its measurements and the confirmed best with its interval."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from searchlab.adapters.knobs import Fir
from searchlab.core.measure import MeasurementProtocol, median_ci
from searchlab.core.problem import DeviceInfo
from searchlab.core.records import Config, Status
from searchlab.errors import ConfigError
from searchlab.run.execution import build_problem
from searchlab.run.lifecycle import execute
from searchlab.run.summary import format_summary
from searchlab.study.execution.grid import _compose_run
from tests.adapters.test_knob_problems import opencl

SMALL = {"n": 2048, "taps": 16, "max_banks": 2, "max_accesses": 2, "limits": {"compile_s": 100.0}}
CONFIG = Config(banks=2, accesses=2)


@opencl
def test_protocol_stops_as_specified_on_a_real_kernel() -> None:
    problem = Fir(**SMALL)  # type: ignore[arg-type]
    problem.setup(DeviceInfo())  # compiled once; each protocol below re-measures the same kernel

    def measure(**options: float) -> tuple[tuple[float, ...], float, dict[str, float]]:
        problem.protocol = MeasurementProtocol(**options)  # type: ignore[arg-type]
        m = problem.evaluate(CONFIG)
        assert m.status is Status.OK and m.objective is not None, m.message
        return m.samples, m.objective, dict(m.sensors)

    try:
        # fixed count: no time or interval criterion -> exactly min_runs launches
        samples, objective, sensors = measure(min_runs=4, max_runs=9, min_time_s=0.0, target_rel_ci=0.0)
        assert len(samples) == 4 == sensors["runs"] and objective == statistics.median(samples) == sensors["time_s"]
        assert (sensors["ci95_lo"], sensors["ci95_hi"]) == median_ci(samples) and sensors["cv"] >= 0
        # an unreachable minimum time: the cap stops it
        samples, _, sensors = measure(min_runs=2, max_runs=7, min_time_s=100.0)
        assert len(samples) == 7 == sensors["runs"]
        # a minimum time of 30 ms: stops as soon as the launches add up to it (well under 1 ms each here)
        samples, _, _ = measure(min_runs=2, max_runs=10_000, min_time_s=0.03, target_rel_ci=0.0)
        assert sum(samples) >= 0.03 and (len(samples) == 2 or sum(samples[:-1]) < 0.03)
        # an interval target: stops once the median's 95 % interval is that tight (or at the cap)
        samples, _, sensors = measure(min_runs=3, max_runs=200, min_time_s=0.0, target_rel_ci=0.05)
        rel = (sensors["ci95_hi"] - sensors["ci95_lo"]) / 2 / statistics.median(samples)
        assert len(samples) == 200 or (rel <= 0.05 and len(samples) >= 3)
    finally:
        problem.teardown()


def test_protocol_options_are_declared_once_and_checked() -> None:
    from searchlab.cli.config import register_configs

    register_configs()
    cfg = _compose_run(["problem=fir", "problem.measure.max_runs=7", "problem.measure.target_rel_ci=0.05"])
    problem = build_problem(cfg["problem"])
    assert problem.protocol == MeasurementProtocol(max_runs=7, target_rel_ci=0.05)
    assert problem.params["measure"]["max_runs"] == 7  # part of the fingerprint: it changes measured values
    with pytest.raises(ConfigError, match="do not compose"):
        _compose_run(["problem=fir", "problem.measure.max_run=7"])
    with pytest.raises(ConfigError, match="measure.max_runs=0"):
        Fir(measure={"max_runs": 0})
    with pytest.raises(ConfigError, match="unknown option"):
        Fir(measure={"repeats": 3})


@opencl
@pytest.mark.slow
def test_device_problem_summary_shows_noise_and_confirmed_best(tmp_path: Path) -> None:
    cfg = _compose_run(["problem=fir", "problem.n=2048", "problem.taps=16", "problem.max_banks=2",
                        "problem.max_accesses=2", "+problem.limits.compile_s=100", "problem.measure.max_runs=8",
                        "searcher=exhaustive", "executor=serial", "progress=off", "confirm.k=2", "confirm.rounds=2"])
    summary = execute(cfg, tmp_path / "run", quiet=True)
    assert summary["evaluations"] == 4 and summary["status_counts"].get("ok", 0) >= 2
    noise = summary["noise"]
    assert noise is not None and noise["median_cv"] >= 0 and noise["median_samples"] >= 5
    confirm = summary["confirm"]  # on by default for a device problem
    assert confirm["complete"] and len(confirm["candidates"]) == 2
    best = confirm["best"]
    assert best["samples"] >= 2 * 5 and best["ci95"][0] <= best["median"] <= best["ci95"][1]
    text = format_summary(summary, tmp_path / "run")
    assert "noise: median CV" in text and "re-measured best time_s" in text
