"""How configurations become Optuna parameters (see ``_optuna.py`` for the reasons).

Knob spaces (and threshold trees, as plateau knobs) map knob by knob; derivation DAGs are
walked define-by-run, one categorical per decision node. Each encoder samples a configuration
through a trial, gives back the parameters of a configuration (to enqueue it), draws random
members and enumerates them (fallbacks when the sampler keeps repeating itself).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Union

from searchlab.core.records import Config
from searchlab.core.spaces import DerivationGraph, IntKnob, Knob, KnobSpace

Meta = Mapping[str, Any]


class KnobEncoder:
    def __init__(self, space: KnobSpace) -> None:
        self.space = space

    @staticmethod
    def _native(knob: Knob) -> bool:
        return isinstance(knob, IntKnob) and (knob.step == 1 or not knob.log)

    def sample(self, trial: Any) -> tuple[Config, Meta]:
        values = {}
        for knob in self.space.knobs:
            if self._native(knob):
                assert isinstance(knob, IntKnob)
                values[knob.name] = trial.suggest_int(knob.name, knob.low, knob.high, step=knob.step, log=knob.log)
            elif knob.ordered:
                values[knob.name] = knob.values[trial.suggest_int(knob.name, 0, len(knob.values) - 1)]
            else:
                values[knob.name] = knob.values[trial.suggest_categorical(knob.name, tuple(range(len(knob.values))))]
        return Config(values), {}

    def params(self, config: Config, meta: Meta) -> dict[str, Any]:
        return {k.name: config[k.name] if self._native(k) else k.values.index(config[k.name]) for k in self.space.knobs}

    def random(self, rng: Any) -> tuple[Config, Meta]:
        return self.space.sample(rng), {}

    def members(self) -> Iterator[tuple[Config, Meta]]:
        return ((c, {}) for c in self.space.enumerate())


class DagEncoder:
    def __init__(self, space: DerivationGraph) -> None:
        self.space = space

    def _arcs(self, node: Any) -> list[tuple[str, Any]]:
        return [(label, child) for label, child in self.space.children(node) if self.space.count_sinks(child) > 0]

    def sample(self, trial: Any) -> tuple[Config, Meta]:
        node, path = self.space.root, []
        while not self.space.is_word(node):
            arcs = self._arcs(node)
            label = arcs[0][0] if len(arcs) == 1 else trial.suggest_categorical(
                self.space.key(node), tuple(lbl for lbl, _ in arcs))
            node = dict(arcs)[label]
            path.append(label)
        return self.space.word_config(node), {"path": path}

    def params(self, config: Config, meta: Meta) -> dict[str, Any]:
        path = meta.get("path") or self._path_to(self.space.word_of(config))
        node, params = self.space.root, {}
        for label in path:
            arcs = self._arcs(node)
            if len(arcs) > 1:
                params[self.space.key(node)] = label
            node = dict(arcs)[label]
        return params

    def _path_to(self, word: Any) -> list[str]:
        """A derivation of ``word`` (depth-first, nodes that cannot reach it remembered)."""
        dead: set[Any] = set()
        stack: list[tuple[Any, list[str]]] = [(self.space.root, [])]
        while stack:
            node, path = stack.pop()
            if node == word:
                return path
            if node in dead or self.space.is_word(node):
                continue
            dead.add(node)  # visited: explored once is enough in a DAG
            stack.extend((child, [*path, label]) for label, child in reversed(self._arcs(node)))
        raise ValueError(f"{self.space.key(word)!r} is not derived from the root")

    def random(self, rng: Any) -> tuple[Config, Meta]:
        path, node = self.space.uniform_word(rng)
        return self.space.word_config(node), {"path": path}

    def members(self) -> Iterator[tuple[Config, Meta]]:
        return ((self.space.word_config(w), {}) for w in self.space.iter_words())


Encoder = Union[KnobEncoder, DagEncoder]
