"""Example searchlab plugin: a coordinate-descent searcher and a sphere problem on knobs.

Both are registered through entry points in this package's pyproject.toml; searchlab
imports them only because they are registered there (docs/registry.md in searchlab).
"""

from searchlab_example_plugin.problem import SphereKnobs
from searchlab_example_plugin.searcher import CoordinateDescentSearcher

__all__ = ["CoordinateDescentSearcher", "SphereKnobs"]
