"""Studies on a real multi-node Ray cluster (issue 24): work spreads, GPUs are pinned, faults lose nothing.

One module-scoped ``ray.cluster_utils.Cluster`` -- Ray's own: a head node and a worker node,
each with its own raylet and object store -- on loopback only (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``)
with token authentication on (a token file of the test's own, ``RAY_AUTH_TOKEN_PATH``).
The head declares 2 CPUs, the worker 1 CPU and 2 GPUs: ``num_gpus`` is a Ray resource, so
this machine needs no GPU; the OpenCL enumeration of the GPU actors is driven through its
seam (``opencl_lister``), the part we do not ship. The tests that remove the worker node
run last and add a fresh one first.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from searchlab.core.problem import DeviceInfo, DeviceNeed, Problem
from searchlab.core.records import Config, Measurement
from searchlab.core.spaces import IntKnob, KnobSpace

pytestmark = [pytest.mark.ray, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
DELAY = "problem.delay_s=0.05"  # synthetic_dag sleeps per evaluation: tasks long enough to be caught in flight


@dataclass
class Nodes:
    cluster: Any
    address: str
    head: str
    worker: Any  # the worker node (a ray._private.node.Node)
    env: dict[str, str]  # what a driver process on this machine needs to join (the token's path)


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nodes]:
    token = tmp_path_factory.mktemp("auth") / "token"
    token.write_text(os.urandom(16).hex())
    env = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token),
           "RAY_USAGE_STATS_ENABLED": "0"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    from searchlab.run.execution._ray import local_ray_environment

    local_ray_environment()  # Ray may be imported already: refresh what it read
    import ray
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]
    from ray.cluster_utils import Cluster

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # GpuProbe, fake_node_gpus
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 2, "include_dashboard": False, "object_store_memory": 80 * 1024**2})
    try:
        worker = cluster.add_node(num_cpus=1, num_gpus=2, object_store_memory=80 * 1024**2)
        cluster.wait_for_nodes()
        head = cluster.head_node
        assert head is not None
        yield Nodes(cluster, cluster.address, head.node_id, worker, env)
    finally:
        ray.shutdown()
        cluster.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        AuthenticationTokenLoader.instance().reset_cache()


def _study(out: Path, seeds: int, evaluations: int, address: str) -> Any:
    from searchlab.study.execution.config import compose_study

    cfg = compose_study("synthetic_replay", [f"seeds={seeds}", f"budget.evaluations={evaluations}",
                                             f"ray_address={address}", f"out={out}", "run_dirs=true"])
    cfg.problems = {"dag": {"overrides": ["problem=synthetic_dag", DELAY]}}
    cfg.searchers = {"random": "random"}
    return cfg


def _runs(study: Path) -> dict[str, tuple[list[int], list[str], list[str]]]:
    """Per run directory: candidate ids, the node of each evaluation, the run's recorded nodes."""
    out = {}
    for db in sorted((study / "runs").rglob("results.db")):
        conn = sqlite3.connect(db)
        try:
            rows = conn.execute("SELECT candidate_id, node FROM evaluations WHERE candidate_id >= 0 ORDER BY id").fetchall()
            (nodes,) = conn.execute("SELECT nodes FROM runs").fetchone()
        finally:
            conn.close()
        out[db.parent.name] = ([r[0] for r in rows], [r[1] for r in rows], json.loads(nodes or "[]"))
    return out


def _complete_once(study: Path, seeds: int, evaluations: int) -> dict[str, tuple[list[int], list[str], list[str]]]:
    runs = _runs(study)
    assert sorted(runs) == [f"seed_{s}" for s in range(seeds)]
    for name, (ids, _, _) in runs.items():
        assert ids == list(range(evaluations)), (name, ids)  # every evaluation exactly once, none duplicated
        assert (study / "runs" / "dag" / "random" / name / "summary.json").is_file()
    assert not list(study.rglob("*.part"))
    return runs


def test_replay_study_spreads_over_both_nodes_and_counts_work_per_node(nodes: Nodes, tmp_path: Path) -> None:
    import ray

    from searchlab.study.execution.grid import run_study

    try:
        result = run_study(_study(tmp_path / "s", 4, 12, nodes.address))
    finally:
        ray.shutdown()
    runs = _complete_once(tmp_path / "s", 4, 12)
    used = {n for _, per_eval, _ in runs.values() for n in per_eval}
    assert used == {nodes.head, nodes.worker.node_id}  # both nodes, and every evaluation names its node
    for _, per_eval, recorded in runs.values():
        assert recorded == sorted(set(per_eval))  # the run records the nodes it used
    report = (tmp_path / "s" / "summary.md").read_text()
    section = report[report.index("## Work per node"):]
    assert nodes.head in section and nodes.worker.node_id in section
    assert result["meta"]["runs"] == 4


