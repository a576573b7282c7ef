"""``problem=grammar``: any acyclic grammar plus a user objective, plugged in from a config.

    python -m searchlab problem=grammar problem.grammar=my.yaml \\
        problem.objective._target_=mypkg.score searcher=tag

The objective is any importable callable ``score(word: Word, **kwargs) -> float`` (or a
:class:`Measurement`); Hydra builds it as a partial (``_partial_: true``), so extra keyword
arguments can be set from the command line (``+problem.objective.scale=2``).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from searchlab.adapters.grammar._grammar import Grammar, load_grammar
from searchlab.adapters.grammar._strings import StringGraph
from searchlab.adapters.grammar._tree import Tree, TreeGraph, symbol_of
from searchlab.core.problem import Problem
from searchlab.core.records import Config, Direction, Measurement
from searchlab.core.spaces import DerivationGraph
from searchlab.errors import ConfigError


@dataclass(frozen=True)
class Word:
    """What an objective receives: the word's key, its derivation tree (tree mode; None in
    string mode), its terminal string, and the symbol it derives from (the start symbol, or
    a sub-problem's nonterminal)."""

    key: str
    tree: Tree | None
    terminals: tuple[str, ...]
    root: str


def _leaves(tree: Tree) -> tuple[str, ...]:
    if isinstance(tree, str):
        return (tree,)
    return tuple(s for kid in tree[1] for s in _leaves(kid))


# The default objective, built by Hydra as a partial (+problem.objective.KEY=VALUE adds arguments).
DEFAULT_OBJECTIVE: Mapping[str, Any] = MappingProxyType({"_target_": "searchlab.adapters.grammar.objectives.hashed",
                                                         "_partial_": True})


def resolve_objective(objective: Any) -> tuple[Callable[..., Any], dict[str, Any]]:
    """A callable and a JSON-able description (for the fingerprint) from a callable, a
    dotted name, a functools.partial, or a mapping with ``_target_``."""
    import functools

    if isinstance(objective, str):
        module, _, name = objective.rpartition(".")
        try:
            fn = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError, ValueError):
            raise ConfigError(f"problem.objective={objective!r}: cannot import it") from None
        return resolve_objective(fn)
    if isinstance(objective, Mapping):
        kwargs = {k: v for k, v in objective.items() if not str(k).startswith("_")}
        if "_target_" not in objective:
            raise ConfigError(f"problem.objective={dict(objective)}: needs a _target_ (an importable callable)")
        fn, desc = resolve_objective(str(objective["_target_"]))
        return functools.partial(fn, **kwargs), {**desc, "kwargs": kwargs}
    if isinstance(objective, functools.partial):
        _, desc = resolve_objective(objective.func)
        return objective, {**desc, "kwargs": dict(objective.keywords)}
    if callable(objective):
        return objective, {"target": f"{getattr(objective, '__module__', '?')}.{getattr(objective, '__qualname__', '?')}"}
    raise ConfigError(f"problem.objective={objective!r}: expected a callable, a dotted name or a _target_ mapping")


class GrammarProblem(Problem):
    """Maximise (or minimise) a user objective over the words of an acyclic grammar."""

    name = "grammar"
    objective_name = "objective"

    def __init__(self,
                 grammar: Grammar | Mapping[str, Any] | str | Path = "schedule.yaml",  # YAML path (or example name), or a mapping
                 objective: Any = DEFAULT_OBJECTIVE,  # a callable, a dotted name, or {_target_: pkg.fn, _partial_: true}
                 direction: str = "maximize",  # maximize or minimize
                 subproblems: bool = False,  # the objective also scores sub-words (enables searcher=dp)
                 max_forms: int = 20_000,  # string mode explores the whole graph, up to this many forms
                 ) -> None:
        self.grammar = load_grammar(grammar)
        self.objective, described = resolve_objective(objective or DEFAULT_OBJECTIVE)
        try:
            self.direction = Direction(direction)
        except ValueError:
            raise ConfigError(f"problem.direction={direction!r}: must be 'maximize' or 'minimize'") from None
        if subproblems and self.grammar.mode != "tree":
            raise ConfigError("problem.subproblems=true needs a tree-mode grammar (sub-words are subtrees)")
        grammar_desc = str(grammar) if isinstance(grammar, (str, Path)) else repr(self.grammar)
        super().__init__(grammar=grammar_desc, objective=described, direction=direction, subproblems=subproblems)
        self.capabilities = frozenset({"subproblems"}) if subproblems else frozenset()
        self.graph: DerivationGraph = (TreeGraph(self.grammar, subwords=subproblems) if self.grammar.mode == "tree"
                                       else StringGraph(self.grammar, max_forms=max_forms))

    @property
    def space(self) -> DerivationGraph:
        return self.graph

    def word(self, config: Config) -> Word:
        node = self.graph.word_of(config)
        key = self.graph.key(node)
        if isinstance(self.graph, TreeGraph):
            tree: Tree = node  # type: ignore[assignment]
            return Word(key, tree, _leaves(tree), symbol_of(tree))
        return Word(key, None, tuple(node), self.grammar.start)  # type: ignore[arg-type]

    def evaluate(self, config: Config) -> Measurement:
        word = self.word(config)
        value = self.objective(word)
        extra = {"subproblem": word.root} if word.root != self.grammar.start else {}
        if isinstance(value, Measurement):
            return value if not extra else dataclasses.replace(value, extra={**value.extra, **extra})
        return Measurement.ok(float(value), samples=(float(value),), extra=extra)

    def describe_config(self, config: Config) -> str:
        return str(config["word"])
