"""Signals, a full disk, and runs that end without a result (issue 10, items 9-12).

- SIGTERM / SIGINT: exit 143 / 130, status 'interrupted', summary written with exactly the
  recorded evaluations, no traceback (serial in process, and Ray, whose own SIGTERM handler
  used to print its stack and exit 1).
- A full disk (SQLite's real SQLITE_FULL, through ``max_page_count``): one line saying what
  was kept, the records readable, the CLI's exit status 1.
- DP short of budget says how many evaluations it needs -- and that number is enough.
- ``python -m searchlab.study`` takes ``~key`` as an override, and refuses a missing path
  before running anything.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchlab.errors import WriteError
from searchlab.run.lifecycle import execute
from searchlab.study.execution.grid import _compose_run


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0])
    except sqlite3.Error:
        return 0


def _run_and_signal(tmp_path: Path, signum: int, executor: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    args = [sys.executable, "-m", "searchlab", "problem=synthetic_dag", "searcher=random", "problem.delay_s=0.05",
            "budget.evaluations=100000", f"executor={executor}", "progress=off"]
    if executor == "ray":
        args.append("executor.workers=1")
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    deadline, db = time.time() + 150, None
    while time.time() < deadline and db is None:
        found = list(tmp_path.glob("outputs/*/*/results.db"))
        if found and _count(found[0]) >= 5:
            db = found[0]
        time.sleep(0.2)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=120)
    assert db is not None, stderr
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr), db


def _check_interrupted(out: subprocess.CompletedProcess[str], db: Path, status: int) -> None:
    assert out.returncode == status, out.stderr[-2000:]
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT status, stop_reason FROM runs").fetchone()
    assert row == ("interrupted", "interrupted")
    summary = json.loads((db.parent / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted" and summary["evaluations"] == _count(db) >= 5


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_ends_a_serial_run_cleanly(tmp_path: Path, signum: int, status: int) -> None:
    _check_interrupted(*_run_and_signal(tmp_path, signum, "serial"), status)


@pytest.mark.ray
@pytest.mark.slow
def test_sigterm_ends_a_ray_run_cleanly(tmp_path: Path) -> None:
    _check_interrupted(*_run_and_signal(tmp_path, signal.SIGTERM, "ray"), 143)


def test_full_disk_is_one_line_and_keeps_what_was_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import searchlab.core.store as store

    real = store.connect

    def small_disk(path: Path) -> sqlite3.Connection:
        conn = real(path)
        conn.execute("PRAGMA max_page_count=24")  # 96 KiB: SQLite's own SQLITE_FULL once it is reached
        return conn

    monkeypatch.setattr(store, "connect", small_disk)
    run_dir = tmp_path / "run"
    cfg = _compose_run(["problem=synthetic_knobs", "searcher=random", "executor=serial", "budget.evaluations=5000",
                        "progress=off"])
    with pytest.raises(WriteError) as full:
        execute(cfg, run_dir, quiet=True)
    message = str(full.value)
    kept = _count(run_dir / "results.db")
    assert "disk is full" in message and f"the {kept} evaluations recorded before are kept" in message
    assert 0 < kept < 5000 and "\n" not in message
    from searchlab.cli.main import _report

    assert _report(full.value) == 1  # not the user's input: exit 1, one line
    assert capsys.readouterr().err.count("\n") == 1


def test_dp_short_of_budget_says_what_it_needs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["problem=dft", "problem.size=1024", "problem.measure.min_runs=1", "problem.measure.max_runs=1",
            "problem.measure.warmup=0",
            "searcher=dp", "executor=serial", "progress=off"]
    short = execute(_compose_run([*base, "budget.evaluations=40"]), tmp_path / "short")
    assert short["best"] is None
    (note,) = short["notes"]
    need = int(note.split("at least ")[1])
    assert need > 40 and "searcher=dp" in note and "DFT_1024" in note
    assert f"searchlab: note: {note}" in capsys.readouterr().out
    enough = execute(_compose_run([*base, f"budget.evaluations={need}"]), tmp_path / "enough", quiet=True)
    assert enough["best"] is not None and "notes" not in enough  # the number it gave is enough


def test_study_takes_tilde_overrides_and_checks_paths_first(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from searchlab.study.__main__ import main
    from searchlab.study.execution.config import compose_study

    cfg = compose_study("synthetic_replay", ["~searchers.uct", "+searchers.ex=exhaustive"])
    assert "uct" not in cfg.searchers and cfg.searchers.ex == "exhaustive"
    import searchlab.study.execution.grid as grid

    def ran(*_: object, **__: object) -> None:  # not a time limit: the grid must not start at all
        raise AssertionError("the grid ran before the missing path was refused")

    monkeypatch.setattr(grid, "run_study", ran)
    status = main(["study=synthetic_replay", "~searchers.uct", str(tmp_path / "nowhere"), "--out", str(tmp_path / "s")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "nowhere" in err[0] and "~searchers" not in err[0]
    assert not (tmp_path / "s").exists()  # refused before the grid ran
