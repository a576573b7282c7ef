"""Acyclic formal grammars F = (T, N, P, S) (paper 002 §2, Problem 1), read from YAML or Python.

Two modes:

- ``tree`` (default): context-free rules ``A -> x y``; a sentential form keeps the
  derivation tree (a word is a ruletree, as the DFT breakdowns of §4.3), so each word has
  exactly one leftmost derivation and words are counted exactly by a product over symbols.
- ``string``: rewriting rules whose left side may hold several symbols (Figure 1's
  ``aB -> ac``); forms are flat symbol strings, explored in full (small grammars only).

Static checks raise :class:`ConfigError` naming the symbols: undeclared symbols, cyclic
rules, unproductive nonterminals, unreachable symbols, a grammar with no words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError

EPSILON = ("ε", "eps", "")
_NAME = re.compile(r"^[^\s(),|]+$")
EXAMPLES = Path(__file__).parent / "examples"


@dataclass(frozen=True)
class Production:
    lhs: tuple[str, ...]
    rhs: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{' '.join(self.lhs)}->{' '.join(self.rhs) or 'ε'}"


@dataclass(frozen=True)
class Grammar:
    """F = (T, N, P, S); construct with :meth:`from_mapping` or :func:`load_grammar`."""

    terminals: tuple[str, ...]
    nonterminals: tuple[str, ...]
    productions: tuple[Production, ...]
    start: str
    mode: str = "tree"

    def __post_init__(self) -> None:
        alts: dict[str, list[tuple[str, ...]]] = {a: [] for a in self.nonterminals}
        for p in self.productions:
            if len(p.lhs) == 1 and p.lhs[0] in alts:
                alts[p.lhs[0]].append(p.rhs)
        object.__setattr__(self, "_alts", alts)
        object.__setattr__(self, "_nts", frozenset(self.nonterminals))
        _check_symbols(self)
        if self.mode == "tree":
            order = _topological(self)
            counts = _word_counts(self, order)
            _check_productive(self, counts)
            _check_reachable(self)

    @classmethod
    def from_mapping(cls, spec: Mapping[str, Any]) -> Grammar:
        """From ``{start, terminals, nonterminals, productions[, mode]}`` (see docs/grammar.md)."""
        unknown = set(spec) - {"start", "terminals", "nonterminals", "productions", "mode", "name", "description"}
        if unknown:
            raise ConfigError(f"grammar: unknown keys {sorted(unknown)}; expected start, terminals, nonterminals, "
                              "productions, mode")
        for key in ("start", "terminals", "nonterminals", "productions"):
            if key not in spec:
                raise ConfigError(f"grammar: missing key {key!r}")
        mode = str(spec.get("mode", "tree"))
        if mode not in ("tree", "string"):
            raise ConfigError(f"grammar.mode={mode!r}: must be 'tree' or 'string'")
        return cls(_names(spec["terminals"], "terminals"), _names(spec["nonterminals"], "nonterminals"),
                   tuple(_parse_productions(spec["productions"])), str(spec["start"]), mode)

    def alternatives(self, symbol: str) -> list[tuple[str, ...]]:
        """Right-hand sides of the context-free rules of ``symbol`` (tree mode)."""
        return self._alts.get(symbol, [])  # type: ignore[attr-defined, no-any-return]

    def is_nonterminal(self, symbol: str) -> bool:
        return symbol in self._nts  # type: ignore[attr-defined]


def load_grammar(source: Grammar | Mapping[str, Any] | str | Path) -> Grammar:
    """A grammar from an object, a mapping, or a YAML file (absolute, relative to the working
    directory, or the name of a file in ``searchlab/adapters/grammar/examples``)."""
    if isinstance(source, Grammar):
        return source
    if isinstance(source, Mapping):
        return Grammar.from_mapping(source)
    path = Path(str(source))
    if not path.exists() and (EXAMPLES / path).exists():
        path = EXAMPLES / path
    if not path.exists():
        raise ConfigError(f"problem.grammar={str(source)!r}: no such file (nor in {EXAMPLES})")
    import yaml

    with path.open() as handle:
        spec = yaml.safe_load(handle)
    if not isinstance(spec, Mapping):
        raise ConfigError(f"problem.grammar={str(source)!r}: the YAML file must hold a mapping")
    return Grammar.from_mapping(spec)


# -- parsing ------------------------------------------------------------------------------
def _names(values: Any, what: str) -> tuple[str, ...]:
    if isinstance(values, str):
        values = values.split()
    out = tuple(str(v) for v in values)
    bad = [v for v in out if not _NAME.match(v) or "->" in v or v in EPSILON]
    if bad:
        raise ConfigError(f"grammar.{what}: invalid symbol names {bad} (no spaces, parentheses, commas, '|', '->')")
    if len(set(out)) != len(out):
        raise ConfigError(f"grammar.{what}: duplicate symbols in {list(out)}")
    return out


def _split_alternatives(lhs: str, rhs: Any) -> Iterable[Production]:
    alts: list[Any] = rhs.split("|") if isinstance(rhs, str) else list(rhs)
    for alt in alts:
        symbols = alt.split() if isinstance(alt, str) else [str(s) for s in alt]
        symbols = [s for s in symbols if s not in EPSILON]
        yield Production(tuple(lhs.split()), tuple(symbols))


def _parse_productions(spec: Any) -> Iterable[Production]:
    """``["A -> x y | z", ...]`` or ``{"A": ["x y", "z"], ...}``."""
    if isinstance(spec, Mapping):
        for lhs, rhs in spec.items():
            yield from _split_alternatives(str(lhs), rhs)
        return
    for rule in spec:
        if not isinstance(rule, str) or "->" not in rule:
            raise ConfigError(f"grammar.productions: {rule!r} is not a rule 'LHS -> RHS | RHS ...'")
        lhs, rhs = rule.split("->", 1)
        if not lhs.split():
            raise ConfigError(f"grammar.productions: {rule!r} has an empty left side")
        yield from _split_alternatives(lhs, rhs)


# -- static checks ------------------------------------------------------------------------
def _check_symbols(g: Grammar) -> None:
    both = set(g.terminals) & set(g.nonterminals)
    if both:
        raise ConfigError(f"grammar: symbols {sorted(both)} are both terminals and nonterminals")
    if g.start not in g.nonterminals:
        raise ConfigError(f"grammar.start={g.start!r} is not one of the nonterminals {list(g.nonterminals)}")
    declared = set(g.terminals) | set(g.nonterminals)
    seen: set[Production] = set()
    for p in g.productions:
        undeclared = sorted(set(p.lhs + p.rhs) - declared)
        if undeclared:
            raise ConfigError(f"grammar rule {p.label!r}: undeclared symbols {undeclared}")
        if not any(s in g.nonterminals for s in p.lhs):
            raise ConfigError(f"grammar rule {p.label!r}: the left side needs a nonterminal")
        if g.mode == "tree" and len(p.lhs) != 1:
            raise ConfigError(f"grammar rule {p.label!r}: tree mode needs one nonterminal on the left "
                              "(use mode: string for context-sensitive rules)")
        if p in seen:
            raise ConfigError(f"grammar rule {p.label!r} is listed twice")
        seen.add(p)


def _topological(g: Grammar) -> list[str]:
    """Nonterminals, dependencies first; a cycle A ->+ A is a ConfigError naming it. Iterative: a chain of
    thousands of rules is a grammar too (a recursive walk raised RecursionError at about 1,000)."""
    deps = {a: sorted({s for rhs in g.alternatives(a) for s in rhs if g.is_nonterminal(s)}) for a in g.nonterminals}
    order: list[str] = []
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    for root in g.nonterminals:
        if state.get(root) == 2:
            continue
        state[root] = 1
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            a, i = stack[-1]
            if i == len(deps[a]):
                stack.pop()
                state[a] = 2
                order.append(a)
                continue
            stack[-1] = (a, i + 1)
            b = deps[a][i]
            if state.get(b) == 1:
                names = [x for x, _ in stack]
                cycle = [*names[names.index(b):], b]
                raise ConfigError(f"grammar is cyclic: {' -> '.join(cycle)} (the derivation graph must be acyclic)")
            if state.get(b) != 2:
                state[b] = 1
                stack.append((b, 0))
    return order


# Word counts are exact up to 2**COUNT_BITS and saturate there (issue 47, item 12): ``A_i -> A_{i+1} A_{i+1} | x``
# squares the count at each rule, so 41 rules held a number of 2**40 bits and counting them never ended. A
# saturated count is a lower bound ("at least"); sampling then weighs alternatives by :func:`log2_word_counts`.
COUNT_BITS = 4096
COUNT_CAP = 1 << COUNT_BITS


def word_counts(g: Grammar) -> dict[str, int]:
    """Number of words (derivation trees) each symbol derives, at most :data:`COUNT_CAP`; 1 for a terminal."""
    return _word_counts(g, _topological(g))


def _word_counts(g: Grammar, order: Sequence[str]) -> dict[str, int]:
    counts = dict.fromkeys(g.terminals, 1)
    for a in order:
        total = 0
        for rhs in g.alternatives(a):
            product = 1
            for s in rhs:
                product = min(product * counts[s], COUNT_CAP)  # both at most COUNT_BITS bits: cheap
            total = min(total + product, COUNT_CAP)
        counts[a] = total
    return counts


def log2_word_counts(g: Grammar) -> dict[str, float]:
    """log2 of the number of words of each symbol, never saturated below float's range (2**1024 bits);
    ``-inf`` for a symbol with no words, ``inf`` beyond float's range."""
    logs = dict.fromkeys(g.terminals, 0.0)
    for a in _topological(g):
        parts = [sum(logs[s] for s in rhs) for rhs in g.alternatives(a)]
        top = max(parts, default=-math.inf)
        logs[a] = top if math.isinf(top) else top + math.log2(math.fsum(2.0 ** (x - top) for x in parts))
    return logs


