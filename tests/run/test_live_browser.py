"""The live view in a browser: optuna-dashboard (on 127.0.0.1 only) opened in headless Chromium on a run that is still
running, and the study's trial count seen to grow (issue 54, item 5).

The run is the command line's own (a subprocess), slowed by ``problem.delay_s`` so that it runs until the test stops
it with SIGTERM; nothing is timed: each step polls until it sees what it waits for, with deadlines generous enough
for a 2-core machine under load. Needs Debian's ``chromium`` (``make test-deps``); skipped, saying so, without it.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.study.test_study_report import CHROMIUM, FLAGS

DEADLINE_S = 240.0  # per step; a step that sees what it waits for ends at once


def _poll(what: str, check: Callable[[], Any], deadline_s: float = DEADLINE_S, every_s: float = 0.5) -> Any:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(every_s)
    raise AssertionError(f"not seen within {deadline_s:.0f} s: {what}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """The command line's run, slowed so that it goes until the test stops it."""
    run_dir = tmp_path / "run"
    with (tmp_path / "run.out").open("w") as out:  # a file, not a pipe: a full pipe would stop the run
        proc = subprocess.Popen([sys.executable, "-m", "searchlab", "problem=synthetic_knobs", "problem.delay_s=0.4",
                                 "searcher=random", "budget.evaluations=100000", "executor=serial", "live=true",
                                 "progress=log", "plot=false", f"hydra.run.dir={run_dir}"], cwd=tmp_path,
                                stdout=out, stderr=subprocess.STDOUT, text=True)
        try:
            yield proc, run_dir
        finally:
            _stop(proc)


def _trials_shown(port: int, profile: Path) -> int | None:
    """The trial count the dashboard's trial list shows (``N Trials``), as headless Chromium renders it."""
    assert CHROMIUM is not None
    try:
        out = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--window-size=1400,2000",
                              "--virtual-time-budget=15000", "--dump-dom",
                              f"http://127.0.0.1:{port}/dashboard/studies/0/trials"],
                             capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:  # a very busy machine: the caller polls again until its deadline
        return None
    text = re.sub(r"<[^>]+>", " ", out.stdout)
    found = re.search(r"\b(\d+)\s+Trials\b", text)
    return int(found.group(1)) if found else None


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary found: install Debian's chromium "
                                             "(apt-get install -y chromium) to open optuna-dashboard headless")
@pytest.mark.timeout(1200)
def test_the_dashboard_shows_a_running_runs_trials_grow(running: tuple[subprocess.Popen[str], Path],
                                                         tmp_path: Path) -> None:
    proc, run_dir = running
    journal = run_dir / "live.log"
    _poll("the run's first trial in its journal", lambda: journal.is_file() and b"\"evaluation\"" in journal.read_bytes())
    port = _free_port()
    dashboard = Path(sys.executable).parent / "optuna-dashboard"
    server = subprocess.Popen([str(dashboard), "--host", "127.0.0.1", "--port", str(port), str(journal)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    try:
        _poll("optuna-dashboard listening on 127.0.0.1", lambda: _listening(port) or server.poll() is not None)
        assert server.poll() is None, "optuna-dashboard exited"
        first = _poll("a trial count in the dashboard", lambda: _trials_shown(port, tmp_path / "p1"), every_s=1.0)
        assert proc.poll() is None, "the run ended before the dashboard was seen: it must be a running run"
        later = _poll("the trial count growing", lambda: (n := _trials_shown(port, tmp_path / "p2")) and n > first
                      and n, every_s=2.0)
        assert later > first >= 1
    finally:
        _stop(server)
    assert _stop(proc) == 143  # SIGTERM: the run ends cleanly (docs/reference.md)
    printed = (tmp_path / "run.out").read_text()
    assert "resume with" in printed and f"--host 127.0.0.1 --port 8080 {journal}" in printed  # the command to paste
