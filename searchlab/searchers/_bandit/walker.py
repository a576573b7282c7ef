"""Descent on a derivation DAG, shared by Monte-Carlo search and the bandits (paper 002 §3.2, §3.4).

:class:`DagWalker` keeps the dead ends and exhaustion marks and draws the uniform Monte-Carlo
completion of §3.2; :class:`DagSearcher` is the searcher base that holds the graph, the walker
and the ``no_repeat`` choice (§3.4), so that :mod:`~searchlab.searchers._bandit.mc` and
:class:`~searchlab.searchers._bandit.base.GraphBanditSearcher` declare them once.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from searchlab.core.spaces import Arc, DerivationGraph, Node, Space
from searchlab.errors import ConfigError
from searchlab.searchers._base import Proposal, ProposalLike, Searcher, drain


class DagWalker:
    """Dead ends, exhaustion marks and uniform Monte-Carlo completion on a DAG.

    ``arcs="all"`` walks every rule application (the paper's derivation graph);
    ``"canonical"`` only the space's canonical arcs (leftmost derivations: a tree).
    """

    def __init__(self, space: DerivationGraph, arcs: str = "all") -> None:
        if arcs not in ("all", "canonical"):
            raise ConfigError(f"searcher.arcs={arcs!r}: must be 'all' (every derivation order) or 'canonical'")
        self.space = space
        self.arcs = space.children if arcs == "all" else space.canonical_children
        self._canonical = arcs == "canonical"
        self.proposed: set[Node] = set()  # sinks already proposed (pending or told)
        self.dead: set[Node] = set()  # no word below (found by search; a permanent fact)
        self.exhausted: set[Node] = set()  # no unproposed word below (monotone; includes found dead ends)

    def blocked(self, node: Node, no_repeat: bool) -> bool:
        """Known to hold nothing to propose: a dead end, or (no_repeat) exhausted."""
        if node in self.dead:
            return True
        if not no_repeat:
            return False
        if node in self.proposed:
            self.exhausted.add(node)
        return node in self.exhausted

    def complete(self, node: Node, rng: Any, no_repeat: bool) -> tuple[list[str], Node] | None:
        """A sink below ``node`` by uniform random arcs (§3.2), or None if there is none.

        A backtracking walk: an arc found to lead nowhere (a dead end or, with
        ``no_repeat``, only proposed sinks) is marked and another is drawn uniformly from
        the rest, so each step is uniform among the arcs that do lead to a sink."""
        if self.space.is_word(node):
            return None if self.blocked(node, no_repeat) else ([], node)
        path: list[str] = []
        stack: list[tuple[Node, Sequence[Arc], list[int]]] = [self._frame(node)]
        while stack:
            current, arcs, left = stack[-1]
            picked: Arc | None = None
            while left and picked is None:  # uniform among the arcs not yet found blocked
                i = int(rng.integers(len(left)))
                left[i], left[-1] = left[-1], left[i]
                label, child = arcs[left.pop()]  # builds this one child only
                if not self.blocked(child, no_repeat):
                    picked = (label, child)
            if picked is None:
                (self.exhausted if no_repeat else self.dead).add(current)
                stack.pop()
                if path:
                    path.pop()
                continue
            path.append(picked[0])
            if self.space.is_word(picked[1]):
                return path, picked[1]
            stack.append(self._frame(picked[1]))
        return None

    def _frame(self, node: Node) -> tuple[Node, Sequence[Arc], list[int]]:
        arcs = self.space.lazy_children(node, self._canonical)
        return node, arcs, list(range(len(arcs)))


class _First:
    """A stand-in generator that always draws 0 (a deterministic search for any word)."""

    @staticmethod
    def integers(high: int) -> int:
        return 0


_FIRST = _First()



class DagSearcher(Searcher):
    """A searcher that descends a derivation graph to its sinks (words), one proposal at a time.

    ``unique`` is per instance: with ``no_repeat`` no word is proposed twice."""

    space_kinds = (DerivationGraph,)
    unique = False

    def __init__(self, space: Space, *, no_repeat: bool = True, arcs: str = "all", **kwargs: Any) -> None:
        super().__init__(space, **kwargs)
        assert isinstance(self.space, DerivationGraph)  # space_kinds
        self.graph: DerivationGraph = self.space
        self.no_repeat = bool(no_repeat)
        self.unique = self.no_repeat
        self.walker = DagWalker(self.graph, arcs)

    @classmethod
    def _check_space(cls, space: Space) -> str | None:
        if isinstance(space, DerivationGraph) and DagWalker(space).complete(space.root, _FIRST, False) is None:
            return f"searcher {cls.name!r}: the graph's root derives no word"
        return None

    @abstractmethod
    def _next(self) -> Proposal | None:
        """One more proposal, or None when nothing is left to propose now."""

    def _ask(self, n: int) -> Sequence[ProposalLike]:
        return drain(n, self._next)

    def _done(self) -> bool:
        return self.no_repeat and self.graph.root in self.walker.exhausted