# A word drawn uniformly is built whole; past this many symbols on average it cannot be (issue 47, item 12: the
# 41-rule grammar's uniform word is a full binary tree of depth 40, about 2**41 symbols, and drawing one hung).
MAX_MEAN_WORD = 100_000


def mean_word_size(g: Grammar) -> float:
    """The mean number of symbols (tree nodes) of a word drawn uniformly from the start symbol (inf if huge)."""
    logs = log2_word_counts(g)
    size = dict.fromkeys(g.terminals, 1.0)
    for a in _topological(g):
        if math.isinf(logs[a]):  # more than 2**(2**1024) words: words of at least about 2**1024 symbols
            size[a] = math.inf
            continue
        total = 1.0
        for rhs in g.alternatives(a):
            weight = 2.0 ** (sum(logs[s] for s in rhs) - logs[a])
            if weight > 0.0:
                total += weight * sum(size[s] for s in rhs)
        size[a] = total if not math.isnan(total) else math.inf
    return size[g.start]


def check_word_size(g: Grammar, what: str = "problem.grammar") -> None:
    """Refuse, in one line, a grammar whose uniformly drawn word is too large to build."""
    mean = mean_word_size(g)
    if mean > MAX_MEAN_WORD:
        about = "more than 10^300" if math.isinf(mean) else f"about {mean:.3g}"
        raise ConfigError(f"{what}: a word drawn uniformly from {g.start!r} has {about} symbols on average, more "
                          f"than {MAX_MEAN_WORD} (too large to build and measure); bound the grammar's recursion")


def _check_productive(g: Grammar, counts: Mapping[str, int]) -> None:
    if counts[g.start] == 0:
        raise ConfigError(f"grammar has no words: the start symbol {g.start!r} derives no terminal string")
    dead = [a for a in g.nonterminals if counts[a] == 0]
    if dead:
        raise ConfigError(f"grammar has unproductive nonterminals {dead}: they derive no terminal string")


def _check_reachable(g: Grammar) -> None:
    reached, stack = {g.start}, [g.start]
    while stack:
        for rhs in g.alternatives(stack.pop()):
            for s in rhs:
                if s not in reached:
                    reached.add(s)
                    stack.append(s)
    lost = [s for s in (*g.nonterminals, *g.terminals) if s not in reached]
    if lost:
        raise ConfigError(f"grammar has symbols unreachable from {g.start!r}: {lost}")
