"""Derivation DAGs (paper 002 §2): nodes are sentential forms, arcs rule applications.

Identical forms reached by different derivation orders are *one* node, so the graph is a
DAG, not a tree. A configuration names a sink (a word) by its key: ``{"word": key}``.

Counting and uniform sampling need each sink reached exactly once; subclasses give a
*canonical* subset of arcs (e.g. leftmost derivations) that forms a spanning tree of the
sinks. Then ``count_sinks`` is an exact memoised sum, never an enumeration.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from searchlab.core.records import Config
from searchlab.core.spaces._base import Space
from searchlab.errors import ConfigError, InvalidConfigError

Node = Hashable
Arc = tuple[str, Node]  # (rule label, child)


def weighted_index(rng: np.random.Generator, weights: Sequence[int]) -> int:
    """An index drawn with probability weight / sum, for weights of any size (issue 47, item 12: counts of words
    past 2**1024 raised OverflowError as floats). Sums exact in a float take the float draw, as before (the same
    seed gives the same words); larger ones draw an exact Python integer below the sum."""
    total = sum(weights)
    if total < 2**53:
        p = np.array(weights, dtype=float)
        return int(rng.choice(len(p), p=p / p.sum()))
    bits = total.bit_length()
    while True:  # rejection: uniform in [0, 2**bits), kept if below the sum (probability over 1/2)
        r = int.from_bytes(rng.bytes((bits + 7) // 8), "little") >> (-bits % 8)
        if r < total:
            break
    for i, w in enumerate(weights):
        if r < w:
            return i
        r -= w
    raise AssertionError("unreachable: r < sum(weights)")


class DerivationGraph(Space):
    """An acyclic graph whose sinks are the words of a language."""

    kind = "dag"

    def __init__(self) -> None:
        self._count_memo: dict[Node, int] = {}

    @property
    @abstractmethod
    def root(self) -> Node:
        """The start symbol's node."""

    @abstractmethod
    def children(self, node: Node) -> Sequence[Arc]:
        """Every rule application out of ``node`` (all derivation orders)."""

    @abstractmethod
    def is_word(self, node: Node) -> bool:
        """True for a sink that is a word (a node without children that is not a dead end)."""

    @abstractmethod
    def key(self, node: Node) -> str:
        """A canonical string naming ``node``."""

    @abstractmethod
    def node(self, key: str) -> Node:
        """Inverse of :meth:`key`; raises :class:`InvalidConfigError` for an unknown key."""

    def canonical_children(self, node: Node) -> Sequence[Arc]:
        """Arcs of a spanning tree that reaches every sink once (default: all arcs)."""
        return self.children(node)

    def lazy_children(self, node: Node, canonical: bool = False) -> Sequence[Arc]:
        """:meth:`children` (or :meth:`canonical_children`) as a sequence whose children may
        be built only when indexed (a random descent needs one); default: the lists."""
        return self.canonical_children(node) if canonical else self.children(node)

    # -- derived operations ------------------------------------------------------------
    def count_sinks(self, node: Node | None = None) -> int:
        """Exact number of distinct words below ``node`` (memoised over canonical arcs)."""
        start = self.root if node is None else node
        stack = [start]
        memo = self._count_memo
        while stack:
            current = stack[-1]
            if current in memo:
                stack.pop()
                continue
            if self.is_word(current):
                memo[current] = 1
                stack.pop()
                continue
            kids = [child for _, child in self.canonical_children(current)]
            missing = [k for k in kids if k not in memo]
            if missing:
                stack.extend(missing)
                continue
            memo[current] = sum(memo[k] for k in kids)
            stack.pop()
        return memo[start]

    def word_config(self, node: Node) -> Config:
        return Config(word=self.key(node))

    def word_of(self, config: Config) -> Node:
        try:
            key = config["word"]
        except KeyError:
            raise InvalidConfigError(f"a derivation-graph config needs a 'word', got {dict(config)}") from None
        return self.node(str(key))

    def validate(self, config: Config) -> None:
        if not self.is_word(self.word_of(config)):
            raise InvalidConfigError(f"{config['word']!r} is not a word (sink) of this graph")

    def uniform_word(self, rng: np.random.Generator, node: Node | None = None) -> tuple[list[str], Node]:
        """A word uniformly at random among those below ``node``, and its canonical path."""
        current = self.root if node is None else node
        if self.count_sinks(current) == 0:
            raise ConfigError(f"node {self.key(current)!r} derives no word")
        path: list[str] = []
        while not self.is_word(current):
            arcs = [(label, child) for label, child in self.canonical_children(current) if self.count_sinks(child)]
            label, current = arcs[weighted_index(rng, [self.count_sinks(child) for _, child in arcs])]
            path.append(label)
        return path, current

    def random_descent(self, rng: np.random.Generator, node: Node | None = None) -> tuple[list[str], Node]:
        """Uniform choice among productive arcs at each step (Monte-Carlo completion, §3)."""
        current = self.root if node is None else node
        path: list[str] = []
        while not self.is_word(current):
            arcs = [(label, child) for label, child in self.children(current) if self.count_sinks(child)]
            if not arcs:
                raise ConfigError(f"node {self.key(current)!r} derives no word")
            label, current = arcs[int(rng.integers(len(arcs)))]
            path.append(label)
        return path, current

    def sample(self, rng: np.random.Generator) -> Config:
        return self.word_config(self.uniform_word(rng)[1])

    def iter_words(self, node: Node | None = None) -> Iterator[Node]:
        """Every word once, in canonical depth-first order."""
        stack = [self.root if node is None else node]
        while stack:
            current = stack.pop()
            if self.is_word(current):
                yield current
                continue
            stack.extend(child for _, child in reversed(self.canonical_children(current)))

    def enumerate(self) -> Iterator[Config]:
        return (self.word_config(w) for w in self.iter_words())

    def size(self) -> int:
        return self.count_sinks()

    def follow(self, path: Sequence[str], node: Node | None = None) -> Node:
        """The node reached from ``node`` (default root) by the arc labels in ``path``."""
        current = self.root if node is None else node
        for label in path:
            arcs = dict(self.children(current))
            if label not in arcs:
                raise InvalidConfigError(f"no arc {label!r} out of {self.key(current)!r}")
            current = arcs[label]
        return current

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "size": self.size(), "root": self.key(self.root)}


