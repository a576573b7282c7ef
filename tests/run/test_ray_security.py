"""Nothing listens beyond loopback during a Ray run, and the cluster refuses a client
without Ray's token (issue 10, item 2).

One live Ray run (the executor as a search uses it, one worker): every listening TCP
socket of this process and its descendants (driver, gcs_server, raylet, agents, workers)
is listed from the kernel (psutil) and must be on loopback; then the same GCS request is
made by a fresh client process twice, once without the token (refused: InvalidAuthToken)
and once with it (answered), which shows token authentication is on, not merely configured.
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def _listening(pids: set[int]) -> list[tuple[str, int, str]]:
    import psutil

    out = []
    for conn in psutil.net_connections(kind="inet"):
        if conn.status == psutil.CONN_LISTEN and conn.pid in pids:
            try:
                proc = psutil.Process(conn.pid)
                name = f"{proc.name()} {' '.join(proc.cmdline())[:60]}"
            except psutil.Error:
                name = "?"
            out.append((conn.laddr.ip, conn.laddr.port, name))
    return out


def _is_loopback(ip: str) -> bool:
    addr = ipaddress.ip_address(ip.split("%")[0])
    mapped = getattr(addr, "ipv4_mapped", None)  # ::ffff:127.0.0.1, a dual-stack socket bound to loopback
    return (mapped or addr).is_loopback


def _gcs_call(gcs: str, cluster_id: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A GCS request from a fresh client process (Ray's own client), with the given environment."""
    code = (f"from ray._raylet import GcsClient\n"
            f"client = GcsClient(address={gcs!r}, cluster_id={cluster_id!r})\n"
            f"client.internal_kv_get(b'probe', None, timeout=30)\n"
            f"print('ANSWERED')\n")
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=180)


def test_ray_run_listens_on_loopback_only_and_refuses_clients_without_the_token(tmp_path: Path) -> None:
    import psutil

    from searchlab.run.execution import RayExecutor
    from searchlab.searchers import RandomSearcher

    if os.environ.get("RAY_ADDRESS"):
        pytest.skip("RAY_ADDRESS joins an existing cluster; this test needs one started here")
    from searchlab.adapters.synthetic import SyntheticDag

    problem = SyntheticDag()
    executor = RayExecutor(workers=1, timeout_s=120)
    try:
        executor.start({"_target_": "searchlab.adapters.synthetic.SyntheticDag"})
        (candidate,) = RandomSearcher(problem.space, seed=0).ask(1)
        executor.submit(candidate)
        results: list[Any] = []
        while not results:
            results = executor.collect(timeout=5)
        me = psutil.Process()
        pids = {me.pid, *(p.pid for p in me.children(recursive=True))}
        sockets = _listening(pids)
        names = " ".join(s[2] for s in sockets)
        assert "gcs_server" in names and "raylet" in names, sockets  # the listing sees Ray's services
        exposed = [s for s in sockets if not _is_loopback(s[0])]
        assert not exposed, f"listening beyond loopback: {exposed}"

        import ray

        gcs = ray.get_runtime_context().gcs_address
        cluster_id = ray._private.worker.global_worker.node.cluster_id.hex()
        assert _is_loopback(gcs.rsplit(":", 1)[0])
        # no token: Ray's client sends none (auth disabled on its side, no token file in its HOME)
        refused = _gcs_call(gcs, cluster_id, {"RAY_AUTH_MODE": "disabled", "HOME": str(tmp_path)})
        assert refused.returncode != 0 and "ANSWERED" not in refused.stdout
        assert "InvalidAuthToken" in refused.stderr or "Unauthenticated" in refused.stderr, refused.stderr[-500:]
        answered = _gcs_call(gcs, cluster_id, {})  # the same request with the cluster's token
        assert "ANSWERED" in answered.stdout, answered.stderr[-500:]
    finally:
        executor.close()


def test_no_token_warning_in_the_run_output(tmp_path: Path) -> None:
    """Ray warns 'Token authentication is enabled' when the mode is unset; we set it."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_AUTH_MODE", "RAY_ADDRESS")}
    out = subprocess.run([sys.executable, "-m", "searchlab", "problem=synthetic_dag", "searcher=random",
                          "budget.evaluations=3", "executor=ray", "executor.workers=1", "progress=off"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert "Token authentication is enabled" not in out.stdout + out.stderr
