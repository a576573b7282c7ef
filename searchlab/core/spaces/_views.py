"""Views: a space seen as another kind, so a searcher can work on spaces it was not written for.

- knobs -> DAG of decisions: one level per knob, arcs are values (TAG and MC on knob spaces);
  known constraints prune an arc as soon as every knob they read is decided.
- thresholds -> knobs: one ordinal knob per threshold over its plateau representatives
  (paper 003 §3.5's plateau-index encoding; configurations are unchanged).
- thresholds -> DAG: both of the above, parents decided before their children.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from searchlab.core.records import Config, Value, as_int
from searchlab.core.spaces._base import Space
from searchlab.core.spaces._dag import Arc, DerivationGraph, Node
from searchlab.core.spaces._knobs import KnobSpace, OrdinalKnob
from searchlab.core.spaces._thresholds import ThresholdTree
from searchlab.errors import InvalidConfigError


class DecisionDAG(DerivationGraph):
    """A knob space as a tree of decisions; nodes are tuples of the values decided so far."""

    def __init__(self, knobs: KnobSpace) -> None:
        super().__init__()
        self.knobs = knobs
        self._names = knobs.names
        # For exact counting: which decided knobs can still affect feasibility at each depth.
        scopes = knobs.constraint_scopes()
        self._relevant = [
            tuple(i for i, n in enumerate(self._names[:d]) if any(n in s and s - set(self._names[:d]) for s in scopes))
            for d in range(len(self._names) + 1)
        ]
        self._memo: dict[tuple[int, tuple[Value, ...]], int] = {}

    @property
    def root(self) -> tuple[Value, ...]:
        return ()

    def _assigned(self, node: tuple[Value, ...]) -> dict[str, Value]:
        return dict(zip(self._names, node))

    def children(self, node: Node) -> Sequence[Arc]:
        """Decisions that still lead to at least one feasible configuration.

        Pruning by ``partial_ok`` alone leaves dead ends: a prefix whose every completion
        violates a constraint over later knobs, or (a recorded table's membership) a
        constraint that is only decidable on the full word. A searcher descending through
        this view would then spend measurements on known-infeasible words; arcs with no
        word below are therefore dropped (exact, memoised counts).
        """
        return [arc for arc in self._partial_children(node) if self.count_sinks(arc[1]) > 0]

    def _partial_children(self, node: Node) -> list[Arc]:
        prefix = _prefix(node)
        if len(prefix) == len(self._names):
            return []
        knob = self.knobs.knobs[len(prefix)]
        out: list[Arc] = []
        for value in knob.values:
            child = (*prefix, value)
            if self.knobs.prefix_ok(child):
                out.append((f"{knob.name}={value}", child))
        return out

    def is_word(self, node: Node) -> bool:
        return len(_prefix(node)) == len(self._names)

    def key(self, node: Node) -> str:
        return json.dumps(list(_prefix(node)), separators=(",", ":"))

    def node(self, key: str) -> tuple[Value, ...]:
        try:
            values = json.loads(key)
        except json.JSONDecodeError:
            raise InvalidConfigError(f"{key!r} is not a decision path") from None
        node = tuple(tuple(v) if isinstance(v, list) else v for v in values)
        if len(node) > len(self._names) or not self.knobs.prefix_ok(node) or self.count_sinks(node) == 0:
            raise InvalidConfigError(f"{key!r} is not a node of this decision tree")
        return node

    def count_sinks(self, node: Node | None = None) -> int:
        prefix = () if node is None else _prefix(node)
        depth = len(prefix)
        memo_key = (depth, tuple(prefix[i] for i in self._relevant[depth]))
        if memo_key not in self._memo:
            if depth == len(self._names):
                self._memo[memo_key] = 1
            else:
                self._memo[memo_key] = sum(self.count_sinks(child) for _, child in self._partial_children(prefix))
        return self._memo[memo_key]

    def to_config(self, proposal: Config) -> Config:
        return Config(self._assigned(_prefix(self.word_of(proposal))))

    def from_config(self, config: Config) -> Config:
        return self.word_config(tuple(config[n] for n in self._names))


def _prefix(node: Node) -> tuple[Value, ...]:
    """A node of the decision DAG: the tuple of the first knobs' values."""
    assert isinstance(node, tuple), node
    return node


def plateau_knobs(tree: ThresholdTree) -> KnobSpace:
    return KnobSpace(tuple(OrdinalKnob(n, tree.plateau_values(n)) for n in tree.names))


@dataclass(frozen=True)
class View:
    """``space`` is what the searcher sees; encode/decode map configurations across."""

    name: str
    space: Space
    encode: Callable[[Config], Config]  # problem config -> searcher proposal
    decode: Callable[[Config], Config]  # searcher proposal -> problem config


def _snap(tree: ThresholdTree) -> Callable[[Config], Config]:
    def encode(config: Config) -> Config:
        return Config({n: tree.plateau_values(n)[tree.plateau_index(n, as_int(v))] for n, v in config.items()})

    return encode


def _identity(config: Config) -> Config:
    return config


def _compose(outer: Callable[[Config], Config], inner: Callable[[Config], Config]) -> Callable[[Config], Config]:
    return lambda config: outer(inner(config))


def view_as(space: Space, kinds: Sequence[type[Space]]) -> View | None:
    """The first of ``kinds`` (in preference order) that ``space`` can be seen as."""
    for kind in kinds:
        if isinstance(space, kind):
            return View("identity", space, _identity, _identity)
        if isinstance(space, ThresholdTree) and kind is KnobSpace:
            return View("thresholds->plateau knobs", plateau_knobs(space), _snap(space), _identity)
        if isinstance(space, (KnobSpace, ThresholdTree)) and kind is DerivationGraph:
            knobs = plateau_knobs(space) if isinstance(space, ThresholdTree) else space
            dag = DecisionDAG(knobs)
            snap = _snap(space) if isinstance(space, ThresholdTree) else _identity
            return View(f"{space.kind}->decision dag", dag, _compose(dag.from_config, snap), dag.to_config)
    return None