class ExplicitDAG(DerivationGraph):
    """A DAG given as adjacency lists of string nodes (tests and small hand-made graphs).

    Canonical arcs: the first parent in depth-first order owns a shared child. That
    spanning tree is the root's, so below any other node words are counted, sampled and
    listed from the reachable sets directly (the graphs are small).
    """

    def __init__(self, root: str, arcs: Mapping[str, Sequence[tuple[str, str]]], words: Sequence[str]) -> None:
        super().__init__()
        self._root = root
        self._arcs = {n: [(str(lbl), str(c)) for lbl, c in kids] for n, kids in arcs.items()}
        self._words = frozenset(words)
        nodes = {root} | set(self._arcs) | {c for kids in self._arcs.values() for _, c in kids}
        bad = self._words & {n for n, kids in self._arcs.items() if kids}
        if bad:
            raise ConfigError(f"words must be sinks; these have arcs: {sorted(bad)}")
        self._nodes = frozenset(nodes)
        self._canonical = self._spanning_tree()
        self._reach: dict[str, frozenset[str]] = {}

    def _spanning_tree(self) -> dict[str, list[tuple[str, str]]]:
        seen, stack = {self._root}, [self._root]
        tree: dict[str, list[tuple[str, str]]] = {}
        while stack:
            node = stack.pop()
            tree[node] = []
            for label, child in self._arcs.get(node, []):
                if child in seen:
                    continue
                seen.add(child)
                tree[node].append((label, child))
                stack.append(child)
        return tree

    def _reachable_words(self, node: str) -> frozenset[str]:
        memo = self._reach
        if node not in memo:
            words = {node} if node in self._words else set()
            for _, child in self._arcs.get(node, []):
                words |= self._reachable_words(child)
            memo[node] = frozenset(words)
        return memo[node]

    def count_sinks(self, node: Node | None = None) -> int:
        return len(self._reachable_words(self._root if node is None else str(node)))

    def uniform_word(self, rng: np.random.Generator, node: Node | None = None) -> tuple[list[str], Node]:
        start = self._root if node is None else str(node)
        words = sorted(self._reachable_words(start))
        if not words:
            raise ConfigError(f"node {start!r} derives no word")
        target = words[int(rng.integers(len(words)))]
        path: list[str] = []
        current = start
        while current != target:  # any arc that still leads to the target
            label, current = next((lbl, c) for lbl, c in self._arcs[current] if target in self._reachable_words(c))
            path.append(label)
        return path, target

    def iter_words(self, node: Node | None = None) -> Iterator[Node]:
        return iter(sorted(self._reachable_words(self._root if node is None else str(node))))

    @property
    def root(self) -> str:
        return self._root

    def children(self, node: Node) -> Sequence[Arc]:
        return self._arcs.get(str(node), [])

    def canonical_children(self, node: Node) -> Sequence[Arc]:
        return self._canonical.get(str(node), [])

    def is_word(self, node: Node) -> bool:
        return node in self._words

    def key(self, node: Node) -> str:
        return str(node)

    def node(self, key: str) -> str:
        if key not in self._nodes:
            raise InvalidConfigError(f"unknown node {key!r}")
        return key
