"""Bandit-based search on a derivation DAG: the machinery TAG and UCT share (paper 002 §3).

:class:`GraphBanditSearcher` grows a subgraph Ĝ = (V̂, Ê) from the root. Each step
(Algorithm 1) *descends* from the root choosing one arc per vertex with a bandit (the
subclass's :meth:`_index`; an arc not in Ê scores +inf); it ends

- on an arc to a vertex not in V̂: the vertex and arc join Ĝ and the vertex is
  *evaluated* by a uniform Monte-Carlo completion to a sink (§3.2);
- on an arc of Ê to a sink: the sink is evaluated again;
- on an arc not in Ê to a vertex already in V̂ ("new arc", §3.3): the arc joins Ê, the
  vertices that become ancestors of it receive its rewards, and a new descent starts.

*Backpropagation*: a reward is added to the evaluated vertex and to all its ancestors in
Ĝ, once each even when several paths lead there (§3.3). Reward lists hold evaluation ids,
so a vertex never counts an evaluation twice, also when the new-arc rule reaches a vertex
that already got some of the rewards through another descendant.

Several evaluations in flight: an evaluation joins the reward lists of its vertex and
ancestors as soon as it is proposed, with no value yet. It counts as a play (n_i) but
never as a good reward (s_i) until its value arrives, so concurrent descents spread out
(a "virtual loss", as parallel UCT does) instead of all following the same arm; with one
evaluation at a time this is exactly the serial algorithm. Failures are the worst reward.

``no_repeat`` (the §3.4 remark, for deterministic objectives): never evaluate a sink
twice and never re-enter an exhausted branch: sinks already proposed, and vertices all
of whose productive arcs lead to exhausted vertices, are left out of the arms.

Resume: each candidate's ``meta`` holds the descent path, the vertex evaluated and the
new arcs added on the way; :meth:`_tell` rebuilds Ĝ from them for replayed results (the
state depends only on the set of arcs and evaluations, not on their order).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from typing import Any

from searchlab.core.records import Candidate, Result
from searchlab.core.spaces import Arc, Node, Space
from searchlab.searchers._bandit.walker import DagSearcher
from searchlab.searchers._base import Proposal


class GraphBanditSearcher(DagSearcher):
    """Base of TAG and UCT: grow Ĝ by bandit descents, Monte-Carlo evaluation, backup."""

    # Called with (vertex, its open arms) before each bandit decision of a descent: a diagnostic reads the
    # bandit's state there (:meth:`played`, :meth:`stats`, :attr:`evaluations`; bench/tag_study.py).
    on_decision: Callable[[Node, Sequence[Arc]], None] | None = None

    def __init__(self, space: Space, *, no_repeat: bool = True, arcs: str = "all", **kwargs: Any) -> None:
        super().__init__(space, no_repeat=no_repeat, arcs=arcs, **kwargs)
        root = self.graph.root
        self._vertices: set[Node] = {root}
        self._parents: dict[Node, set[Node]] = {root: set()}
        self._anc: dict[Node, frozenset[Node]] = {root: frozenset()}  # ancestors in Ĝ (memo)
        self._played: dict[Node, dict[Node, str]] = {root: {}}  # Ê: vertex -> child -> label
        self._arms_cache: dict[Node, list[Arc]] = {}
        self._rewards: dict[Node, set[int]] = {root: set()}  # R(v): evaluation ids
        self._losses: dict[Node, list[float]] = {root: []}  # known finite losses of R(v), sorted
        self._sums: dict[Node, float] = {root: 0.0}  # their sum (UCT's mean)
        self._value: dict[int, float | None] = {}  # evaluation id -> loss (None while pending)
        self._where: dict[int, Node] = {}  # evaluation id -> the vertex it valued
        self._next_eval = 0

    # -- the grown subgraph --------------------------------------------------------------
    def _ancestors(self, node: Node) -> frozenset[Node]:
        """Ancestors in Ĝ, memoised: a new vertex inherits its parent's set plus the parent;
        only the new-arc rule (an arc into a known vertex) invalidates, below that vertex."""
        known = self._anc.get(node)
        if known is not None:
            return known
        seen: set[Node] = set()
        stack = list(self._parents.get(node, ()))
        while stack:
            a = stack.pop()
            if a not in seen:
                seen.add(a)
                stack.extend(self._parents[a])
        self._anc[node] = frozenset(seen)
        return self._anc[node]

    def _forget_below(self, vertex: Node) -> None:
        stack, seen = [vertex], {vertex}
        while stack:
            v = stack.pop()
            self._anc.pop(v, None)
            fresh = [c for c in self._played.get(v, ()) if c not in seen]
            seen.update(fresh)
            stack.extend(fresh)

    def _give(self, vertex: Node, evals: set[int]) -> None:
        """Add evaluations to R(vertex), each once, with their known losses."""
        fresh = evals - self._rewards[vertex]
        self._rewards[vertex] |= fresh
        for e in fresh:
            value = self._value[e]
            if value is not None and math.isfinite(value):
                bisect.insort(self._losses[vertex], value)
                self._sums[vertex] += value

    def _add_arc(self, parent: Node, child: Node, label: str) -> None:
        if child not in self._vertices:
            self._vertices.add(child)
            self._parents[child], self._played[child] = {parent}, {}
            self._rewards[child], self._losses[child], self._sums[child] = set(), [], 0.0
            self._anc[child] = self._ancestors(parent) | {parent}
            self._played[parent][child] = label
            return  # a fresh vertex has no rewards to pass up yet
        before = self._ancestors(child) | {child}
        self._parents[child].add(parent)
        self._played[parent][child] = label
        self._forget_below(child)
        for a in self._ancestors(child) - before:  # §3.3: only the new ancestors
            self._give(a, self._rewards[child])

    def _add_eval(self, vertex: Node, value: float | None) -> int:
        eid = self._next_eval
        self._next_eval += 1
        self._value[eid], self._where[eid] = value, vertex
        for a in self._ancestors(vertex) | {vertex}:
            self._give(a, {eid})
        return eid

    def _set_value(self, eid: int, value: float) -> None:
        self._value[eid] = value
        if math.isfinite(value):
            for a in self._ancestors(self._where[eid]) | {self._where[eid]}:
                bisect.insort(self._losses[a], value)
                self._sums[a] += value
        self._observed(value)

    def _observed(self, value: float) -> None:
        """Hook: a loss arrived (UCT keeps the range for normalising)."""

    def stats(self, vertex: Node) -> tuple[int, list[float]]:
        """(n: evaluations in R(vertex), pending included; known finite losses, sorted)."""
        return len(self._rewards[vertex]), self._losses[vertex]

    def played(self, vertex: Node) -> list[Node]:
        """The children of ``vertex`` in Ê (arcs played so far)."""
        return list(self._played.get(vertex, ()))

    def arms(self, vertex: Node) -> list[Arc]:
        """The arcs open at ``vertex`` (``no_repeat`` leaves exhausted ones out)."""
        return self._arms(vertex)

    @property
    def evaluations(self) -> int:
        """Evaluations proposed so far (pending included)."""
        return self._next_eval

    # -- descent -------------------------------------------------------------------------
    def _arms(self, vertex: Node) -> list[Arc]:
        if vertex not in self._arms_cache:
            self._arms_cache[vertex] = list(self.walker.arcs(vertex))
        return [a for a in self._arms_cache[vertex] if not self.walker.blocked(a[1], self.no_repeat)]

    def _index(self, vertex: Node, arms: Sequence[Arc]) -> list[float]:
        """The bandit's score of each arm (highest is pulled); +inf for arcs not in Ê."""
        raise NotImplementedError

    def _select(self, vertex: Node, arms: Sequence[Arc]) -> Arc:
        if self.on_decision is not None:
            self.on_decision(vertex, arms)
        scores = self._index(vertex, arms)
        top = max(scores)
        ties = [i for i, s in enumerate(scores) if s == top]
        return arms[ties[int(self.rng.integers(len(ties)))] if len(ties) > 1 else ties[0]]

    def _next(self) -> Proposal | None:
        root, new_arcs = self.graph.root, list[list[str]]()
        while True:
            u, path = root, []
            while True:
                arms = self._arms(u)
                if not arms:
                    (self.walker.exhausted if self.no_repeat else self.walker.dead).add(u)
                    if u == root:
                        return None
                    break
                label, c = self._select(u, arms)
                path.append(label)
                if c in self._played[u]:
                    if self.graph.is_word(c):
                        return self._propose(c, c, path, [], new_arcs)
                    u = c
                    continue
                if c in self._vertices:  # a new arc to a known vertex: no evaluation
                    self._add_arc(u, c, label)
                    new_arcs.append([self.graph.key(u), label])
                    break
                completion = self.walker.complete(c, self.rng, self.no_repeat)
                if completion is None:
                    break
                self._add_arc(u, c, label)
                return self._propose(c, completion[1], path, completion[0], new_arcs)

    def _propose(self, vertex: Node, sink: Node, path: list[str], completion: list[str],
                 new_arcs: list[list[str]]) -> Proposal:
        eid = self._add_eval(vertex, None)
        self.walker.proposed.add(sink)
        meta = {"eval": eid, "path": path, "vertex": self.graph.key(vertex), "completion": completion,
                "arcs": new_arcs}
        return Proposal(self.graph.word_config(sink), {self.name: meta})

    # -- results ---------------------------------------------------------------------------
    def _tell(self, candidate: Candidate, result: Result) -> None:
        if result.measurement.is_subproblem:
            return
        meta = candidate.meta.get(self.name) or {}
        value = self.loss(result)
        eid = meta.get("eval")
        if isinstance(eid, int) and self._value.get(eid, 0.0) is None and self._where.get(eid) is not None:
            self._set_value(eid, value)  # one of ours, in flight
            return
        self.walker.proposed.add(self.graph.word_of(candidate.proposal))
        if meta:
            self._rebuild(meta, value)

    def _rebuild(self, meta: Any, value: float) -> None:
        """Replay a recorded step: its new arcs, its descent path, its evaluation."""
        for parent_key, label in meta.get("arcs", ()):
            parent = self.graph.node(parent_key)
            if parent in self._vertices:
                self._add_arc(parent, self.graph.follow([label], parent), label)
        u = self.graph.root
        for label in meta.get("path", ()):
            c = self.graph.follow([label], u)
            if c not in self._played[u]:
                self._add_arc(u, c, label)
            u = c
        self._add_eval(u, value)
        self._observed(value)
