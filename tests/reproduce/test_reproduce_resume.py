"""A killed ``searchlab reproduce`` loses no finished repeat and never redoes one; signals exit 130 / 143 with a
pasteable resume line; one process writes a directory (a second is refused in one line)."""

from __future__ import annotations

import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchlab.reproduce.cli import main, reproduce
from tests.reproduce.conftest import ROOT, experiment

ONE = [{"name": "random", "search_method": "random_sample", "display_name": "Random"}]


def _start(path: Path, out: Path | None, cwd: Path = ROOT) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "searchlab", "reproduce", str(path),
                             *(["--out", str(out)] if out else []), "--workers", "1", "--quiet"],
                            cwd=cwd, text=True, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _stored(out: Path) -> dict[str, bytes]:
    db = out / "results.db"
    if not db.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            rows = conn.execute("SELECT r.name, group_concat(e.extra, '|') FROM runs r JOIN evaluations e "
                                "ON e.run_id = r.id GROUP BY r.name").fetchall()
            return {str(k): str(v).encode() for k, v in rows}
        finally:
            conn.close()
    except sqlite3.Error:
        return {}


def _wait_for(out: Path, n: int, proc: subprocess.Popen[str]) -> dict[str, bytes]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        found = _stored(out)
        if len(found) >= n:
            return found
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} repeats stored (exit {proc.poll()}): {proc.stderr.read() if proc.stderr else ''}")


def test_resume_after_kill_9_keeps_and_skips_finished_repeats(tmp_path: Path) -> None:
    path, out = experiment(tmp_path, repeats=20, strategies=ONE), tmp_path / "out"
    proc = _start(path, out)
    _wait_for(out, 2, proc)
    proc.kill()
    proc.wait()
    before = _stored(out)
    assert 2 <= len(before) < 20
    result = reproduce(str(path), str(out), workers=1, quiet=True)
    assert result["ran"] == 20 - len(before)
    after = _stored(out)
    assert len(after) == 20 and all(after[k] == v for k, v in before.items())  # kept, not redone


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_is_one_line_with_a_pasteable_resume(tmp_path: Path, sig: int, status: int) -> None:
    path = experiment(tmp_path, repeats=20, strategies=ONE)
    proc = _start(path, None, cwd=tmp_path)  # no --out: the line names the directory the run used
    out = next(iter((tmp_path / "outputs" / "reproduce").glob("*")), None)
    deadline = time.monotonic() + 120
    while out is None and time.monotonic() < deadline:
        time.sleep(0.05)
        out = next(iter((tmp_path / "outputs" / "reproduce").glob("*")), None) \
            if (tmp_path / "outputs" / "reproduce").exists() else None
    assert out is not None
    _wait_for(out, 1, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == status, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "interrupted" in lines[0], err
    command = shlex.split(lines[0].split("resume: ", 1)[1])
    assert command[-5:] == [str(path.resolve()), "--out", str(out.resolve()), "--workers", "1"]
    assert command[:3] in ([sys.executable, "-m", "searchlab"], ["searchlab", "reproduce", str(path.resolve())][:3])


def test_a_second_writer_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, out = experiment(tmp_path, repeats=40, strategies=ONE), tmp_path / "out"
    proc = _start(path, out)
    try:
        _wait_for(out, 1, proc)
        assert main([str(path), "--out", str(out), "--quiet", "--workers", "1"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "another searchlab reproduce writes" in err, err
    finally:
        proc.kill()
        proc.wait()


def test_another_experiment_in_a_directory_with_repeats_is_refused(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main([str(experiment(tmp_path, repeats=1, strategies=ONE)), "--out", str(out), "--quiet"]) == 0
    (tmp_path / "x").mkdir()
    other = experiment(tmp_path / "x", repeats=2, strategies=ONE)
    assert main([str(other), "--out", str(out), "--quiet"]) == 2
    assert "different experiment file" in capsys.readouterr().err
