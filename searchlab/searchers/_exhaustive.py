"""Exhaustive search: every member once, in the space's enumeration order.

It enumerates knob products (minus known-infeasible ones), DAG sinks, and threshold
plateaus (paper 003 Alg. 4 on plateau representatives). Its runs become replayable tables.

On a threshold tree, ``tree_aware`` (the default) enumerates each tree's distinct
behaviours on the training datasets — thresholds a behaviour never reaches are not varied
— one tree at a time with the others all-false, then evaluates the per-tree bests
together (Alg. 1's tree-by-tree tuning; run times of separate constructs add up). That
makes the exhaustive reference feasible where the plateau product is not.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from searchlab.core.records import Candidate, Config, Result
from searchlab.core.spaces import Space, ThresholdTree
from searchlab.searchers._base import Proposal, ProposalLike, Searcher
from searchlab.searchers._schema import searcher_config


class ExhaustiveSearcher(Searcher):
    name = "exhaustive"
    space_kinds = (Space,)
    max_size_default = 1_000_000

    def __init__(self, space: Space, *, max_size: int = 1_000_000, shuffle: bool = False, tree_aware: bool = True,
                 **kwargs: Any) -> None:
        self._trees = None
        if tree_aware and isinstance(space, ThresholdTree):
            from searchlab.searchers._threshold.common import TreeWiseEnumeration

            self._trees = TreeWiseEnumeration(space)
        size = self._trees.size if self._trees is not None else space.size()
        if size > max_size:
            from searchlab.errors import IncompatibleError

            raise IncompatibleError(
                f"searcher 'exhaustive': the space has {members(size)}, more than max_size={max_size}"
            )
        super().__init__(space, **kwargs)
        self._iter: Iterator[Config] = iter(self._order(shuffle))
        self._exhausted = False
        self._combined = False

    def _order(self, shuffle: bool) -> Iterator[Config] | list[Config]:
        if not shuffle and self._trees is None:
            return self.space.enumerate()
        members = list(self._trees.configs() if self._trees is not None else self.space.enumerate())
        if shuffle:
            self.rng.shuffle(members)
        return members

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        out: list[Config] = []
        for config in self._iter:
            if not self.seen(config):
                out.append(config)
                if len(out) == n:
                    break
        else:
            if self._trees is not None and not self._combined:
                return out or self._combine()
            self._exhausted = True
        return out

    def _combine(self) -> list[ProposalLike]:
        """The per-tree bests together, once every enumerated result is in."""
        if self.pending:
            return []
        self._combined = self._exhausted = True
        config = self._trees.combined() if self._trees is not None else None
        if config is None or self.seen(config):
            return []
        return [Proposal(config, {"combined": True})]

    def _tell(self, candidate: Candidate, result: Result) -> None:
        if self._trees is not None:
            self._trees.observe(candidate.proposal, self.loss(result))

    def _done(self) -> bool:
        return self._exhausted


# shuffle: seeded random order instead of enumeration order
# tree_aware: threshold trees: distinct behaviours, tree by tree (see above)
ExhaustiveConfig = searcher_config(ExhaustiveSearcher)


def members(size: int) -> str:
    """A space's size in words that stay short: a grammar's can have thousands of digits (issue 47, item 12: a
    1,542-character refusal), and a saturated count is a lower bound."""
    import math

    if size < 10**12:
        return f"{size} members"
    return f"at least 10^{int((size.bit_length() - 1) * math.log10(2))} members"
