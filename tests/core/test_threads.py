"""The thread policy (searchlab/core/threads.py, docs/threads.md): read back inside a Ray replay task,
in a serial run, and for the proposer beside Ray evaluators."""

from __future__ import annotations

import os
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from searchlab.core import threads
from searchlab.errors import ConfigError


@pytest.fixture
def restore_pools() -> Iterator[None]:
    """The policy changes process-wide pools: give this test process its own back."""
    from threadpoolctl import ThreadpoolController

    before = [(lib, lib.num_threads) for lib in ThreadpoolController().lib_controllers]
    env = {k: os.environ.get(k) for k in threads.ENV_VARS}
    yield
    for lib, n in before:
        lib.set_num_threads(n)
    for k, v in env.items():
        os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def test_share_is_the_smallest_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(threads.OVERRIDE, raising=False)
    cores = len(os.sched_getaffinity(0))
    assert threads.cpu_share() == cores  # no Ray task here: the affinity
    assert threads.cpu_share(cores + 5) == cores and threads.cpu_share(0) == 1
    monkeypatch.setenv(threads.OVERRIDE, "1")
    assert threads.cpu_share() == 1


@pytest.mark.parametrize("value", ["two", "-1", "1.5"])
def test_bad_override_is_one_line(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(threads.OVERRIDE, value)
    with pytest.raises(ConfigError, match="SEARCHLAB_THREADS"):
        threads.cpu_share()


def test_override_zero_leaves_pools_alone(monkeypatch: pytest.MonkeyPatch, restore_pools: None) -> None:
    monkeypatch.setenv(threads.OVERRIDE, "0")
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    before = threads.observed_threads()
    assert threads.limit_pools(1) is None
    assert os.environ["OMP_NUM_THREADS"] == "7" and threads.observed_threads() == before


def test_serial_run_caps_pools_and_keeps_smaller_choices(monkeypatch: pytest.MonkeyPatch, restore_pools: None) -> None:
    from searchlab.adapters.synthetic import SyntheticKnobs
    from searchlab.api import optimize
    from searchlab.run.loop import Budget
    from searchlab.searchers import RandomSearcher

    monkeypatch.setenv(threads.OVERRIDE, "1")  # the serial path reads the same policy as a replay task
    monkeypatch.setenv("OMP_NUM_THREADS", "16")  # a larger export is capped
    monkeypatch.setenv("MKL_NUM_THREADS", "1")  # a smaller one is kept (never raised)
    problem = SyntheticKnobs()
    optimize(problem, RandomSearcher(problem.space, seed=0), Budget(evaluations=2))
    assert os.environ["OMP_NUM_THREADS"] == os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert os.environ["MKL_NUM_THREADS"] == "1"
    assert threads.observed_threads() and all(n == 1 for n in threads.observed_threads().values())


def test_proposer_keeps_the_cores_ray_evaluators_do_not_hold() -> None:
    from searchlab.core.problem import DeviceInfo
    from searchlab.run.execution import RayExecutor
    from searchlab.run.execution._ray import OPENCL_CPU, _Slot

    executor = RayExecutor()
    assert executor.proposer_cores() is None  # no cluster of ours: nothing known about its evaluators
    executor._started_ray = True
    cores = len(os.sched_getaffinity(0))
    executor._slots = [_Slot(0, {"num_cpus": 0, "resources": {OPENCL_CPU: 1}}, DeviceInfo(kind="cpu", cores=(cores - 1,)))]
    assert executor.proposer_cores() == max(1, cores - 1)
    executor._slots.append(_Slot(1, {"num_cpus": 1}, DeviceInfo()))
    assert executor.proposer_cores() == max(1, cores - 2)


@pytest.mark.ray
@pytest.mark.slow  # a Ray cluster and torch's import: ~30 s alone, minutes on a loaded machine
def test_replay_task_caps_pools_inside_ray(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A study's replay task (``_replay._task``, ``num_cpus=1``) reads back one thread everywhere,
    although the driver exported ``OMP_NUM_THREADS=2`` (which Ray passes to its workers as is)
    and numpy/torch were loaded with it before the task's policy ran."""
    import ray

    from searchlab.study.execution import replay as _replay
    from searchlab.study.execution.grid import Cell, _compose_run

    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.delenv(threads.OVERRIDE, raising=False)
    with_torch = find_spec("torch") is not None
    cfg = _compose_run(["problem=synthetic_knobs", "searcher=random", "executor=serial", "budget.evaluations=3",
                        "progress=off", "plot=false"])
    cell = Cell("knobs", "random", 0, tmp_path / "run", {**cfg, "seed": 0})
    started = _replay._start_ray(2, None)
    if not started:
        pytest.skip("Ray was already running in this process with another environment")

    def probe(cell: Cell, cwd: str) -> tuple[str | None, dict[str, str | None], dict[str, int], dict[str, Any]]:
        inherited = os.environ.get("OMP_NUM_THREADS")
        import numpy  # noqa: F401  (OpenBLAS sizes its pool now, from the inherited variable)

        if with_torch:
            import torch  # noqa: F401
        record = _replay._task(cell, cwd).record  # the task returns its rows to the driver (ReplayOutcome)
        env = {k: os.environ.get(k) for k in threads.ENV_VARS}
        return inherited, env, threads.observed_threads(), record

    try:
        inherited, env, pools, record = ray.get(ray.remote(num_cpus=1)(probe).remote(cell, str(tmp_path)))
    finally:
        ray.shutdown()
    assert inherited == "2"  # what Ray alone would leave: two threads per one-CPU task
    assert record["evaluations"] == 3
    assert set(env.values()) == {"1"}
    assert pools.get("openblas") == 1 and all(n == 1 for n in pools.values())
    assert pools.get("torch") == (1 if with_torch else None)