def test_batched_replay_study_spreads_over_both_nodes_into_one_store(nodes: Nodes, tmp_path: Path) -> None:
    import ray

    from searchlab.study.execution.grid import run_study

    cfg = _study(tmp_path / "s", 8, 12, nodes.address)
    cfg.run_dirs = False  # the default: batches of cells per task, one store written by the driver
    try:
        run_study(cfg)
    finally:
        ray.shutdown()
    with sqlite3.connect(tmp_path / "s" / "results.db") as conn:  # the study's records: one runs row per cell
        cells = {name: json.loads(nodes)[0] for name, nodes in conn.execute("SELECT name, nodes FROM runs")}
        counts = conn.execute("SELECT run_id, COUNT(*), COUNT(DISTINCT candidate_id) FROM evaluations "
                              "GROUP BY run_id").fetchall()
    assert sorted(cells) == [f"dag/random/seed_{s}" for s in range(8)] and not (tmp_path / "s" / "runs").exists()
    assert all(n == d == 12 for _, n, d in counts) and len(counts) == 8  # every evaluation once
    assert set(cells.values()) == {nodes.head, nodes.worker.node_id}
    report = (tmp_path / "s" / "summary.md").read_text()
    section = report[report.index("## Work per node"):]
    assert nodes.head in section and nodes.worker.node_id in section


def test_live_sweep_spreads_device_actors_over_both_nodes(nodes: Nodes, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "searchlab", "-m", "problem=synthetic_dag", DELAY, "searcher=random",
                          "seed=0,1", "budget.evaluations=8", "executor=ray", f"executor.address={nodes.address}",
                          "executor.workers=2", "progress=off", f"hydra.sweep.dir={tmp_path / 'sweep'}"],
                         cwd=tmp_path, env={**os.environ, **nodes.env}, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    dbs = sorted((tmp_path / "sweep").rglob("results.db"))
    assert len(dbs) == 2
    for db in dbs:
        conn = sqlite3.connect(db)
        used = {r[0] for r in conn.execute("SELECT node FROM evaluations")}
        conn.close()
        assert used == {nodes.head, nodes.worker.node_id}, used


class GpuProbe(Problem):
    """Needs an OpenCL device; reports what its process sees (test double: no GPU is shipped)."""

    name = "gpu_probe"
    device_need = DeviceNeed.OPENCL

    @property
    def space(self) -> KnobSpace:
        return KnobSpace((IntKnob("x", 0, 3),))

    def evaluate(self, config: Config) -> Measurement:
        return Measurement.ok(1.0, sensors={"cuda": float(os.environ["CUDA_VISIBLE_DEVICES"])})


def fake_node_gpus() -> list[DeviceInfo]:
    """An OpenCL driver that ignores CUDA_VISIBLE_DEVICES: every GPU of the node, in order."""
    return [DeviceInfo("cpu", "fake cpu", "fake", 0, 0),
            *(DeviceInfo("gpu", f"fake gpu {i}", "fake", 1, i) for i in range(2))]


def test_each_gpu_actor_holds_one_gpu_id_and_opens_the_device_it_names(nodes: Nodes) -> None:
    import ray

    from searchlab.run.execution._ray import RayExecutor

    executor = RayExecutor(workers=2, address=nodes.address, timeout_s=60, opencl_lister=fake_node_gpus)
    try:
        workers = executor.start(GpuProbe())
        seen = [ray.get(s.actor.environment.remote()) for s in executor._slots]
    finally:
        executor.close()
        ray.shutdown()
    ids = [w.device.gpu_ids for w in workers]
    assert sorted(ids) == [("0",), ("1",)]  # one id each, never shared
    for worker, env in zip(workers, seen):
        (gid,) = worker.device.gpu_ids
        assert env["CUDA_VISIBLE_DEVICES"] == gid  # the actor sees only its own GPU
        assert worker.device.name == f"fake gpu {gid}" and worker.device.device_index == int(gid)
        assert worker.node == nodes.worker.node_id  # the only node that declares GPUs


def test_pinned_device_when_the_driver_honours_cuda_visible_devices() -> None:
    from searchlab.core.opencl import pinned_device
    from searchlab.errors import ExecutorError

    def one_gpu() -> list[DeviceInfo]:
        return [DeviceInfo("gpu", "the visible gpu", "nvidia", 0, 0)]

    assert pinned_device("gpu", (), ("3",), one_gpu).name == "the visible gpu"
    assert pinned_device("gpu", (), ("1",), fake_node_gpus).name == "fake gpu 1"
    with pytest.raises(ExecutorError, match="exactly one GPU id"):
        pinned_device("gpu", (), ("0", "1"), fake_node_gpus)
    with pytest.raises(ExecutorError, match="GPU id 5"):
        pinned_device("gpu", (), ("5",), fake_node_gpus)


