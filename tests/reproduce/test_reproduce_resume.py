"""A killed ``searchlab reproduce`` loses no finished repeat and never redoes one; Ctrl-C says how to resume."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from searchlab.reproduce.cli import reproduce
from tests.reproduce.conftest import experiment

ROOT = Path(__file__).resolve().parents[2]
ONE = [{"name": "random", "search_method": "random_sample", "display_name": "Random"}]


def _start(path: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "searchlab", "reproduce", str(path), "--out", str(out),
                             "--workers", "0", "--quiet"], cwd=ROOT, text=True, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _wait_for(out: Path, n: int, proc: subprocess.Popen[str]) -> list[Path]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        files = sorted((out / "repeats").rglob("*.json.gz")) if (out / "repeats").exists() else []
        if len(files) >= n:
            return files
        time.sleep(0.02)
    raise AssertionError(f"fewer than {n} repeats stored (exit {proc.poll()})")


def test_resume_after_kill_keeps_and_skips_finished_repeats(tmp_path: Path) -> None:
    path, out = experiment(tmp_path, repeats=12, strategies=ONE), tmp_path / "out"
    proc = _start(path, out)
    kept = _wait_for(out, 2, proc)
    proc.kill()
    proc.wait()
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted((out / "repeats").rglob("*.json.gz"))}
    assert len(before) < 12 and set(kept) <= set(before)
    result = reproduce(str(path), str(out), workers=0, quiet=True)
    assert result["ran"] == 12 - len(before)
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in before} == before  # not rewritten
    assert len(list((out / "repeats").rglob("*.json.gz"))) == 12
    assert not list(out.rglob(".*.tmp"))


def test_ctrl_c_is_one_line_exit_130_with_a_pasteable_resume(tmp_path: Path) -> None:
    path, out = experiment(tmp_path, repeats=12, strategies=ONE), tmp_path / "out"
    proc = _start(path, out)
    _wait_for(out, 1, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    line = err.strip().splitlines()
    assert len(line) == 1 and "interrupted" in line[0], err
    command = shlex.split(line[0].split("resume: ", 1)[1])
    assert command == [sys.executable, "-m", "searchlab", "reproduce", str(path.resolve()), "--out", str(out.resolve())]


def test_repeats_spread_over_ray_workers(tmp_path: Path) -> None:
    """The Ray door (a local instance, even where another cluster runs): every repeat stored once."""
    path, out = experiment(tmp_path, repeats=3, strategies=ONE), tmp_path / "out"
    result = reproduce(str(path), str(out), workers=2, quiet=True)
    assert result["ran"] == 3 and len(list((out / "repeats").rglob("*.json.gz"))) == 3
