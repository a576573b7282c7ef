"""The derivation DAG of a string-rewriting grammar (``mode: string``; paper 002 Figure 1).

Forms are flat symbol strings and a rule may have several symbols on its left (Figure 1's
``aB -> ac``), so two derivations can reach the same form and even the same word by
different rules: leftmost derivations no longer count words once. The graph is therefore
explored in full once (at most ``max_forms`` forms) and each node's set of sinks is kept,
which makes ``count_sinks`` exact from any node and uniform sampling exact.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from searchlab.adapters.grammar._grammar import Grammar
from searchlab.core.spaces import Arc, DerivationGraph, Node
from searchlab.errors import ConfigError, InvalidConfigError

Form = tuple[str, ...]


def _form(node: object) -> Form:
    """A node of this graph is a form (the DerivationGraph protocol's ``Node`` is any hashable)."""
    assert isinstance(node, tuple)
    return node


class StringGraph(DerivationGraph):
    def __init__(self, grammar: Grammar, *, max_forms: int = 20_000) -> None:
        super().__init__()
        self.grammar = grammar
        self._arcs: dict[Form, list[Arc]] = {}
        self._explore(max_forms)
        order = self._topological()
        self._sinks: dict[Form, frozenset[Form]] = {}
        for form in reversed(order):
            kids = self._arcs[form]
            if not kids:
                self._sinks[form] = frozenset([form]) if self.is_word(form) else frozenset()
            else:
                self._sinks[form] = frozenset().union(*(self._sinks[_form(c)] for _, c in kids))
        self._check()

    def _rewrites(self, form: Form) -> list[Arc]:
        out: list[Arc] = []
        for p in self.grammar.productions:
            width = len(p.lhs)
            for i in range(len(form) - width + 1):
                if form[i:i + width] == p.lhs:
                    out.append((f"{i}:{p.label}", (*form[:i], *p.rhs, *form[i + width:])))
        return out

    def _explore(self, max_forms: int) -> None:
        stack: list[Form] = [(self.grammar.start,)]
        while stack:
            form = stack.pop()
            if form in self._arcs:
                continue
            if len(self._arcs) >= max_forms:
                raise ConfigError(f"string-mode grammar has more than max_forms={max_forms} forms; "
                                  "use mode: tree (context-free rules) for large grammars")
            self._arcs[form] = self._rewrites(form)
            stack.extend(_form(c) for _, c in self._arcs[form] if c not in self._arcs)

    def _topological(self) -> list[Form]:
        """Forms with parents before children; a cycle is a ConfigError naming it."""
        state: dict[Form, int] = {}
        order: list[Form] = []
        for start in self._arcs:
            if start in state:
                continue
            stack: list[tuple[Form, int]] = [(start, 0)]
            state[start] = 1
            while stack:
                form, i = stack.pop()
                kids = self._arcs[form]
                if i < len(kids):
                    stack.append((form, i + 1))
                    child = _form(kids[i][1])
                    if state.get(child) == 1:
                        path = [" ".join(f) for f, _ in stack] + [" ".join(child)]
                        raise ConfigError(f"grammar is cyclic: {' => '.join(path)}")
                    if child not in state:
                        state[child] = 1
                        stack.append((child, 0))
                else:
                    state[form] = 2
                    order.append(form)
        return order[::-1]

    def _check(self) -> None:
        g = self.grammar
        if not self._sinks[self.root]:
            raise ConfigError(f"grammar has no words: no derivation from {g.start!r} ends in a terminal string")
        occurring = {s for form in self._arcs for s in form}
        lost = [s for s in (*g.nonterminals, *g.terminals) if s not in occurring]
        if lost:
            raise ConfigError(f"grammar has symbols unreachable from {g.start!r}: {lost}")
        live = {s for form, sinks in self._sinks.items() if sinks for s in form}
        dead = [s for s in g.nonterminals if s not in live]
        if dead:
            raise ConfigError(f"grammar has unproductive nonterminals {dead}: no form holding them derives a word")

    # -- the DerivationGraph protocol ------------------------------------------------------
    @property
    def root(self) -> Form:
        return (self.grammar.start,)

    def children(self, node: Node) -> Sequence[Arc]:
        return self._arcs.get(_form(node), [])

    def is_word(self, node: Node) -> bool:
        return not any(self.grammar.is_nonterminal(s) for s in _form(node))

    def key(self, node: Node) -> str:
        return " ".join(_form(node)) or "ε"

    def node(self, key: str) -> Form:
        form = tuple(s for s in key.split() if s != "ε")
        if form not in self._arcs:
            raise InvalidConfigError(f"{key!r} is not a form derivable from {self.grammar.start!r}")
        return form

    def count_sinks(self, node: Node | None = None) -> int:
        return len(self._sinks[self.root if node is None else _form(node)])

    def iter_words(self, node: Node | None = None) -> Iterator[Node]:
        return iter(sorted(self._sinks[self.root if node is None else _form(node)]))

    def uniform_word(self, rng: np.random.Generator, node: Node | None = None) -> tuple[list[str], Node]:
        current = self.root if node is None else _form(node)
        words = sorted(self._sinks[current])
        if not words:
            raise ConfigError(f"node {self.key(current)!r} derives no word")
        word = words[int(rng.integers(len(words)))]
        path: list[str] = []
        while current != word:
            label, child = next((lbl, _form(c)) for lbl, c in self._arcs[current] if word in self._sinks[_form(c)])
            current = child
            path.append(label)
        return path, word

    @property
    def n_forms(self) -> int:
        return len(self._arcs)
