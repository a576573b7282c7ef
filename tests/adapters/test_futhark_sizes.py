"""problem=futhark with ``problem.sizes=true``: block and tile sizes as knobs beside the thresholds.

Real compiler, real pocl. Most tests use ``tests/data/futhark/mm.fut``, a plain matrix
product with few kernels (pocl builds a new size setting of it in seconds; docs/futhark.md
"Cost of a size change"); discovery is also checked on ``programs/loopmm.fut``, which
``tests/adapters/test_futhark_server.py`` compiles too. ≈ 41 s with a cold pocl cache, ≈ 10 s warm.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from searchlab.adapters.futhark import FutharkLoopmm, FutharkServerProblem
from searchlab.adapters.futhark._program import fixed_runs
from searchlab.adapters.futhark._report import read_tuning
from searchlab.adapters.futhark._sizes import ThresholdSizeSpace, domain, size_params
from searchlab.adapters.futhark.program import BENCH_LIKE
from searchlab.core.records import Candidate, Config, FailureMode, Measurement, Status
from searchlab.core.spaces import Threshold, ThresholdDataset, ThresholdTree, plateau_knobs
from searchlab.run.execution import SerialExecutor
from searchlab.searchers import BinarySearcher, FutharkAutotuneSearcher, RandomSearcher, TagSearcher
from tests.futhark_support import HAVE_FUTHARK, VENV_BIN, served

ROOT = Path(__file__).resolve().parents[2]
MM = ROOT / "tests" / "data" / "futhark" / "mm.fut"
VALIDATION = "[64][64]f32 [64][64]f32"
LIMITS = {"thread block size": 4096, "grid size": 2**31, "tile size": 64}


def test_domains_follow_the_device_limits() -> None:
    assert domain("thread_block_size", 32, LIMITS) == tuple(2**i for i in range(13))
    assert domain("tile_size", 4, LIMITS)[-1] == 64  # 64 * 64 = 4096 threads per block
    assert domain("tile_size", 4, {"thread block size": 1024, "tile size": 64})[-1] == 32
    assert domain("grid_size", 2, LIMITS)[-1] == 1024  # capped: only empty blocks beyond
    assert 3 in domain("thread_block_size", 3, LIMITS)  # the device's default is always a value


def test_size_params_and_the_combined_space_without_a_compiler() -> None:
    classes = {"main.Ty_7": "tile_size", "main.segred_tblock_size_3": "thread_block_size", "main.x_cache": "cache"}
    defaults = {"block size": "32", "tile size": "4", "cache": "0", "threshold": "2"}
    params = size_params(classes, defaults, {"thread block size": "256", "tile size": "64"})
    assert [(p.name, p.cls, p.default, p.values[-1]) for p in params] == [
        ("main.Ty_7", "tile_size", 4, 16), ("main.segred_tblock_size_3", "thread_block_size", 32, 256)]
    tree = ThresholdTree((Threshold("main.suff_outer_par_0", default=2),),
                         (ThresholdDataset("a", {"main.suff_outer_par_0": (100,)}),
                          ThresholdDataset("b", {"main.suff_outer_par_0": (7,)}, train=False)))
    space = ThresholdSizeSpace.build(tree, params)
    assert space.knob("main.suff_outer_par_0").values == tree.plateau_values("main.suff_outer_par_0")
    assert space.default_config() == {"main.suff_outer_par_0": 2, "main.Ty_7": 4, "main.segred_tblock_size_3": 32}
    assert space.all_false()["main.suff_outer_par_0"] == 101 and [d.name for d in space.validation_datasets()] == ["b"]
    assert BinarySearcher.incompatibility(space) is not None and RandomSearcher.incompatibility(space) is None


@pytest.fixture(scope="module")
def mm() -> Iterator[tuple[FutharkServerProblem, SerialExecutor]]:
    with served(lambda: FutharkServerProblem(program=str(MM), validation=[VALIDATION], sizes=True,
                                             measure=fixed_runs(BENCH_LIKE, 2), validation_runs=2)) as pair:
        yield pair


def evaluate(executor: SerialExecutor, config: dict[str, Any]) -> Measurement:
    executor.submit(Candidate(0, Config(config), Config(config), {}))
    return executor.collect(None)[0].measurement


def named(problem: FutharkServerProblem, prefix: str) -> str:
    return next(p.name for p in problem.size_params if p.name.startswith(prefix))


@pytest.mark.slow
@pytest.mark.opencl
def test_size_knobs_of_loopmm_are_discovered() -> None:
    if not HAVE_FUTHARK:
        pytest.skip("the Futhark compiler is not installed: run make setup")
    problem = FutharkLoopmm(sizes=True)
    classes = {p.cls for p in problem.size_params}
    assert {"tile_size", "reg_tile_size", "thread_block_size", "grid_size"} <= classes
    space = problem.space
    assert isinstance(space, ThresholdSizeSpace) and space.kind == "thresholds+sizes"
    assert set(space.names) == set(problem.tree.names) | {p.name for p in problem.size_params}
    for p in problem.size_params:
        assert p.default in p.values and all(v & (v - 1) == 0 for v in p.values if v != p.default)
    assert BinarySearcher.incompatibility(space) is not None  # tree tuners refuse: no tree to walk


@pytest.mark.slow
@pytest.mark.opencl
def test_space_evaluations_and_a_rejected_size(mm: tuple[FutharkServerProblem, SerialExecutor]) -> None:
    problem, executor = mm
    space = problem.space
    assert isinstance(space, ThresholdSizeSpace)
    for knob in plateau_knobs(problem.tree).knobs:  # thresholds: the values the tree view gives
        assert space.knob(knob.name).values == knob.values
    ty, ry = named(problem, "main.Ty"), named(problem, "main.Ry")
    assert space.knob(ty).values == (1, 2, 4, 8, 16, 32, 64)
    base = {k: space.knob(k).values[0] for k in problem.tree.names} | space.size_defaults()
    assert evaluate(executor, base).status is Status.OK
    tiled = evaluate(executor, base | {ty: 16})
    assert tiled.status is Status.OK
    # what the Ty=16 server computes is the product of its inputs (numpy: independent of the program)
    import futhark_data
    import numpy as np

    data = next(d for d in problem.data.values() if d.name != VALIDATION)
    server = problem._pool.get(((ty, 16),), True)
    with open(data.input, "rb") as handle:
        a, b = list(futhark_data.load(handle))
    _, outs, _ = server.call(data.entry, problem._input(server, data), data.n_outputs)
    np.testing.assert_allclose(server.fetch(outs)[0], a @ b, rtol=1e-3, atol=1e-3)
    server.drop(outs)
    # and the check runs for a new size setting: a wrong expected output fails the evaluation
    saved = {d.name: d.expected for d in problem.data.values()}
    for d in problem.data.values():
        d._expected = [np.zeros_like(x) for x in saved[d.name] or []]
    try:
        wrong = evaluate(executor, base | {ty: 8})
    finally:
        for d in problem.data.values():
            d._expected = saved[d.name]
    assert wrong.status is Status.FAILED and wrong.failure_mode is FailureMode.WRONG_OUTPUT
    opts = [server.opts for server in problem._pool.servers()]
    assert any(f"--param={ty}=16" in o for o in opts) and any(f"--param={ty}=16" not in o for o in opts)
    rejected = evaluate(executor, base | {ty: 64, ry: 8})  # pocl's server dies on this one
    assert rejected.status is Status.FAILED and rejected.failure_mode in (FailureMode.CRASH, FailureMode.RUNTIME)
    assert ty in rejected.message
    assert evaluate(executor, base).status is Status.OK  # the worker recovered


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([sys.executable, "-m", "searchlab", "problem=futhark", f"problem.program={MM}",
                           f"problem.validation=[{VALIDATION!r}]", "problem.sizes=true", "problem.measure.min_runs=2",
                           "problem.measure.max_runs=2", "problem.validation_runs=2", "executor=serial",
                           "confirm.max_rounds=10", "confirm.max_time_s=20", *args],  # the sequential rule, bounded
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


@pytest.mark.slow
@pytest.mark.opencl
def test_threshold_tuner_refused_with_exit_2(mm: tuple[FutharkServerProblem, SerialExecutor],
                                             tmp_path: Path) -> None:
    proc = cli("searcher=binary", f"hydra.run.dir={tmp_path / 'run'}", cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "thresholds+sizes" in lines[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "run" / "results.db").exists()
    assert FutharkAutotuneSearcher.incompatibility(mm[0].space) is not None
    assert TagSearcher.incompatibility(mm[0].space) is None and RandomSearcher.incompatibility(mm[0].space) is None


@pytest.mark.slow
@pytest.mark.opencl
def test_search_end_to_end_and_tuning_file_in_futhark_bench(mm: tuple[FutharkServerProblem, SerialExecutor],
                                                             tmp_path: Path) -> None:
    problem = mm[0]
    run = tmp_path / "run"
    proc = cli("searcher=random", "budget.evaluations=2", "seed=3", "plot=false", f"hydra.run.dir={run}", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    tuning = read_tuning(run / "mm.candidate.tuning")  # the best found, written whatever the verdict
    assert set(tuning) == set(problem.space.names)  # thresholds and sizes
    summary = json.loads((run / "summary.json").read_text())
    assert (run / "mm.fut.tuning").exists() is summary["report"]["recommended"]
    assert summary["report"]["recommended"] is (summary["report"]["versus_default"]["ci95"][0] > 1)
    assert summary["verdict"] == proc.stdout.strip().split("searchlab: verdict: ")[-1].replace("\n  ", "\n")
    table = (run / "mm.validation.txt").read_text()
    assert all(label in table for label in ("untuned", "all-false", "tuned"))
    bench = tmp_path / "bench"
    bench.mkdir()
    shutil.copy(MM, bench / "mm.fut")
    shutil.copy(problem.exe, bench / "mm")
    shutil.copy(run / "mm.candidate.tuning", bench / "mm.fut.tuning")
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(["futhark", "bench", "--backend=opencl", "--skip-compilation", "-r", "1",
                           f"--spec-file={run / 'mm.spec'}", "mm.fut"],
                          capture_output=True, text=True, cwd=bench, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "using mm.fut.tuning" in proc.stdout
