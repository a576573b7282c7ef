"""A SIGKILLed run resumes to its budget with no finished evaluation lost or measured twice."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.test_cli import run_cli


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0])
    except sqlite3.OperationalError:  # created but its schema not written yet
        return 0


BUDGET = 80  # at 0.05 s each, killed after 20: the resumed part is 3 s of delays


def _start_and_kill(tmp_path: Path, executor: str, at_least: int) -> Path:
    args = [sys.executable, "-m", "searchlab", "problem=synthetic_dag", "searcher=random", "problem.delay_s=0.05",
            f"budget.evaluations={BUDGET}", f"executor={executor}", "progress=off"]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 90
    db = None
    while time.time() < deadline:
        found = list(tmp_path.glob("outputs/*/*/results.db"))
        if found and _count(found[0]) >= at_least:
            db = found[0]
            break
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert db is not None, "the run never recorded enough evaluations"
    return db


@pytest.mark.parametrize("executor", ["serial", pytest.param("ray", marks=pytest.mark.ray)])
def test_resume_after_sigkill(tmp_path: Path, executor: str) -> None:
    db = _start_and_kill(tmp_path, executor, at_least=20)
    with sqlite3.connect(db) as conn:
        before = conn.execute("SELECT candidate_id, config_key, objective FROM evaluations ORDER BY id").fetchall()
    assert 20 <= len(before) < BUDGET
    out = run_cli(tmp_path, f"resume={db.parent}", "progress=off")
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT candidate_id, config_key, objective FROM evaluations ORDER BY id").fetchall()
        sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    assert len(rows) == BUDGET
    assert rows[: len(before)] == before  # nothing finished was lost or rewritten
    assert len({r[0] for r in rows}) == BUDGET and len({r[1] for r in rows}) == BUDGET  # nothing measured twice
    assert sessions == 2


def test_resume_refuses_a_different_searcher_and_missing_runs(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "problem=synthetic_dag", "searcher=random", "budget.evaluations=5", "executor=serial")
    assert out.returncode == 0
    (db,) = tmp_path.glob("outputs/*/*/results.db")
    out = run_cli(tmp_path, f"resume={db.parent}", "searcher=exhaustive", "executor=serial")
    assert out.returncode == 2 and "differs from the run's searcher=random" in out.stderr
    out = run_cli(tmp_path, f"resume={tmp_path / 'nowhere'}", "executor=serial")
    assert out.returncode == 2 and "no results.db" in out.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.db").write_text("not a database")
    out = run_cli(tmp_path, f"resume={broken}", "executor=serial")
    assert out.returncode == 2 and "not a readable searchlab database" in out.stderr
