"""``executor=auto`` (the default; searchlab.run.execution._auto): in process when the problem needs
no device and one worker, Ray when it needs a device, several workers or a named cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchlab.adapters.synthetic import SyntheticThresholds
from searchlab.core.problem import DeviceNeed
from searchlab.errors import ConfigError
from searchlab.run.execution import AutoExecutor, SerialExecutor
from searchlab.run.lifecycle import execute
from searchlab.run.prepare import prepare
from searchlab.study.execution.grid import _compose_run


class _DeviceProblem(SyntheticThresholds):
    device_need = DeviceNeed.OPENCL


def test_auto_is_the_default_and_runs_a_deviceless_problem_in_process(tmp_path: Path) -> None:
    cfg = _compose_run(["problem=synthetic_knobs", "searcher=random", "budget.evaluations=5", "progress=off",
                        "plot=false"])
    assert cfg["executor"]["_target_"].endswith("AutoExecutor")
    prepared = prepare(cfg, tmp_path / "run")
    prepared.close()
    assert isinstance(prepared.executor, SerialExecutor)
    summary = execute(cfg, tmp_path / "run2", quiet=True)
    assert summary["executor"] == "serial" and all(d["executor"] == "serial" for d in summary["devices"])


@pytest.mark.parametrize(("problem", "options", "expected"), [
    (SyntheticThresholds(), {}, "serial"),
    (SyntheticThresholds(), {"workers": 1}, "serial"),
    (SyntheticThresholds(), {"workers": 2}, "ray"),
    (SyntheticThresholds(), {"address": "auto"}, "ray"),
    (_DeviceProblem(), {}, "ray"),
])
def test_auto_picks_ray_only_when_something_needs_it(problem: SyntheticThresholds, options: dict[str, object],
                                                     expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    chosen = AutoExecutor(**options).resolve(problem)  # type: ignore[arg-type]
    assert chosen.name == expected  # chosen, not started: no cluster is made here


def test_ray_address_in_the_environment_means_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """auto picks Ray, whose address check then refuses the closed port (a serial executor would not look)."""
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    with pytest.raises(ConfigError, match=r"RAY_ADDRESS=127\.0\.0\.1:1: no Ray cluster answers"):
        AutoExecutor().resolve(SyntheticThresholds())


def test_forcing_still_works(tmp_path: Path) -> None:
    cfg = _compose_run(["problem=synthetic_knobs", "searcher=random", "budget.evaluations=3", "executor=serial",
                        "progress=off", "plot=false"])
    assert execute(cfg, tmp_path / "run", quiet=True)["executor"] == "serial"
    ray = _compose_run(["problem=synthetic_knobs", "searcher=random", "executor=ray"])
    prepared = prepare(ray, tmp_path / "ray")
    prepared.close()
    assert prepared.executor.name == "ray"
