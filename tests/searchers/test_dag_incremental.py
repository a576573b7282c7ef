"""Incremental bookkeeping of the DAG searchers (lazy arcs, memoised ancestors) changes
nothing but their cost: checked against recomputation from scratch on the DFT grammar."""

from __future__ import annotations

import numpy as np

from searchlab.adapters.grammar import TreeGraph, dft_grammar
from searchlab.core.records import Measurement, Result
from searchlab.searchers import McSearcher, TagSearcher, UctSearcher
from searchlab.searchers._bandit.base import GraphBanditSearcher


def _dfs_ancestors(searcher: GraphBanditSearcher, node: object) -> set[object]:
    seen: set[object] = set()
    stack = list(searcher._parents.get(node, ()))
    while stack:
        a = stack.pop()
        if a not in seen:
            seen.add(a)
            stack.extend(searcher._parents[a])
    return seen


def _drive(searcher: object, steps: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    words = []
    for _ in range(steps):
        batch = searcher.ask(1)  # type: ignore[attr-defined]
        if not batch:
            break
        words.append(str(batch[0].config["word"]))
        searcher.tell(Result(batch[0], Measurement.ok(float(rng.random()))))  # type: ignore[attr-defined]
    return words


def test_memoised_ancestors_and_rewards_match_a_fresh_dfs() -> None:
    graph = TreeGraph(dft_grammar(64, 8), subwords=True)
    for cls in (TagSearcher, UctSearcher):
        searcher = cls(graph, seed=1)
        words = _drive(searcher, 250)
        assert len(set(words)) == len(words) == 250  # no_repeat
        assert any(len(p) > 1 for p in searcher._parents.values())  # the new-arc rule was exercised
        for vertex in searcher._vertices:
            ancestors = _dfs_ancestors(searcher, vertex)
            assert searcher._ancestors(vertex) == ancestors
            for a in ancestors:  # every evaluation below a vertex is among its ancestors' rewards
                assert searcher._rewards[vertex] <= searcher._rewards[a]


def test_lazy_completion_draws_valid_unrepeated_words() -> None:
    graph = TreeGraph(dft_grammar(16, 8))
    searcher = McSearcher(graph, seed=3)
    words = _drive(searcher, 600)
    assert len(words) == len(set(words)) == graph.size() == 520  # exhausts the space, each word once
    for w in words[:50]:
        graph.validate({"word": w})  # type: ignore[arg-type]
