"""``searchlab.tune``: Kernel Tuner's ``tune_kernel`` arguments, tuned on the real OpenCL device (pocl here).

The kernel is the test's own: a vector add whose ``SHIFT=1`` variant reads one element too far, so it computes the
wrong output for every configuration that has it; the run must record those as FAILED(wrong_output) and return
exactly what its run directory records."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import searchlab
from searchlab.core.store import read_run
from searchlab.errors import ConfigError
from tests.byo_helpers import has_opencl

KERNEL = """
__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[(i + SHIFT) % n];
}
"""
N = 4096


def _arguments() -> tuple[list[Any], np.ndarray]:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    return [np.zeros(N, np.float32), a, b, np.int32(N)], a + b


def _tune(run_dir: Path, **options: Any) -> searchlab.TuneResult:
    arguments, want = _arguments()
    options = {"restrictions": ["block_size_x >= 32"], "answer": [want, None, None, None],
               "default": {"block_size_x": 32, "SHIFT": 0}, "executor": "serial", "run_dir": run_dir,
               "overrides": ["confirm.max_time_s=20", "problem.measure.max_runs=10"], **options}
    return searchlab.tune("vector_add", KERNEL, N, arguments, {"block_size_x": [16, 32, 64, 128], "SHIFT": [0, 1]},
                          **options)


@pytest.mark.opencl
@pytest.mark.skipif(not has_opencl(), reason="no OpenCL platform")
def test_tune_returns_what_the_run_directory_records(tmp_path: Path) -> None:
    result = _tune(tmp_path / "run", searcher="exhaustive", budget=20)
    run_dir = tmp_path / "run"
    summary = json.loads((run_dir / "summary.json").read_text())
    info, results = read_run(run_dir)
    # the result is the run directory's record, field by field
    assert result.run_dir == run_dir.resolve() and result.status == summary["status"] == "finished"
    assert result.recommended == summary["recommended"]["config"]
    assert result.recommended_is_default == summary["recommended"]["is_default"]
    assert result.verdict == summary["verdict"] and result.evaluations == summary["evaluations"] == len(results)
    assert result.best_measured == {"config": summary["best_measured"]["config"],
                                    "objective": summary["best_measured"]["objective"]}
    best = min((r for r in results if r.ok), key=lambda r: r.objective or 0.0)
    assert result.best_measured["config"] == dict(best.config) and result.best_measured["objective"] == best.objective
    # measured: the 6 admitted configurations; the restriction's 2 never ran
    measured = [r for r in results if r.status.value != "infeasible"]
    assert sorted((r.config["block_size_x"], r.config["SHIFT"]) for r in measured) == \
        sorted((b, s) for b in (32, 64, 128) for s in (0, 1))
    for r in measured:  # the wrong variant is a failure of mode wrong_output, the right one is timed
        if r.config["SHIFT"] == 1:
            assert r.status.value == "failed" and r.measurement.failure_mode.value == "wrong_output", r
            assert "wrong output" in r.measurement.message
        else:
            assert r.ok and r.measurement.samples, r
    # the confirm phase ran against the default, and only a measurably faster configuration is recommended
    confirm = summary["confirm"]
    assert confirm["default"]["config"] == {"block_size_x": 32, "SHIFT": 0} and confirm["default"]["measurements"] >= 1
    if result.recommended_is_default:
        assert result.recommended == {"block_size_x": 32, "SHIFT": 0}
    else:
        assert result.speedup_ci95 is not None and result.speedup_ci95[0] > 1 and (result.recommended or {}).get("SHIFT") == 0
    # the record is data a worker or a resume rebuilds the problem from
    assert info["problem"] == "python_kernel" and info["config"]["problem"]["spec"] == str(run_dir / "inputs" / "kernel.json")
    assert {p.name for p in (run_dir / "inputs").iterdir()} == {"kernel.json", "kernel.cl", "arg0.npy", "arg1.npy",
                                                                "arg2.npy", "answer0.npy"}
    assert "resume=" in result.resume_command and str(run_dir.resolve()) in result.resume_command


@pytest.mark.opencl
@pytest.mark.skipif(not has_opencl(), reason="no OpenCL platform")
def test_resume_from_python_continues_to_the_new_budget(tmp_path: Path) -> None:
    first = _tune(tmp_path / "run", searcher="random", budget=3, overrides=["confirm.k=0"])
    assert first.evaluations == 3
    again = searchlab.resume(tmp_path / "run", overrides=["budget.evaluations=5"])
    assert again.evaluations == 5 and again.run_dir == first.run_dir
    with sqlite3.connect(tmp_path / "run" / "results.db") as db:
        assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 2


def test_bad_input_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    arguments, want = _arguments()
    cases: list[tuple[dict[str, Any], str]] = [
        ({"arguments": [*arguments[:3], N]}, r"arguments\[3\]: int is not a numpy array .* numpy\.int32\(4096\)"),
        ({"restrictions": [lambda p: p["block_size_x"] > 16]}, "a function is code"),
        ({"answer": [want[:10], None, None, None]}, r"answer\[0\] .* does not match argument 0"),
        ({"default": {"block_size_x": 48, "SHIFT": 0}}, "48"),  # outside the space: refused by the problem
        ({"restrictions": ["__import__('os')"]}, "restriction|not allowed|unknown|name"),
    ]
    for change, message in cases:
        options = {"arguments": arguments, "restrictions": None, "answer": [want, None, None, None],
                   "default": {"block_size_x": 32, "SHIFT": 0}, **change}
        run_dir = tmp_path / "never"
        with pytest.raises(ConfigError, match=message) as caught:
            searchlab.tune("vector_add", KERNEL, N, options.pop("arguments"), {"block_size_x": [16, 32], "SHIFT": [0, 1]},
                           executor="serial", run_dir=run_dir, **options)
        assert "\n" not in str(caught.value) and not run_dir.exists(), change


def test_launch_shape_and_defines_are_kernel_tuners(tmp_path: Path) -> None:
    """Against Kernel Tuner 1.5's own functions (kernel_tuner.util), run here, for its grid and defines rules."""
    from kernel_tuner import util

    from searchlab.adapters.user._manifest import write_manifest
    from searchlab.adapters.user.python_kernel import PythonKernel
    from searchlab.core.records import Config
    from searchlab.kernel._inputs import inputs

    params = {"block_size_x": [16, 64], "block_size_y": [1, 4], "tile": [1, 3]}
    cases = [((1000, 30), (None, None, None)), ((1000, "4 * tile + 1"), (["block_size_x", "tile"], "block_size_y * 2", 1)),
             (77, (3, None, None))]
    for size, grid in cases:
        given = inputs("k", "__kernel void k() {}", size, [np.zeros(4, np.float32)], params, grid=grid, restrict=None,
                       answer=None, atol=1e-6, default=None, names=None)
        spec = write_manifest(tmp_path / str(len(list(tmp_path.iterdir()))), given.manifest, given.kernel_text,
                              given.arrays, given.answers)
        problem = PythonKernel(spec=str(spec))
        for bx in params["block_size_x"]:
            for by in params["block_size_y"]:
                for tile in params["tile"]:
                    values = {"block_size_x": bx, "block_size_y": by, "tile": tile}
                    names = list(util.default_block_size_names)
                    threads = util.get_thread_block_dimensions(values, names)
                    divs = [g if g is not None else None for g in grid]
                    kt_grid = util.get_grid_dimensions(util.get_problem_size(size, values), values, divs, names)
                    assert problem.shape(Config(values)) == (tuple(g * t for g, t in zip(kt_grid, threads)), threads)
                    _, text = util.prepare_kernel_string("k", "__kernel void k() {}", values, kt_grid, threads, names,
                                                         "OpenCL", None)
                    assert problem.source(Config(values)) == text


