"""The Ray cluster helpers that studies and other faces use (issue 45, item 4: no private names of ``run/``).

A study's replay tasks start or join the same loopback, token-authenticated Ray cluster a run's executor
does (docs/security.md, docs/cluster.md); these are the executor's own functions, named publicly here so
that nothing outside ``searchlab.run`` imports its private modules.
"""

from searchlab.run.execution._base import current_node
from searchlab.run.execution._join import head_reachable, join_cluster
from searchlab.run.execution._ray_actor import LOOPBACK, local_ray_environment

__all__ = ["LOOPBACK", "current_node", "head_reachable", "join_cluster", "local_ray_environment"]
