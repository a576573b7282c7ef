"""Joining a Ray cluster across machines, with Ray's token authentication on (issue 24, item 4).

Why a check of our own: a Ray cluster started without ``RAY_AUTH_MODE=token`` answers
anyone who can reach its ports, and whoever can reach them can run code on every node
(https://docs.ray.io/en/latest/ray-security/token-auth.html). A client that has token mode
on still connects to such a cluster without complaint -- the token it sends is simply
ignored. So after joining we make one request to the cluster's GCS *without* a token (Ray's
own client, in a fresh process with auth off): a cluster with authentication on refuses it
(``InvalidAuthToken``), one without answers, and
then the join is refused unless the user said explicitly, with Ray's own switch, that they
accept it: ``RAY_AUTH_MODE=disabled`` in the driver's environment (the one declaration of
that choice; nothing in searchlab's configs overrides it).

Joining the way Ray documents it: the driver runs with ``RAY_AUTH_MODE=token`` (set here
unless the user set it) and finds the cluster's token in ``RAY_AUTH_TOKEN``,
``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token`` -- the same token every node was started
with (docs/cluster.md).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from typing import Any

from searchlab.core.ray_private import GCS_PROBE as _PROBE
from searchlab.errors import ConfigError

AUTH_MODES = ("token", "disabled")


def auth_mode() -> str:
    """``RAY_AUTH_MODE`` as searchlab will use it; a value Ray would not read as one of its
    modes is refused (Ray treats an unknown value as 'disabled': a typo would turn auth off)."""
    mode = os.environ.get("RAY_AUTH_MODE", "token")
    if mode.lower() not in AUTH_MODES:
        raise ConfigError(f"RAY_AUTH_MODE={mode!r}: must be one of {list(AUTH_MODES)} (token keeps Ray's "
                          f"authentication on; disabled joins a cluster without it)")
    return mode.lower()


def token_environment() -> None:
    """Token mode for this process and the Ray processes it starts, unless the user chose."""
    imported = "ray._raylet" in sys.modules
    if "RAY_AUTH_MODE" in os.environ:
        auth_mode()  # refuse a typo before Ray reads it
        return
    os.environ["RAY_AUTH_MODE"] = "token"
    if imported:  # Ray read the variable at import: refresh it as Ray's own _enable_token_auth does
        from searchlab.core.ray_private import reload_config

        reload_config()




def answers_without_token(gcs_address: str, cluster_id: str) -> bool:
    """True if the GCS at ``host:port`` answers a request that carries no token.

    Made by Ray's own GCS client in a fresh process with authentication off and no token
    anywhere it looks (``RAY_AUTH_MODE=disabled``, no ``RAY_AUTH_TOKEN*``, an empty HOME):
    this process's client is in token mode and would send the token.
    """
    import subprocess
    import tempfile

    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH_TOKEN")}
    with tempfile.TemporaryDirectory() as home:
        env.update(RAY_AUTH_MODE="disabled", HOME=home)
        done = subprocess.run([sys.executable, "-c", _PROBE, gcs_address, cluster_id], env=env, capture_output=True,
                              text=True, timeout=120)
    if "ANSWERED" in done.stdout:
        return True
    if "REFUSED" in done.stdout or "InvalidAuthToken" in done.stderr or "Unauthenticated" in done.stderr:
        return False
    raise ConfigError(f"the Ray GCS at {gcs_address} did not answer an authentication probe "
                      f"({(done.stdout + done.stderr).strip().splitlines()[-1:] or 'no answer'})")


def join_cluster(address: str, what: str) -> None:
    """``ray.init(address=...)`` with token auth, refusing a cluster that has auth off.

    ``what`` names the option the address came from (``executor.address``, ``study.ray_address``),
    so every refusal is one line naming the value and the rule.
    """
    token_environment()
    import ray

    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": True}
    from searchlab.core.ray_private import no_ray_sigterm_handler
    from searchlab.core.signals import deferred

    try:
        with deferred(no_ray_sigterm_handler):
            ray.init(address=address, **kwargs)
    except ConnectionError as exc:
        raise ConfigError(f"{what}={address}: no Ray cluster answers there ({str(exc).splitlines()[0][:200]})") from None
    except Exception as exc:  # AuthenticationError and friends: Ray's message is several sentences
        if "auth" not in type(exc).__name__.lower() and "token" not in str(exc).lower():
            raise
        raise ConfigError(f"{what}={address}: the cluster refused this client's token; give the driver the token "
                          f"the cluster was started with (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token; "
                          f"docs/cluster.md)") from None
    if auth_mode() == "disabled":
        print(f"searchlab: warning: {what}={address}: joined with RAY_AUTH_MODE=disabled (no token)",
              file=sys.stderr, flush=True)
        return
    gcs = ray.get_runtime_context().gcs_address
    from searchlab.core.ray_private import cluster_id as private_cluster_id

    cluster_id = private_cluster_id()
    if answers_without_token(gcs, cluster_id):
        ray.shutdown()
        raise ConfigError(f"{what}={address}: that Ray cluster answers clients without a token (it was started "
                          f"without RAY_AUTH_MODE=token), so anyone who reaches it can run code on it; restart it with "
                          f"token authentication, or set RAY_AUTH_MODE=disabled here to join it anyway")


def check_reachable(address: str, what: str, timeout_s: float) -> None:
    """Refuse, within ``timeout_s``, an address where nothing accepts a connection (issue 37, item 5:
    Ray's own client retried an unreachable address for more than 400 s). ``auto`` (a cluster started
    on this machine, found by Ray) and ``ray://`` client addresses are left to Ray."""
    if address in ("auto", "local") or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"{what}={address!r}: must be host:port (or auto)")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return
    except OSError as exc:
        raise ConfigError(f"{what}={address}: no Ray cluster answers there within executor.connect_timeout_s="
                          f"{timeout_s:g} ({exc.strerror or type(exc).__name__}); start it (docs/cluster.md) or fix "
                          f"the address") from None


def head_reachable(gcs_address: str, timeout_s: float = 2.0) -> bool:
    """Whether the cluster's GCS (on the head node) still accepts a TCP connection."""
    host, _, port = gcs_address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return True
    except OSError:
        return False
