"""The derivation DAG of a context-free grammar whose forms keep their derivation tree.

A node is a partial derivation tree: a leaf is a symbol (an *open* leaf when it is a
nonterminal), an expanded node is ``(symbol, children)``. An arc rewrites one open leaf
with one rule, anywhere in the tree, so all derivation orders are arcs and orders that
apply the same rules meet in one node (paper 002 §2, Figure 1). Sinks are complete trees:
words, e.g. DFT ruletrees (§4.3). Keys read ``A(x,B(y))``.

Each word has exactly one leftmost derivation, so ``canonical_children`` (rewrite the
leftmost open leaf) is a spanning tree of the sinks; ``count_sinks`` is overridden by
the product over open leaves of the number of words each symbol derives, which is exact
from any node and never enumerates.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterator, Sequence
from typing import Union

import numpy as np

from searchlab.adapters.grammar._grammar import COUNT_CAP, Grammar, check_word_size, log2_word_counts, word_counts
from searchlab.core.spaces import Arc, DerivationGraph, Node
from searchlab.core.spaces._dag import weighted_index
from searchlab.errors import ConfigError, InvalidConfigError

Tree = Union[str, tuple[str, tuple["Tree", ...]]]
Path = tuple[int, ...]
_TOKEN = re.compile(r"\s*([(),]|[^\s(),]+)")


def symbol_of(tree: Tree) -> str:
    return tree if isinstance(tree, str) else tree[0]


class TreeGraph(DerivationGraph):
    """Derivation DAG of a tree-mode :class:`Grammar`.

    ``subwords=True`` also accepts complete trees rooted at any nonterminal (sub-problem
    words for dynamic programming, e.g. a DFT_m ruletree inside a DFT_n problem).
    """

    def __init__(self, grammar: Grammar, *, subwords: bool = False) -> None:
        super().__init__()
        if grammar.mode != "tree":
            raise ConfigError(f"TreeGraph needs a tree-mode grammar, got mode={grammar.mode!r}")
        self.grammar = grammar
        self.subwords = subwords
        self._words = word_counts(grammar)
        check_word_size(grammar)
        self._log2: dict[str, float] | None = None  # log2 word counts, where exact ones saturate
        self._labels = {a: {self._label(a, rhs): rhs for rhs in grammar.alternatives(a)} for a in grammar.nonterminals}
        self._rules = {a: list(labels.items()) for a, labels in self._labels.items()}
        self._leaves: dict[Node, list[tuple[Path, str]]] = {}  # open leaves of recently built forms
        self._built: dict[str, Tree] = {}  # key -> form, for forms this graph built and named

    @staticmethod
    def _label(symbol: str, rhs: tuple[str, ...]) -> str:
        return f"{symbol}->{' '.join(rhs) or 'ε'}"

    # -- the DerivationGraph protocol ----------------------------------------------------
    @property
    def root(self) -> str:
        return self.grammar.start

    def open_leaves(self, node: Node) -> list[tuple[Path, str]]:
        """Open (nonterminal) leaves, left to right, with their child-index paths (memoised:
        a form built by :meth:`lazy_children` gets its leaves from its parent's)."""
        known = self._leaves.get(node)
        if known is not None:
            return known
        out: list[tuple[Path, str]] = []
        stack: list[tuple[Path, Tree]] = [((), node)]  # type: ignore[list-item]
        while stack:
            path, tree = stack.pop()
            if isinstance(tree, str):
                if self.grammar.is_nonterminal(tree):
                    out.append((path, tree))
                continue
            stack.extend(((*path, i), kid) for i, kid in reversed(list(enumerate(tree[1]))))
        self._remember(node, out)
        return out

    def _remember(self, node: Node, leaves: list[tuple[Path, str]]) -> None:
        if len(self._leaves) > 200_000:  # bounded: a long search builds millions of forms
            self._leaves.clear()
        self._leaves[node] = leaves

    def _expand(self, node: Tree, path: Path, symbol: str, rhs: tuple[str, ...]) -> Tree:
        if not path:
            return (symbol, rhs)
        assert not isinstance(node, str)
        sym, kids = node
        i = path[0]
        return (sym, (*kids[:i], self._expand(kids[i], path[1:], symbol, rhs), *kids[i + 1:]))

    def _arcs(self, node: Node, leaves: Sequence[tuple[Path, str]]) -> list[Arc]:
        out: list[Arc] = []
        for path, symbol in leaves:
            where = ".".join(map(str, path))
            for label, rhs in self._labels[symbol].items():
                out.append((f"{where}:{label}", self._expand(node, path, symbol, rhs)))  # type: ignore[arg-type]
        return out

    def children(self, node: Node) -> Sequence[Arc]:
        return self._arcs(node, self.open_leaves(node))

    def canonical_children(self, node: Node) -> Sequence[Arc]:
        return self._arcs(node, self.open_leaves(node)[:1])

    def lazy_children(self, node: Node, canonical: bool = False) -> Sequence[Arc]:
        """The arcs of :meth:`children` (or :meth:`canonical_children`) in the same order,
        each child built only when indexed: a random descent builds one form per step
        instead of every rewrite of every open leaf."""
        leaves = self.open_leaves(node)
        return _LazyArcs(self, node, leaves[:1] if canonical else leaves)

    def is_word(self, node: Node) -> bool:
        return not self.open_leaves(node)

    def count_sinks(self, node: Node | None = None) -> int:
        count = 1
        for _, symbol in self.open_leaves(self.root if node is None else node):
            count = min(count * self._words[symbol], COUNT_CAP)  # saturated: at least COUNT_CAP words
        return count

    def uniform_word(self, rng: np.random.Generator, node: Node | None = None) -> tuple[list[str], Node]:
        """A word uniformly at random below ``node``: rewrite the leftmost open leaf by a rule
        drawn with weight = the number of words it leads to (a product of word counts), and
        build only the child drawn (same distribution as the base class, far less work)."""
        current = self.root if node is None else node
        if self.count_sinks(current) == 0:
            raise ConfigError(f"node {self.key(current)!r} derives no word")
        path: list[str] = []
        while True:
            leaves = self.open_leaves(current)
            if not leaves:
                return path, current
            rules = self._rules[leaves[0][1]]
            weights = [math.prod(self._words[s] for s in rhs) for _, rhs in rules]
            i = self._saturated(rng, rules) if max(weights) >= COUNT_CAP else weighted_index(rng, weights)
            label, current = self.lazy_children(current, canonical=True)[i]
            path.append(label)

    def _saturated(self, rng: np.random.Generator, rules: Sequence[tuple[str, tuple[str, ...]]]) -> int:
        """A rule drawn by log2 word counts, where exact counts saturated (:data:`COUNT_CAP`): the weights are
        2**(log2 - the largest), exact to float precision; those past float's range share the draw."""
        if self._log2 is None:
            self._log2 = log2_word_counts(self.grammar)
        logs = [sum(self._log2[s] for s in rhs) for _, rhs in rules]
        top = max(logs)
        p = np.array([(1.0 if x == top else 0.0) if math.isinf(top) else 2.0 ** (x - top) for x in logs])
        return int(rng.choice(len(p), p=p / p.sum()))

    def key(self, node: Node) -> str:
        """``A(x,B(y))``; remembered (bounded), so :meth:`node` of a key just made is a lookup."""
        key = _key(node)  # type: ignore[arg-type]
        if len(self._built) > 100_000:
            self._built.clear()
        self._built[key] = node  # type: ignore[assignment]
        return key

    def node(self, key: str) -> Tree:
        known = self._built.get(key)
        tree = self.parse(key) if known is None else known
        top = symbol_of(tree)
        if top != self.root and not (self.subwords and self.grammar.is_nonterminal(top)):
            allowed = "a nonterminal" if self.subwords else f"the start symbol {self.root!r}"
            raise InvalidConfigError(f"{key!r} is not a form of this grammar: its root must be {allowed}")
        if known is None:  # a form this graph built is made of its rules already
            self._check(tree, key)
        return tree

    # -- parsing and checking -----------------------------------------------------------
    @staticmethod
    def parse(key: str) -> Tree:
        """The tree of a key ``A(x,B(y))`` (syntax only; :meth:`node` checks the rules)."""
        tokens = _TOKEN.findall(key)
        if "".join(tokens) != re.sub(r"\s+", "", key):
            raise InvalidConfigError(f"{key!r} is not a derivation tree key")
        pos = 0

        def form() -> Tree:
            nonlocal pos
            if pos >= len(tokens) or tokens[pos] in "(),":
                raise InvalidConfigError(f"{key!r}: a symbol was expected at token {pos}")
            symbol: str = tokens[pos]
            pos += 1
            if pos < len(tokens) and tokens[pos] == "(":
                pos += 1
                kids: list[Tree] = []
                while pos < len(tokens) and tokens[pos] != ")":
                    kids.append(form())
                    if pos < len(tokens) and tokens[pos] == ",":
                        pos += 1
                if pos >= len(tokens):
                    raise InvalidConfigError(f"{key!r}: unbalanced parentheses")
                pos += 1
                return (symbol, tuple(kids))
            return symbol

        tree = form()
        if pos != len(tokens):
            raise InvalidConfigError(f"{key!r}: unexpected text after the tree")
        return tree

    def _check(self, tree: Tree, key: str) -> None:
        stack = [tree]
        declared = set(self.grammar.terminals) | set(self.grammar.nonterminals)
        while stack:
            t = stack.pop()
            if isinstance(t, str):
                if t not in declared:
                    raise InvalidConfigError(f"{key!r}: unknown symbol {t!r}")
                continue
            symbol, kids = t
            if tuple(symbol_of(k) for k in kids) not in self.grammar.alternatives(symbol):
                rhs = " ".join(symbol_of(k) for k in kids) or "ε"
                raise InvalidConfigError(f"{key!r}: {symbol}->{rhs} is not a rule of this grammar")
            stack.extend(kids)

    # -- sub-problems (the protocol dynamic programming uses) -------------------------------
    def subproblems(self) -> list[str]:
        """Nonterminals, dependencies first; the start symbol last."""
        order = [a for a in _postorder(self.grammar) if a != self.root]
        return [*order, self.root]

    def breakdowns(self, name: str) -> list[tuple[str, tuple[str, ...]]]:
        """(rule label, nonterminals it needs) for each rule of ``name``."""
        return [(label, tuple(s for s in rhs if self.grammar.is_nonterminal(s)))
                for label, rhs in self._labels[name].items()]

    def compose(self, name: str, label: str, parts: Sequence[str]) -> str:
        """The word key of ``name`` built by rule ``label`` from sub-problem words ``parts``."""
        rhs = self._labels[name][label]
        queue = list(parts)
        kids: list[Tree] = []
        for s in rhs:
            kids.append(self.parse(queue.pop(0)) if self.grammar.is_nonterminal(s) else s)
        return self.key((name, tuple(kids)))

    def subproblem_of(self, key: str) -> str:
        return symbol_of(self.parse(key))


def _key(tree: Tree) -> str:
    if isinstance(tree, str):
        return tree
    return f"{tree[0]}({','.join(_key(kid) for kid in tree[1])})"


class _LazyArcs(Sequence[Arc]):
    def __init__(self, graph: TreeGraph, node: Node, leaves: list[tuple[Path, str]]) -> None:
        self.graph, self.node, self.leaves = graph, node, leaves
        self.all_leaves = graph.open_leaves(node)
        self.offsets = [0]
        for _, symbol in leaves:
            self.offsets.append(self.offsets[-1] + len(graph._rules[symbol]))

    def __len__(self) -> int:
        return self.offsets[-1]

    def __iter__(self) -> Iterator[Arc]:
        return (self[i] for i in range(len(self)))

    def __getitem__(self, i: int) -> Arc:  # type: ignore[override]
        if not 0 <= i < len(self):
            raise IndexError(i)
        j = bisect.bisect_right(self.offsets, i) - 1
        path, symbol = self.leaves[j]
        label, rhs = self.graph._rules[symbol][i - self.offsets[j]]
        child = self.graph._expand(self.node, path, symbol, rhs)  # type: ignore[arg-type]
        g = self.graph.grammar
        new = [((*path, k), s) for k, s in enumerate(rhs) if g.is_nonterminal(s)]
        self.graph._remember(child, [*self.all_leaves[:j], *new, *self.all_leaves[j + 1:]])
        return f"{'.'.join(map(str, path))}:{label}", child


def _postorder(g: Grammar) -> list[str]:
    from searchlab.adapters.grammar._grammar import _topological

    return _topological(g)
