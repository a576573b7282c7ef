"""Ray's private APIs sit behind searchlab.core.ray_private (issue 36, item 7): each checked against the installed Ray,
which must lie in the range pyproject.toml states."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_installed_ray_is_in_pyprojects_range() -> None:
    from packaging.specifiers import SpecifierSet

    dependencies = (ROOT / "pyproject.toml").read_text().split("[project.optional")[0]
    (spec,) = re.findall(r'"ray(?:\[[^\]]*\])?([<>=!~][^";]*)"', dependencies)
    assert version("ray") in SpecifierSet(spec)


def test_every_private_name_resolves() -> None:
    import ray._private.ray_constants as constants
    import ray._private.worker as worker
    import ray._raylet as raylet

    assert hasattr(raylet, "Config") and hasattr(raylet, "GcsClient")
    assert hasattr(constants, "ENABLE_RAY_CLUSTER") and hasattr(worker, "WORKER_MODE") and hasattr(worker, "global_worker")
    import inspect

    from ray._private import node

    assert {"include_dashboard", "raise_on_failure"} <= set(inspect.signature(node.Node.start_api_server).parameters)


def test_no_private_ray_name_outside_the_one_module() -> None:
    out = subprocess.run(["git", "grep", "-n", "-E", r"(from|import) ray\._|ray\._private\.", "--", "searchlab"], cwd=ROOT,
                         capture_output=True, text=True)
    places = {line.split(":", 1)[0] for line in out.stdout.splitlines()}
    assert places <= {"searchlab/core/ray_private.py"}, places


@pytest.mark.ray
def test_the_private_calls_work_on_a_local_ray() -> None:
    import ray

    from searchlab.core import ray_private

    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        assert re.fullmatch(r"[0-9a-f]{56}", ray_private.cluster_id())
        assert not ray_private.in_worker(ray.get_runtime_context())
        inside = ray.remote(lambda: __import__("searchlab.core.ray_private").core.ray_private.in_worker(
            __import__("ray").get_runtime_context()))
        assert ray.get(inside.remote()) is True
        ray_private.reload_config()
        ray_private.set_cluster_mode_from_environment()
    finally:
        ray.shutdown()
    assert sys.modules["ray"] is ray
