"""The Ray cluster helpers that studies and other faces use (issue 45, item 4: no private names of ``run/``).

:func:`start_local_ray` is the one start of a local cluster (issue 51): the executor, a study's replays and
``searchlab reproduce`` all start Ray through it.

A study's replay tasks start or join the same loopback, token-authenticated Ray cluster a run's executor
does (docs/security.md, docs/cluster.md); these are the executor's own functions, named publicly here so
that nothing outside ``searchlab.run`` imports its private modules.
"""

from searchlab.run.execution._base import current_node
from searchlab.run.execution._join import head_reachable, join_cluster
from searchlab.run.execution._ray_actor import LOOPBACK, local_ray_environment


def start_local_ray(num_cpus: int, object_store_memory: int = 128 * 1024**2) -> None:
    """The one local Ray start (loopback only, no dashboard, every process reaped when this process ends:
    ``searchlab.run.execution._local.start_local``); Ray is imported only when this is called."""
    from searchlab.run.execution._local import start_local

    start_local(num_cpus, object_store_memory=object_store_memory)


def stop_local_ray() -> None:
    """Shut down what :func:`start_local_ray` started and reap every process it left."""
    from searchlab.run.execution._local import stop_local

    stop_local()


__all__ = ["LOOPBACK", "current_node", "head_reachable", "join_cluster", "local_ray_environment", "start_local_ray",
           "stop_local_ray"]
