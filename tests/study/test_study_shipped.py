"""Shipped studies from any directory, and Ctrl-C on a study (issue 45, item 3): subprocesses and signals, so serial."""

from __future__ import annotations

import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED_A100 = ROOT.parent / "shared" / "data" / "kernel_tuner" / "convolution_A100.json.gz"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _study(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "searchlab.study", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=240)


def test_kt_replay_runs_from_another_directory(tmp_path: Path) -> None:
    if not SHARED_A100.is_file():
        import pytest

        pytest.skip(f"no shared table at {SHARED_A100}")
    out = tmp_path / "s"
    done = _study(tmp_path, "study=kt_replay", "seeds=1", "budget.evaluations=5", "~searchers.tag", "~searchers.mc",
                  "~searchers.auto", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert (out / "report.html").is_file() and (out / "figures").is_dir()


def test_a_missing_table_fails_in_one_line_and_leaves_no_directory(tmp_path: Path) -> None:
    done = _study(tmp_path, "study=kt_replay", "seeds=1",
                  "problems.convolution_A100=['problem=kernel_tuner_cache','problem.path=../nowhere/t.json.gz']")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "nowhere/t.json.gz" in done.stderr, done.stderr
    assert not (tmp_path / "outputs").exists()  # no empty outputs/study/<date>/


def _cells(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return len(conn.execute("SELECT name FROM runs").fetchall())
    except sqlite3.OperationalError:  # the file exists before its tables do
        return 0


def test_ctrl_c_prints_one_line_with_a_resume_command_that_finishes_the_study(tmp_path: Path) -> None:
    out = tmp_path / "s"
    args = ["study=synthetic_replay", "seeds=6", "budget.evaluations=20", "workers=1", "~problems.synthetic_knobs",
            "+problems.dag=['problem=synthetic_dag','problem.delay_s=0.05']", "~searchers.tag", "~searchers.mc",
            "~searchers.uct"]
    proc = subprocess.Popen([sys.executable, "-m", "searchlab.study", *args, "--out", str(out)], cwd=tmp_path,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    db, deadline = out / "results.db", time.time() + 120
    while proc.poll() is None and time.time() < deadline and not (db.is_file() and _cells(db) >= 1):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    kept = _cells(db)
    assert proc.returncode == 130, err[-2000:]
    lines = [line for line in err.strip().splitlines() if not line.startswith("study: ")]  # progress lines aside
    assert len(lines) == 1 and "Traceback" not in err and "resume with: " in lines[0], err[-2000:]
    assert 1 <= kept < 6  # every cell finished before the interrupt is kept, one at a time
    command = shlex.split(lines[0].split("resume with: ", 1)[1])
    assert command[0] == sys.executable and command[-2:] == ["--out", str(out)]
    again = subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stderr[-2000:]
    assert _cells(db) == 6
