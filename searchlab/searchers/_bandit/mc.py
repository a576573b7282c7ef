"""Monte-Carlo search on a derivation DAG, the anytime baseline of paper 002 §4.2.

"Each time there is a decision to take, [MC] chooses according to a uniform distribution.
At the end of the descent, it evaluates the candidate and restarts." Branches are not laid
out uniformly, so words are *not* sampled uniformly (``searcher=random`` is uniform over
words); this is also TAG's completion step (§3.2).

``no_repeat`` (default, as TAG's §3.4 variant, for a fair comparison on deterministic or
tabled objectives): choose uniformly among arcs to vertices that still hold an unproposed
sink, so no word is evaluated twice and the search ends when the graph is exhausted.
"""

from __future__ import annotations

from typing import Any

from searchlab.core.records import Candidate, Result
from searchlab.core.spaces import Space
from searchlab.searchers._bandit.walker import DagSearcher
from searchlab.searchers._base import Proposal
from searchlab.searchers._schema import searcher_config
from searchlab.searchers._tunable import Annotated, Tunable


class McSearcher(DagSearcher):
    name = "mc"

    def __init__(self, space: Space, *, no_repeat: Annotated[bool, Tunable(choices=(True, False))] = True,
                 arcs: str = "all", **kwargs: Any) -> None:
        super().__init__(space, no_repeat=no_repeat, arcs=arcs, **kwargs)

    def _next(self) -> Proposal | None:
        found = self.walker.complete(self.graph.root, self.rng, self.no_repeat)
        if found is None:
            return None
        path, sink = found
        self.walker.proposed.add(sink)
        return Proposal(self.graph.word_config(sink), {self.name: {"path": path}})

    def _tell(self, candidate: Candidate, result: Result) -> None:
        if not result.measurement.is_subproblem:
            self.walker.proposed.add(self.graph.word_of(candidate.proposal))


# no_repeat: never propose a word twice (uniform among unexhausted arcs)
# arcs: all: every derivation order (paper's DAG); canonical: leftmost derivations only
McConfig = searcher_config(McSearcher)
