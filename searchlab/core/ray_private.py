"""Every private Ray API searchlab uses, in one place (issue 36, item 7).

Ray's public API has no way to do these, so each is a private name that a Ray release may move. They live here so
that one test (tests/integrations/test_ray_private.py) checks them all against the installed Ray, and that Ray
satisfies the range pyproject.toml states; anything else in searchlab uses Ray's public API only. Ray is
imported inside each function.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

# The process-wide GCS probe (searchlab.run.execution._join): Ray's own GCS client, run in a fresh process
GCS_PROBE = """
import sys
from ray._raylet import GcsClient
try:
    GcsClient(address=sys.argv[1], cluster_id=sys.argv[2]).internal_kv_get(b"searchlab-auth-probe", None, timeout=20)
except Exception as exc:
    print("REFUSED" if "auth" in (type(exc).__name__ + str(exc)).lower() else f"ERROR {type(exc).__name__}")
else:
    print("ANSWERED")
"""


def reload_config() -> None:
    """Make an already imported Ray re-read its ``RAY_*`` settings (as Ray's own ``_enable_token_auth`` does)."""
    import importlib

    config: Any = importlib.import_module("ray._raylet").Config  # untyped in Ray's stubs
    config.initialize("")


def set_cluster_mode_from_environment() -> None:
    """Ray's single-machine mode from ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` (read by Ray at import)."""
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0") not in ("0", "false", "False")


def cluster_id() -> str:
    """The connected cluster's id, as Ray's GCS client wants it."""
    import ray

    node: Any = ray._private.worker.global_worker.node
    return str(node.cluster_id.hex())


def in_worker(context: Any) -> bool:
    """Whether a runtime context belongs to a Ray worker process (a task or an actor), not a driver."""
    import ray

    return bool(context.worker.mode == ray._private.worker.WORKER_MODE)


def no_ray_sigterm_handler() -> Callable[[], None]:
    """Keep ``ray.init`` from installing its SIGTERM handler (``sys.exit`` mid-start-up aborted the
    process: issue 37, item 6); returns the undo. searchlab.core.signals.deferred holds the signal."""
    import ray._private.utils as utils

    original = utils.set_sigterm_handler
    utils.set_sigterm_handler = lambda handler: None

    def undo() -> None:
        utils.set_sigterm_handler = original

    return undo


def no_api_server() -> Callable[[], None]:
    """Keep ``ray.init`` from starting the dashboard's API server (``dashboard/dashboard.py``), which Ray 2.60 starts
    on the head even with ``include_dashboard=False`` (only its usage-stats module then; issue 51: "a dashboard
    process runs"). searchlab uses neither the dashboard, its job API nor usage stats. Returns the undo."""
    from ray._private import node

    original = node.Node.start_api_server

    def skip(self: Any, *, include_dashboard: Any, raise_on_failure: Any) -> None:
        self._webui_url = None

    setattr(node.Node, "start_api_server", skip)  # noqa: B010 (a method, replaced while ray.init runs)

    def undo() -> None:
        setattr(node.Node, "start_api_server", original)  # noqa: B010

    return undo
