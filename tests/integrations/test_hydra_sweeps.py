"""``-m`` through Hydra's own sweeper and launcher (issue 36, item 5) and sweeps checked whole before
any job runs (issue 37, item 10). Real launcher plugins: joblib (loky processes) and submitit_local."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

BASE = ["problem=synthetic_dag", "searcher=random", "executor=serial", "progress=off"]


def cli(tmp_path: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, "-m", "searchlab", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _spans(sweep: Path) -> list[tuple[float, float]]:
    """(first evaluation's start, last evaluation's end) of each job of a sweep."""
    spans = []
    for db in sorted(sweep.glob("*/results.db")):
        with sqlite3.connect(db) as con:
            spans.append(con.execute("SELECT min(t_start), max(t_end) FROM evaluations").fetchone())
    return spans


def test_joblib_launcher_runs_jobs_at_once(tmp_path: Path) -> None:
    out = cli(tmp_path, "-m", "seed=0,1,2,3", *BASE, "problem.delay_s=0.1", "budget.evaluations=30",
              "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={tmp_path / 'sweep'}")
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count(f"searchlab: sweep directory: {(tmp_path / 'sweep').resolve()}\n") == 1
    spans = _spans(tmp_path / "sweep")
    assert len(spans) == 4
    overlapping = [(a, b) for i, a in enumerate(spans) for b in spans[i + 1:] if a[0] < b[1] and b[0] < a[1]]
    assert overlapping, spans  # the old loop ran the jobs one after another: no two overlapped
    names = sorted(p.parent.name for p in (tmp_path / "sweep").glob("*/results.db"))
    assert [n.split("_", 1)[0] for n in names] == ["0", "1", "2", "3"] and all((tmp_path / "sweep" / n / ".hydra").is_dir()
                                                                           for n in names)


def test_submitit_local_launcher(tmp_path: Path) -> None:
    out = cli(tmp_path, "-m", "seed=0,1", *BASE, "budget.evaluations=5", "hydra/launcher=submitit_local",
              f"hydra.sweep.dir={tmp_path / 'sweep'}")
    assert out.returncode == 0, out.stderr[-3000:]
    assert len(_spans(tmp_path / "sweep")) == 2
    assert (tmp_path / "sweep" / ".submitit").is_dir()  # submitit ran them, not our loop


def test_a_hydra_callback_sees_the_sweep(tmp_path: Path) -> None:
    """Hydra's callbacks run (the old loop ignored them): Hydra's own LogJobReturnCallback logs each job."""
    out = cli(tmp_path, "-m", "seed=0,1", *BASE, "budget.evaluations=3", f"hydra.sweep.dir={tmp_path / 'sweep'}",
              "+hydra.callbacks.log_job_return._target_=hydra.experimental.callbacks.LogJobReturnCallback")
    assert out.returncode == 0, out.stderr[-3000:]
    assert (out.stdout + out.stderr).count("Succeeded with return value: 0") == 2


@pytest.mark.parametrize("sweep, named", [
    (["seed=0,-1"], "seed=-1"),
    (["searcher=random,nope"], "searcher/nope"),
    (["searcher=random,probabilistic"], "searcher=probabilistic"),  # a DAG problem: an incompatible pair
])
def test_a_sweep_is_checked_whole_before_any_job_runs(tmp_path: Path, sweep: list[str], named: str) -> None:
    overrides = [o for o in BASE if not o.startswith(sweep[0].split("=")[0] + "=")]
    out = cli(tmp_path, "-m", *sweep, *overrides, "budget.evaluations=3")
    assert out.returncode == 2, out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("searchlab: error: sweep job 1 (") and named in line
    assert not (tmp_path / "outputs").exists()  # job 0 was neither run nor written


def test_precheck_checks_every_job() -> None:
    from searchlab.cli.main import precheck

    assert precheck(["-m", "seed=0,-1", *BASE]) == 2
    assert precheck(["-m", "seed=0,1", *BASE]) is None


def test_a_signal_stops_the_sweep_after_the_interrupted_job(tmp_path: Path) -> None:
    import signal
    import time

    args = [sys.executable, "-m", "searchlab", "-m", "seed=0,1", *BASE, "problem.delay_s=0.05",
            "budget.evaluations=100000", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    deadline = time.time() + 150
    while time.time() < deadline and not list((tmp_path / "sweep").glob("0_*/results.db")):
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr[-2000:]
    assert "Traceback" not in stderr
    assert [p.parent.name.split("_")[0] for p in (tmp_path / "sweep").glob("*/summary.json")] == ["0"]
    assert not list((tmp_path / "sweep").glob("1_*"))  # job 1 never started
