"""Signals in every phase of a run, and printed commands that work when pasted (issue 47, cases 4, 5, 6, 18;
issue 46, items 1 and 4: the resume line and the study pointer, run through a fresh shell as a user pastes them).

Rows of the fault table kept apart from tests/test_faults.py (which other branches also extend). Each test
failed on the code before the fix: a signal in the confirm phase exited 0 as ``finished`` with a one-sample
interval; one while the summary was written was lost; the printed resume line of a sweep job was a Hydra
parse error; a path-valued override put a sweep's job outside the sweep directory.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from searchlab.core.signals import Interrupted
from searchlab.run.lifecycle import execute
from searchlab.study.execution.grid import _compose_run

FAST = ["problem=synthetic_knobs", "searcher=random", "executor=serial", "progress=off", "plot=false",
        "budget.evaluations=6", "confirm.force=true", "confirm.k=2", "confirm.rounds=3", "confirm.max_rounds=3"]


def _rows(db: Path) -> tuple[tuple[str, str], int, int]:
    with closing(sqlite3.connect(db)) as conn:
        status = conn.execute("SELECT status, stop_reason FROM runs").fetchone()
        search = conn.execute("SELECT COUNT(*) FROM evaluations WHERE candidate_id >= 0").fetchone()[0]
        confirm = conn.execute("SELECT COUNT(*) FROM evaluations WHERE candidate_id < 0").fetchone()[0]
    return status, int(search), int(confirm)


def _kill_self(signum: int) -> None:
    os.kill(os.getpid(), signum)


def _in_confirm(monkeypatch: pytest.MonkeyPatch, signum: int) -> None:
    from searchlab.run.confirm import ConfirmPhase

    real = ConfirmPhase.finish

    def finish(self: ConfirmPhase, result: Any) -> None:
        real(self, result)
        if len(self.results) == 2:
            _kill_self(signum)

    monkeypatch.setattr(ConfirmPhase, "finish", finish)


def _in_validation(monkeypatch: pytest.MonkeyPatch, signum: int) -> None:
    from searchlab.adapters.synthetic.knobs import SyntheticKnobs

    monkeypatch.setattr(SyntheticKnobs, "finalize", lambda self, context: _kill_self(signum) or {}, raising=False)


def _in_summary(monkeypatch: pytest.MonkeyPatch, signum: int) -> None:
    import searchlab.run.lifecycle as lifecycle

    real = lifecycle._write_summary

    def write(store: Any, summary: Any) -> None:
        if summary.get("status") == "finished":
            _kill_self(signum)  # held by the guard until the summary is written
        real(store, summary)

    monkeypatch.setattr(lifecycle, "_write_summary", write)


PHASES = {"confirm": _in_confirm, "validation": _in_validation, "summary": _in_summary}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("phase", list(PHASES))
def test_a_signal_in_any_phase_after_the_search_interrupts_the_run(phase: str, signum: int, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "run"
    with monkeypatch.context() as patch:
        PHASES[phase](patch, signum)
        with pytest.raises(Interrupted) as stop:
            execute(_compose_run(FAST), run_dir, quiet=True)
    assert stop.value.exit_status == 128 + signum
    assert f"(during the {phase} phase); resume with: " in stop.value.detail
    status, search, confirmed = _rows(run_dir / "results.db")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert status == ("interrupted", "interrupted") and summary["status"] == "interrupted" == summary["stop_reason"]
    assert search == 6 and confirmed >= (2 if phase == "confirm" else 0)
    # the resume redoes what was cut short and keeps every evaluation
    resumed = execute(_compose_run([f"resume={run_dir}", "progress=off", "plot=false"]), run_dir, quiet=True)
    after = _rows(run_dir / "results.db")
    assert after[0] == ("finished", "evaluations") and resumed["status"] == "finished"
    assert after[1] == 6 and after[2] >= max(confirmed, 6)  # k=2 and the default, 3 rounds: all measured
    assert resumed["confirm"] is not None and resumed["confirm"]["complete"]


def _wait(root: Path, pattern: str, sql: str, at_least: int, seconds: float = 120,
          proc: subprocess.Popen[str] | None = None) -> Path | None:
    import time

    deadline = time.time() + seconds
    while time.time() < deadline and (proc is None or proc.poll() is None):
        for db in root.glob(pattern):
            try:
                with closing(sqlite3.connect(db)) as conn:
                    if conn.execute(sql).fetchone()[0] >= at_least:
                        return db
            except sqlite3.Error:
                pass
        time.sleep(0.1)
    return None


def _cli(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "searchlab", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))


def _paste(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The printed command run as a user pastes it: through a fresh shell."""
    command = line.split("resume with: ", 1)[1]
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=180,
                          env=dict(os.environ, PYTHONUNBUFFERED="1"))


