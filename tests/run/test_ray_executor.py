"""The Ray executor: placement, timeouts, killed workers, resource accounting, OpenCL.

The problems here are test doubles for what we do not ship: a hanging evaluation and a
worker process that dies (as pocl kills it when local memory is exceeded).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator

import numpy as np
import pytest

from searchlab.api import optimize
from searchlab.core.problem import DeviceInfo, DeviceNeed, Problem
from searchlab.core.records import Candidate, Config, Measurement, Status
from searchlab.core.spaces import IntKnob, KnobSpace
from searchlab.errors import ExecutorError
from searchlab.run.execution import RayExecutor
from searchlab.run.loop import Budget
from searchlab.searchers import ExhaustiveSearcher

pytestmark = pytest.mark.ray


HANG_S = 600.0  # a hung evaluation; its actor is killed at the timeout, so this costs nothing


class Faulty(Problem):
    name = "faulty"

    def __init__(self, hang_on: int = -1, die_on: int = -1, sleep_s: float = 0.0) -> None:
        super().__init__(hang_on=hang_on, die_on=die_on)
        self.hang_on, self.die_on, self.sleep_s = hang_on, die_on, sleep_s
        self._space = KnobSpace((IntKnob("x", 0, 9),))

    @property
    def space(self) -> KnobSpace:
        return self._space

    def evaluate(self, config: Config) -> Measurement:
        x = int(config["x"])  # type: ignore[arg-type]
        if x == self.die_on:
            os.kill(os.getpid(), signal.SIGKILL)
        if x == self.hang_on:
            time.sleep(HANG_S)
        time.sleep(self.sleep_s)
        return Measurement.ok(float(x), sensors={"pid": float(os.getpid())})


class VectorAdd(Problem):
    """A real OpenCL kernel, to check the actor gets an OpenCL device of its own."""

    name = "vector_add"
    device_need = DeviceNeed.OPENCL

    @property
    def space(self) -> KnobSpace:
        return KnobSpace((IntKnob("wg", 1, 4),))

    def setup(self, device: DeviceInfo) -> None:
        super().setup(device)
        import pyopencl as cl

        from searchlab.core.opencl import open_device

        self.cl = open_device(device)
        src = "__kernel void add(__global const float* a, __global const float* b, __global float* c)" \
              "{ int i = get_global_id(0); c[i] = a[i] + b[i]; }"
        self.program = cl.Program(self.cl.context, src).build()

    def evaluate(self, config: Config) -> Measurement:
        import pyopencl as cl
        import pyopencl.array as cla

        a = cla.to_device(self.cl.queue, np.arange(1024, dtype=np.float32))
        c = cla.empty_like(a)
        event = self.program.add(self.cl.queue, (1024,), (int(config["wg"]),), a.data, a.data, c.data)  # type: ignore[arg-type]
        event.wait()
        ok = np.allclose(c.get(), 2 * np.arange(1024))
        seconds = (event.get_profiling_info(cl.profiling_info.END) - event.get_profiling_info(cl.profiling_info.START)) * 1e-9
        affinity = sorted(os.sched_getaffinity(0))
        return Measurement.ok(seconds, sensors={"correct": float(ok), "cores": float(len(affinity))})


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    import ray

    ray.init(address="local", num_cpus=2, resources={"opencl_cpu": 1}, include_dashboard=False, object_store_memory=128 * 1024**2,
             logging_level="ERROR")
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray.shutdown()


def _run(problem: Problem, executor: RayExecutor, n: int) -> list[Status]:
    executor.start(problem)
    try:
        outcome = optimize(problem, ExhaustiveSearcher(problem.space), Budget(evaluations=n), executor=executor)
    finally:
        executor.close()
    return [r.status for r in outcome.results]


def test_two_actors_share_the_work(ray_cluster: None) -> None:
    problem = Faulty(sleep_s=0.05)
    executor = RayExecutor(workers=2)
    executor.start(problem)
    try:
        outcome = optimize(problem, ExhaustiveSearcher(problem.space), Budget(evaluations=10), executor=executor)
    finally:
        executor.close()
    assert [r.status for r in outcome.results] == [Status.OK] * 10
    assert len({r.worker for r in outcome.results}) == 2 and len({r.measurement.sensors["pid"] for r in outcome.results}) == 2


def test_timeout_kills_and_replaces_the_worker(ray_cluster: None) -> None:
    problem = Faulty(hang_on=2)
    executor = RayExecutor(workers=1, timeout_s=2.0)
    executor.start(problem)
    try:
        start = time.time()
        outcome = optimize(problem, ExhaustiveSearcher(problem.space), Budget(evaluations=5), executor=executor)
    finally:
        executor.close()
    statuses = [r.status for r in outcome.results]
    assert statuses == [Status.OK, Status.OK, Status.TIMEOUT, Status.OK, Status.OK]
    assert time.time() - start < HANG_S  # the hung one was killed, not waited for (no other time limit)
    assert outcome.results[3].worker == "ray-0.1"  # a fresh actor took over


def test_killed_worker_is_crashed_and_replaced(ray_cluster: None) -> None:
    statuses = _run(Faulty(die_on=1), RayExecutor(workers=1), 4)
    assert statuses == [Status.OK, Status.CRASHED, Status.OK, Status.OK]


def test_resource_accounting_and_refusal(ray_cluster: None) -> None:
    import ray

    too_many = RayExecutor(workers=3)
    too_many.settle_s = 0.5
    with pytest.raises(ExecutorError, match="executor.workers=3 with 1 CPU each needs 3 CPUs"):
        too_many.start(Faulty())
    assert not ray.util.list_named_actors()  # nothing was left behind
    executor = RayExecutor(workers=2)
    executor.start(Faulty())
    try:
        deadline = time.time() + 60  # a wait, not a limit: Ray's view of its resources lags under load
        while ray.available_resources().get("CPU", 0) > 0 and time.time() < deadline:
            time.sleep(0.1)
        assert ray.available_resources().get("CPU", 0) == 0
        busy = RayExecutor(workers=1)
        busy.settle_s = 0.5
        with pytest.raises(ExecutorError, match="needs 1 CPUs; the Ray cluster has 0 free"):
            busy.start(Faulty())
    finally:
        executor.close()
    deadline = time.time() + 60
    while ray.available_resources().get("CPU", 0) < 2 and time.time() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == 2
    assert ray.is_initialized()  # the executor did not start Ray, so it must not stop it


@pytest.mark.opencl
def test_opencl_worker_uses_the_cpu_device_resource(ray_cluster: None) -> None:
    import ray

    executor = RayExecutor()
    (worker,) = executor.start(VectorAdd())
    try:
        assert worker.device.kind == "cpu" and worker.device.platform
        assert ray.available_resources().get("opencl_cpu", 0) == 0
        result = executor.call("evaluate", Config(wg=4))
        assert result.status is Status.OK and result.sensors["correct"] == 1.0
        executor.submit(Candidate(0, Config(wg=2), Config(wg=2)))
        (done,) = executor.collect(timeout=30)
        assert done.ok and done.device == worker.device.name
    finally:
        executor.close()


PINNED = """
import os, sys, ray
from tests.run import test_ray_executor as t
from searchlab.run.execution import _cores
busy = int(sys.argv[1])  # the load is injected: the machine's real load must not decide the test
_cores.load_reading = lambda sample_s: {c: float(c == busy) for c in os.sched_getaffinity(0)}
from searchlab.run.execution import RayExecutor
from searchlab.core.records import Config
ray.cloudpickle.register_pickle_by_value(t)
ex = RayExecutor()
(w,) = ex.start(t.VectorAdd())
m = ex.call("evaluate", Config(wg=2))
print(list(w.device.cores), m.sensors["cores"], m.sensors["correct"], flush=True)
ex.close()
print("ray still running:", ray.is_initialized())
"""


@pytest.mark.opencl
def test_executor_started_ray_pins_the_opencl_worker(tmp_path: object) -> None:
    """Started by the executor itself: the worker is pinned, and not to the core another process
    keeps busy (the last core, the one an idle machine would give it: _cores). The busy reading is
    injected (``_cores.load_reading``), so other load on the machine cannot move the choice;
    tests/run/test_cores.py reads a really busy core."""
    import subprocess

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs at least two cores")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    busy = sorted(os.sched_getaffinity(0))[-1]
    out = subprocess.run([sys.executable, "-c", PINNED, str(busy)], cwd=root, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    cores, affinity, correct = lines[-2].split(" ", 1)[0], *lines[-2].rsplit(" ", 2)[1:]
    pinned = cores.strip("[]").split(", ")
    assert len(pinned) == len(os.sched_getaffinity(0)) - 1 and str(busy) not in pinned  # one core left to the driver
    assert float(affinity) >= 1 and float(correct) == 1.0
    assert lines[-1] == "ray still running: False"


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_joins_an_existing_cluster_by_address(tmp_path: object) -> None:
    """executor.address= joins a running cluster and leaves it running."""
    import subprocess

    ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    # --block keeps the head in this process group, so it can be stopped without `ray stop`
    # (which would stop every Ray cluster on the machine).
    head = subprocess.Popen([ray_bin, "start", "--head", "--block", "--num-cpus=2", "--port=6399",
                             "--include-dashboard=false", "--disable-usage-stats"], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 90
        while time.time() < deadline and not _listening(6399):  # a TCP probe: `ray status` costs seconds a call
            time.sleep(0.2)
        out = subprocess.run([sys.executable, "-m", "searchlab", "problem=synthetic_dag", "searcher=random",
                              "budget.evaluations=5", "executor.address=127.0.0.1:6399", "progress=off"],
                             cwd=str(tmp_path), capture_output=True, text=True, env=env, timeout=180)
        assert out.returncode == 0, out.stderr[-2000:]
        assert head.poll() is None and _listening(6399)  # still running: we did not start it, we did not stop it
    finally:  # `ray start --block` takes about 30 s to stop on SIGTERM; its processes die with it (PDEATHSIG)
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=3)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait(timeout=30)