@pytest.mark.opencl
@pytest.mark.skipif(not has_opencl(), reason="no OpenCL platform")
def test_the_docs_example_runs_as_written(tmp_path: Path) -> None:
    import os
    import re
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    block = re.findall(r"```python\n(.*?)```", (root / "docs" / "python.md").read_text(), flags=re.S)[0]
    (tmp_path / "example.py").write_text(block)
    out = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=str(root)))
    assert out.returncode == 0, out.stderr[-3000:]
    last = out.stdout.strip().splitlines()[-1]  # print(result.recommended, result.speedup_ci95, result.run_dir)
    run_dir = Path(last.split()[-1])
    assert last.startswith("{'block_size_x': ")
    assert run_dir.is_dir() and run_dir.is_relative_to(tmp_path / "outputs") and (run_dir / "results.db").is_file()
    assert "searchlab: verdict:" in out.stdout


@pytest.mark.opencl
@pytest.mark.skipif(not has_opencl(), reason="no OpenCL platform")
def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    """SIGINT mid-run: the summary is written (status interrupted), both ways to go on are printed, and the caller
    gets KeyboardInterrupt. Nothing is timed: the test waits for the first recorded evaluation, then signals."""
    import os
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "tune.py"
    script.write_text(f"""
import numpy as np, searchlab
from tests.kernel.test_tune import KERNEL, N, _arguments
arguments, want = _arguments()
try:
    searchlab.tune("vector_add", KERNEL, N, arguments, {{"block_size_x": list(range(16, 1025, 16)), "SHIFT": [0, 1]}},
                   answer=[want, None, None, None], executor="serial", budget=5000, searcher="random",
                   run_dir={str(tmp_path / 'run')!r}, overrides=["problem.measure.min_time_s=0.2"])
except KeyboardInterrupt:
    print("caller got KeyboardInterrupt")
""")
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=dict(os.environ, PYTHONPATH=str(root)))
    db = tmp_path / "run" / "results.db"
    end = time.monotonic() + 300
    while time.monotonic() < end and proc.poll() is None:
        if db.is_file():
            with sqlite3.connect(db) as conn:
                if conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0] >= 1:
                    break
        time.sleep(0.5)
    assert proc.poll() is None, proc.communicate()[0][-3000:]
    proc.send_signal(signal.SIGINT)
    output = proc.communicate(timeout=300)[0]
    assert "caller got KeyboardInterrupt" in output, output[-3000:]
    line = next(li for li in output.splitlines() if li.startswith("searchlab: interrupted"))
    assert "resume=" in line and f"searchlab.resume({str((tmp_path / 'run').resolve())!r})" in line
    result = searchlab.TuneResult.load(tmp_path / "run")
    assert result.status == "interrupted" and result.evaluations >= 1


def test_kernel_source_is_text_or_a_file_as_kernel_tuner_decides(tmp_path: Path) -> None:
    from searchlab.kernel._inputs import kernel_text

    (tmp_path / "add.cl").write_text(KERNEL)
    assert kernel_text(tmp_path / "add.cl") == KERNEL  # a Path
    assert kernel_text(str(tmp_path / "add.cl")) == KERNEL  # a file name (Kernel Tuner's looks_like_a_filename)
    assert kernel_text([str(tmp_path / "add.cl")]) == KERNEL  # a list of one file
    assert kernel_text(KERNEL) == KERNEL  # the code itself
    for bad, message in ((lambda p: KERNEL, "a generator function is code"), (tmp_path / "none.cl", "is not a file"),
                         ("", "must be the kernel's source text")):
        with pytest.raises(ConfigError, match=message):
            kernel_text(bad)
