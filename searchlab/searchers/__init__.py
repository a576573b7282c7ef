"""Searchers: one algorithm per private module, re-exported here.

``SCHEMAS`` maps each searcher's public name (``searcher=NAME``) to its structured
config dataclass; ``conf/searcher/NAME.yaml`` extends that schema.
"""

from searchlab.searchers._base import Proposal, ProposalLike, Searcher
from searchlab.searchers._exhaustive import ExhaustiveConfig, ExhaustiveSearcher
from searchlab.searchers._random import RandomConfig, RandomSearcher

SCHEMAS: dict[str, type] = {
    "random": RandomConfig,
    "exhaustive": ExhaustiveConfig,
}

__all__ = [
    "SCHEMAS",
    "ExhaustiveSearcher",
    "Proposal",
    "ProposalLike",
    "RandomSearcher",
    "Searcher",
]
