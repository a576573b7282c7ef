"""``synthetic_dag``: a derivation DAG with shared nodes and heavy-tailed word values.

The grammar: a start symbol expands into ``slots`` nonterminals; each derivation step
rewrites any one remaining nonterminal into one of its terminals, so every order of steps
reaches the same word and forms are shared (a node is the set of rewrites done so far).
Canonical (leftmost) steps rewrite the lowest open slot. The objective is a
pseudo-performance to maximise: additive effects plus pairwise interactions, exponentiated,
so that few words are very good (heavy tail) as in paper 002's DFT search spaces.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from searchlab.adapters.synthetic._common import Delay, config_rng
from searchlab.core.problem import Problem
from searchlab.core.records import Config, Direction, Measurement
from searchlab.core.spaces import Arc, DerivationGraph, Node
from searchlab.errors import ConfigError, InvalidConfigError

SlotNode = tuple[int, ...]  # value per slot, -1 while the slot is still a nonterminal


def _slots(node: Node) -> SlotNode:
    """``node`` as this grammar's node type (a tuple of slot values)."""
    assert isinstance(node, tuple), node
    return node


class SlotGrammarGraph(DerivationGraph):
    def __init__(self, arity: Sequence[int]) -> None:
        super().__init__()
        if not arity or any(a < 1 for a in arity):
            raise ConfigError(f"problem.arity={list(arity)}: need at least one slot, each with >= 1 terminal")
        self.arity = tuple(arity)

    @property
    def root(self) -> SlotNode:
        return tuple(-1 for _ in self.arity)

    def _rewrite(self, node: SlotNode, slot: int) -> list[Arc]:
        return [(f"s{slot}->t{v}", (*node[:slot], v, *node[slot + 1:])) for v in range(self.arity[slot])]

    def children(self, node: Node) -> Sequence[Arc]:
        n = _slots(node)
        return [arc for slot, v in enumerate(n) if v < 0 for arc in self._rewrite(n, slot)]

    def canonical_children(self, node: Node) -> Sequence[Arc]:
        n = _slots(node)
        open_slots = [slot for slot, v in enumerate(n) if v < 0]
        return self._rewrite(n, open_slots[0]) if open_slots else []

    def is_word(self, node: Node) -> bool:
        return all(v >= 0 for v in _slots(node))

    def key(self, node: Node) -> str:
        return ".".join("_" if v < 0 else str(v) for v in _slots(node))

    def node(self, key: str) -> SlotNode:
        parts = key.split(".")
        try:
            node = tuple(-1 if p == "_" else int(p) for p in parts)
        except ValueError:
            raise InvalidConfigError(f"{key!r} is not a form of this grammar") from None
        if len(node) != len(self.arity) or any(not -1 <= v < a for v, a in zip(node, self.arity)):
            raise InvalidConfigError(f"{key!r} is not a form of this grammar")
        return node


class SyntheticDag(Problem):
    name = "synthetic_dag"
    direction = Direction.MAXIMIZE
    objective_name = "pseudo_mflops"

    def __init__(self, arity: Sequence[int] = (3, 4, 2, 3, 4, 3), seed: int = 0, tail: float = 2.0,
                 noise: float = 0.0, delay_s: float = 0.0) -> None:
        """The options (the problem's one declaration of them; searchlab.core.schema).

        Args:
            arity: terminals per slot
            seed: the landscape
            tail: larger: heavier tail
            noise: relative noise (0: deterministic)
            delay_s: sleep per evaluation (stands in for an expensive measurement)
        """
        super().__init__()
        self.graph = SlotGrammarGraph(arity)
        self.seed, self.tail, self.noise, self.delay = seed, tail, noise, Delay(delay_s)
        self.deterministic = noise == 0
        rng = np.random.default_rng(seed)
        self._main = [rng.standard_normal(a) for a in self.graph.arity]
        k = len(self.graph.arity)
        self._pairs = {(i, j): rng.standard_normal((self.graph.arity[i], self.graph.arity[j])) * 0.5
                       for i in range(k) for j in range(i + 1, k) if rng.random() < 0.4}
        self._scale = tail / math.sqrt(k + 0.5 * len(self._pairs))
        self._calls = 0

    @property
    def space(self) -> SlotGrammarGraph:
        return self.graph

    def value(self, word: SlotNode) -> float:
        z = sum(float(self._main[i][v]) for i, v in enumerate(word))
        z += sum(float(m[word[i], word[j]]) for (i, j), m in self._pairs.items())
        return 100.0 * math.exp(self._scale * z)

    def evaluate(self, config: Config) -> Measurement:
        self.delay()
        self._calls += 1
        word = self.graph.word_of(config)
        value = self.value(_slots(word))
        if self.noise:
            value *= float(max(0.5, 1 + self.noise * config_rng(self.seed, config, self._calls).standard_normal()))
        return Measurement.ok(value, samples=(value,))

    def describe_config(self, config: Config) -> str:
        return str(config["word"])

    @property
    def known_optimum(self) -> float:
        return max(self.value(_slots(w)) for w in self.graph.iter_words())