def test_driver_killed_then_rerun_into_the_same_out_resumes(nodes: Nodes, tmp_path: Path) -> None:
    import ray

    from searchlab.study.execution.config import compose_study
    from searchlab.study.execution.grid import run_study

    study = tmp_path / "s"
    overrides = ["study=synthetic_replay", "seeds=4", "budget.evaluations=20", f"ray_address={nodes.address}",
                 "~problems.synthetic_knobs", f"+problems.dag=['problem=synthetic_dag','{DELAY}']", "~searchers.tag",
                 "~searchers.mc", "~searchers.uct", "run_dirs=true"]
    proc = subprocess.Popen([sys.executable, "-m", "searchlab.study", *overrides, "--out", str(study)], cwd=tmp_path,
                            env={**os.environ, **nodes.env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 180
    while not list(study.rglob("summary.json")) and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # the driver dies with runs in flight on both nodes
    first = proc.communicate()[0]
    done = len(list(study.rglob("summary.json")))
    assert 1 <= done < 4, first[-2000:]
    try:  # the same command again, into the same --out (in process: the same code path, no interpreter start)
        run_study(compose_study("synthetic_replay", overrides[1:]), [], str(study))
    finally:
        ray.shutdown()
    _complete_once(study, 4, 20)
    kept = json.loads((study / "study.json").read_text())["meta"]["kept (already done)"]
    assert kept >= done  # what the killed driver had written was kept, not redone


def test_joining_a_cluster_without_authentication_is_refused_unless_said_explicitly(nodes: Nodes) -> None:
    import ray
    from ray._raylet import Config  # type: ignore[attr-defined]
    from ray.cluster_utils import Cluster

    from searchlab.errors import ConfigError
    from searchlab.run.execution._join import join_cluster

    def mode(value: str) -> None:
        os.environ["RAY_AUTH_MODE"] = value
        Config.initialize("")

    mode("disabled")  # a second cluster, started the way a careless `ray start` would
    try:
        open_cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 0, "include_dashboard": False, "object_store_memory": 80 * 1024**2})
    finally:
        mode("token")
    try:
        with pytest.raises(ConfigError, match="answers clients without a token") as refused:
            join_cluster(open_cluster.address, "executor.address")
        assert "\n" not in str(refused.value) and open_cluster.address in str(refused.value)
        assert not ray.is_initialized()
        mode("disabled")  # the user's explicit choice
        join_cluster(open_cluster.address, "executor.address")
        assert ray.is_initialized()
    finally:
        ray.shutdown()
        mode("token")
        open_cluster.shutdown()


class Slow(Problem):
    """Three seconds per evaluation: long enough to lose a node under it (test double)."""

    name = "slow"

    @property
    def space(self) -> KnobSpace:
        return KnobSpace((IntKnob("x", 0, 9),))

    def evaluate(self, config: Config) -> Measurement:
        time.sleep(3.0)
        return Measurement.ok(float(config["x"]))  # type: ignore[arg-type]


def test_actor_on_a_lost_node_is_recreated_on_a_live_one(nodes: Nodes) -> None:
    import ray

    from searchlab.core.records import Status
    from searchlab.run.execution._ray import RayExecutor
    from searchlab.searchers import ExhaustiveSearcher

    problem = Slow()
    executor = RayExecutor(workers=2, address=nodes.address, timeout_s=120)
    try:
        workers = executor.start(problem)
        assert {w.node for w in workers} == {nodes.head, nodes.worker.node_id}  # one actor per node
        first, second, again = ExhaustiveSearcher(problem.space).ask(3)
        executor.submit(first)
        executor.submit(second)
        nodes.cluster.remove_node(nodes.worker, allow_graceful=False)
        results: list[Any] = []
        while len(results) < 2:
            results += executor.collect(timeout=30)
        lost = next(w.name for w in workers if w.node == nodes.worker.node_id)
        assert {r.worker: r.status for r in results}[lost] is Status.CRASHED  # unfinished: recorded as such
        assert all(w.node == nodes.head for w in executor.workers)  # the new actor lives on the live node
        executor.submit(again)
        assert [r.status for r in executor.collect(timeout=60)] == [Status.OK]
    finally:
        executor.close()
        ray.shutdown()
        nodes.worker = nodes.cluster.add_node(num_cpus=1, num_gpus=2, object_store_memory=80 * 1024**2)
        nodes.cluster.wait_for_nodes()


def test_worker_node_lost_mid_study_every_run_complete_exactly_once(nodes: Nodes, tmp_path: Path) -> None:
    import ray

    from searchlab.study.execution.grid import make_cells
    from searchlab.study.execution.replay import run_cells

    study = tmp_path / "s"
    lost: list[str] = []

    def remove_when_busy() -> None:  # both nodes are mid-task when the first run is written
        deadline = time.time() + 120
        while not list(study.rglob("summary.json")) and time.time() < deadline:
            time.sleep(0.05)
        lost.append(nodes.worker.node_id)
        nodes.cluster.remove_node(nodes.worker, allow_graceful=False)

    cfg = _study(study, 4, 20, nodes.address)
    cells, _ = make_cells(cfg, study)
    remover = threading.Thread(target=remove_when_busy)
    remover.start()
    try:
        records = run_cells(cells, cfg)  # the grid without its report: what is written is what is checked
    finally:
        remover.join()
        ray.shutdown()
    runs = _complete_once(study, 4, 20)
    used = {n for _, per_eval, _ in runs.values() for n in per_eval}
    assert lost and nodes.head in used and len(records) == 4