def test_sigterm_in_a_sweep_jobs_confirm_phase_prints_a_resume_line_that_works_pasted(tmp_path: Path) -> None:
    """Cases 4 and 6 as the user meets them: a sweep job's directory holds '=' and ','."""
    sweep = tmp_path / "sw 3"
    proc = _cli(tmp_path, "-m", "seed=0,1", "problem=synthetic_knobs", "problem.delay_s=0.05", "searcher=random",
                "executor=serial", "progress=off", "plot=false", "budget.evaluations=10", "confirm.force=true",
                "confirm.rounds=20", "confirm.max_rounds=20", f"hydra.sweep.dir={sweep}")
    db = _wait(sweep, "0_*/results.db", "SELECT COUNT(*) FROM evaluations WHERE candidate_id < 0", 2,
               proc=proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert db is not None and proc.returncode == 143, err[-2000:]
    (line,) = [x for x in err.splitlines() if "resume with: " in x]
    assert "during the confirm phase" in line and "Traceback" not in err
    assert _rows(db)[0] == ("interrupted", "interrupted")
    assert json.loads((db.parent / "summary.json").read_text())["status"] == "interrupted"
    before = _rows(db)[2]
    elsewhere = tmp_path / "elsewhere"  # a fresh shell in another directory
    elsewhere.mkdir()
    pasted = _paste(line, elsewhere)
    assert pasted.returncode == 0, pasted.stderr[-2000:]
    assert _rows(db)[0] == ("finished", "evaluations") and _rows(db)[2] >= before


def _session(sid: int) -> list[int]:
    """Live processes of session ``sid`` (the sweep was started in its own session: its workers are in it)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_joblib_sweep_leaves_no_job_running_and_no_worker_alive(signum: int, tmp_path: Path) -> None:
    import time

    sweep = tmp_path / "sweep"
    proc = subprocess.Popen(
        [sys.executable, "-m", "searchlab", "-m", "seed=0,1,2,3", "problem=synthetic_dag", "searcher=random",
         "problem.delay_s=0.05", "executor=serial", "progress=off", "plot=false", "budget.evaluations=100000",
         "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={sweep}"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        deadline = time.time() + 150
        while time.time() < deadline and proc.poll() is None and sum(
                1 for db in sweep.glob("*/results.db")
                if _wait(db.parent, db.name, "SELECT COUNT(*) FROM evaluations", 3, 0.1)) < 2:
            time.sleep(0.2)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=150)  # the old code's orphans kept the pipe open: a timeout
        assert proc.returncode == 128 + signum, err[-3000:]
        assert "Traceback" not in err, err[-3000:]
        dbs = sorted(sweep.glob("*/results.db"))
        assert len(dbs) == 2, dbs
        for db in dbs:
            summary = json.loads((db.parent / "summary.json").read_text())
            assert _rows(db)[0] == ("interrupted", "interrupted") and summary["status"] == "interrupted", db
        deadline = time.time() + 10  # loky's resource tracker ends when the sweep's pipe closes
        while time.time() < deadline and _session(proc.pid):
            time.sleep(0.2)
        assert _session(proc.pid) == []
    finally:
        if _session(proc.pid):  # a failure here must not leave workers behind
            os.killpg(proc.pid, signal.SIGKILL)


def test_a_path_valued_override_keeps_the_sweep_jobs_inside_the_sweep_directory(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from searchlab.cli.main import run_command

    cwd = tmp_path / "d1" / "d2" / "d3"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    for name, offset in (("a.json", 0.0), ("b.json", 1.0)):
        rows = [{"config": {"a": a}, "status": "ok", "objective": float(a + 1) + offset} for a in range(4)]
        (tmp_path / name).write_text(json.dumps({"format": "searchlab-table/1", "direction": "minimize", "rows": rows,
                                                 "space": {"knobs": [{"name": "a", "kind": "int", "low": 0,
                                                                      "high": 3}]}}))
    sweep = cwd / "sweep"  # "0_..._problem.path=../../../a.json,..." as a path: two levels above the sweep
    status = run_command(["-m", "problem=table", "problem.path=../../../a.json,../../../b.json", "searcher=random",
                          "budget.evaluations=2", "executor=serial", "progress=off", "plot=false",
                          f"hydra.sweep.dir={sweep}"])
    assert status == 0
    found = sorted(p.parent for p in tmp_path.rglob("results.db"))
    assert len(found) == 2 and all(p.parent == sweep for p in found), found
    from searchlab.study.analysis.collect import find_sources

    assert len(find_sources([str(sweep)])) == 2


def test_a_sweep_ends_with_the_study_command_and_it_works_pasted(tmp_path: Path) -> None:
    """issue 46, item 4: a sweep ended on its last job's verdict; now on the command that compares its runs,
    spelt with this interpreter (never a bare python) and quoted for the shell (the directory has a space)."""
    import shlex

    sweep = tmp_path / "my sweep"
    out = subprocess.run([sys.executable, "-m", "searchlab", "-m", "seed=0,1", "problem=synthetic_knobs",
                          "searcher=random", "executor=serial", "progress=off", "plot=false", "budget.evaluations=4",
                          f"hydra.sweep.dir={sweep}"], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("searchlab: compare the runs: "), last
    command = last.split(": ", 2)[2]
    assert shlex.split(command)[-1] == str(sweep.resolve())
    assert shlex.split(command)[:3] == [sys.executable, "-m", "searchlab.study"] or command.startswith("searchlab")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    pasted = subprocess.run(["bash", "-c", command], cwd=elsewhere, capture_output=True, text=True, timeout=300)
    assert pasted.returncode == 0, pasted.stderr[-2000:]
    assert (sweep / "study" / "report.html").is_file() and "2 runs" in pasted.stdout
