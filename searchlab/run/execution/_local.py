"""The one start of a local Ray cluster (issue 51): loopback only, no dashboard, every process reaped.

:func:`start_local` is the only ``ray.init`` of a new cluster in searchlab: the Ray executor, a study's replays and
``searchlab reproduce`` start Ray through it (``searchlab.run.cluster.start_local_ray``). It binds every service to
loopback with token authentication (:func:`searchlab.run.execution._ray_actor.local_ray_environment`), keeps Ray from
starting its dashboard's API server (:func:`searchlab.core.ray_private.no_api_server`), and first starts a watchdog
(:mod:`searchlab.run.execution._watchdog`) that ends every process of the cluster when this process ends, ``kill -9``
included; :func:`stop_local` shuts Ray down and lets the watchdog reap what Ray leaves (its agents outlived
``ray.shutdown()``). docs/security.md says what listens where.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from searchlab.core.ray_private import no_ray_sigterm_handler
from searchlab.core.signals import deferred
from searchlab.run.execution._ray_actor import LOOPBACK, local_ray_environment

__all__ = ["start_local", "stop_local"]

_WATCHDOG: list[Any] = []  # the watchdog of the cluster this process started (at most one)


def start_local(num_cpus: int, resources: dict[str, float] | None = None,
                object_store_memory: int = 256 * 1024**2, log_to_driver: bool = True) -> None:
    """Start a new local Ray cluster for this process (module docstring); Ray must not be initialised yet."""
    local_ray_environment()  # loopback-only services, token authentication (before Ray reads the environment)
    import ray

    from searchlab.run.execution._watchdog import Watchdog

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not _WATCHDOG:
        _WATCHDOG.append(Watchdog())  # before ray.init: it notes every process Ray starts from now on
    # address="local": a new instance even where `ray start` left a cluster on this machine (a bare ray.init()
    # would join it and refuse num_cpus); a signal during ray.init waits until it returns (no Ray SIGTERM handler)
    with deferred(no_ray_sigterm_handler), _no_dashboard():
        ray.init(address="local", num_cpus=num_cpus, resources=resources or None,
                 object_store_memory=object_store_memory, _node_ip_address=LOOPBACK, include_dashboard=False,
                 logging_level=logging.WARNING, log_to_driver=log_to_driver)


@contextlib.contextmanager
def _no_dashboard() -> Iterator[None]:
    """No dashboard process: Ray starts its API server even with ``include_dashboard=False``
    (:func:`searchlab.core.ray_private.no_api_server`)."""
    from searchlab.core.ray_private import no_api_server

    undo = no_api_server()
    try:
        yield
    finally:
        undo()


def stop_local() -> None:
    """Shut down the cluster :func:`start_local` started and reap every process it left."""
    import ray

    try:
        ray.shutdown()
    finally:
        while _WATCHDOG:
            _WATCHDOG.pop().close()
