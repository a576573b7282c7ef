"""Helpers of the bring-your-own tests: a composed run in process, a CLI run, the records."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir

from searchlab.cli.config import register_configs
from searchlab.cli.main import CONF_DIR

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def has_opencl() -> bool:
    try:
        import pyopencl as cl

        return bool(cl.get_platforms())
    except Exception:
        return False


def run(run_dir: Path, *overrides: str) -> dict[str, Any]:
    """Compose the config as the CLI would and run it in this process; the summary."""
    from searchlab.run.lifecycle import execute

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["executor=serial", "progress=off", *overrides])
    return execute(cfg, run_dir, quiet=True)


def cli(cwd: Path, module: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def rows(run_dir: Path) -> list[dict[str, Any]]:
    """Every recorded evaluation: config, status, failure mode, objective, message."""
    conn = sqlite3.connect(run_dir / "results.db")
    try:
        out = conn.execute("SELECT config, status, failure_mode, objective, message FROM evaluations"
                           " WHERE candidate_id >= 0 ORDER BY id").fetchall()  # confirm-phase rows are not the search
    finally:
        conn.close()
    return [{"config": json.loads(c), "status": s, "mode": m, "objective": o, "message": msg} for c, s, m, o, msg in out]


def assert_refused(out: subprocess.CompletedProcess[str], cwd: Path, *needles: str) -> None:
    """Bad input: exit 2, one line on stderr naming the value, no traceback, no results.db."""
    lines = [line for line in out.stderr.splitlines()  # the load line (run.load) depends on the machine, not the input
             if line.strip() and "[pyopencl]" not in line and not line.startswith(("searchlab: load:", "searchlab: start:"))]
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert len(lines) == 1, out.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not list(cwd.glob("**/results.db"))
