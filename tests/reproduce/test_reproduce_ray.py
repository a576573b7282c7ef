"""The Ray cluster ``searchlab reproduce`` starts: loopback only, no dashboard, and no process outlives the run
(issue 51: it listened on all interfaces, ran a dashboard, and left ``ray::DashboardAgent`` and
``ray::RuntimeEnvAgent`` behind after ``kill -9`` of the driver).

A real run on two Ray workers, as a separate process: while it runs, every listening TCP socket of it and its
descendants (driver, gcs_server, raylet, agents, workers) is listed from the kernel; when it ends, normally or by
``kill -9``, every process it started must be gone.
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.reproduce.conftest import ROOT, experiment

pytestmark = [pytest.mark.ray, pytest.mark.slow]
ONE = [{"name": "random", "search_method": "random_sample", "display_name": "Random"}]


def _tree(pid: int) -> dict[int, tuple[float, str]]:
    import psutil

    try:
        me = psutil.Process(pid)
        procs = [me, *me.children(recursive=True)]
    except psutil.Error:
        return {}
    out = {}
    for p in procs:
        try:
            out[p.pid] = (p.create_time(), " ".join(p.cmdline())[:120] or p.name())
        except psutil.Error:
            continue
    return out


def _alive(seen: dict[int, tuple[float, str]]) -> list[str]:
    import psutil

    out = []
    for pid, (created, name) in seen.items():
        try:
            p = psutil.Process(pid)
            if p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE:
                out.append(name)
        except psutil.Error:
            continue
    return out


def _listening(pids: set[int]) -> list[tuple[str, int]]:
    import psutil

    return [(c.laddr.ip, c.laddr.port) for c in psutil.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN and c.pid in pids]


def _loopback(ip: str) -> bool:
    addr = ipaddress.ip_address(ip.split("%")[0])
    return (getattr(addr, "ipv4_mapped", None) or addr).is_loopback


def _run(tmp: Path) -> tuple[subprocess.Popen[str], dict[int, tuple[float, str]], list[Any]]:
    """Start a Ray run; return it, every process seen under it while it ran, and the sockets they listened on."""
    if os.environ.get("RAY_ADDRESS"):
        pytest.skip("RAY_ADDRESS joins an existing cluster; this test needs one started here")
    path = experiment(tmp, repeats=60, strategies=ONE)
    proc = subprocess.Popen([sys.executable, "-m", "searchlab", "reproduce", str(path), "--out", str(tmp / "out"),
                             "--workers", "2", "--quiet"], cwd=ROOT, text=True, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    seen: dict[int, tuple[float, str]] = {}
    sockets: list[Any] = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        seen.update(_tree(proc.pid))
        if sum("ray::" in n or "default_worker" in n for _, n in seen.values()) >= 2:
            time.sleep(1.0)  # the workers are up: every service has bound its sockets by now
            seen.update(_tree(proc.pid))
            sockets = _listening(set(seen))
            break
        time.sleep(0.2)
    assert sockets, f"no Ray workers seen (exit {proc.poll()}): {sorted(n for _, n in seen.values())[:10]}"
    return proc, seen, sockets


def _gone(seen: dict[int, tuple[float, str]], wait_s: float) -> list[str]:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        left = _alive(seen)
        if not left:
            return []
        time.sleep(0.25)
    return _alive(seen)


def test_loopback_only_no_dashboard_and_nothing_outlives_the_run(tmp_path: Path) -> None:
    proc, seen, sockets = _run(tmp_path)
    assert all(_loopback(ip) for ip, _ in sockets), sockets
    names = " ".join(n for _, n in seen.values())
    assert "gcs_server" in names and "raylet" in names
    assert "dashboard/dashboard.py" not in names  # no dashboard (its agent is part of every Ray node)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert _gone(seen, 15) == []


def test_nothing_outlives_a_driver_killed_with_sigkill(tmp_path: Path) -> None:
    proc, seen, _ = _run(tmp_path)
    proc.kill()
    proc.wait()
    assert _gone(seen, 20) == []
