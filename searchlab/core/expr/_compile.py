"""The one safe-expression compiler: text -> :mod:`ast` -> a closure, over a whitelist.

Every expression language of searchlab (scalar constraints and formulas,
:mod:`~searchlab.core.expr._scalar`; array reference outputs of user kernels,
:mod:`~searchlab.core.expr._array`) goes through :class:`Compiled` and :func:`compile_text`:
the text is parsed with ``ast.parse(mode="eval")``, its nesting and length are bounded, and
each node is accepted only if its :class:`Grammar` allows it. Nothing is ``eval``-ed, so a
config or spec can never run code; the grammars bound sizes, so it cannot exhaust the machine
either (issue 10, item 3). A node the grammar lacks is refused with one line naming it.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from searchlab.errors import ConfigError

Env = Mapping[str, Any]
Fn = Callable[[Env], Any]
Op = Callable[[Any, Any], Any]
Caller = Callable[[str, list[Fn], dict[str, Fn], str], Fn]


def _plain(op: Op, is_pow: bool, text: str) -> Op:
    return op


def plain_call(funcs: Mapping[str, Callable[..., Any]]) -> Caller:
    """Calls with positional arguments only, the function applied as it is."""

    def make(name: str, args: list[Fn], kwargs: dict[str, Fn], text: str) -> Fn:
        fn = funcs[name]
        return lambda env: fn(*(a(env) for a in args))

    return make


def _no_charge(steps: int) -> None:
    return None


@dataclass(frozen=True)
class Grammar:
    """What one expression language accepts; :class:`_Compiler` is shared by all of them."""

    binops: Mapping[type[ast.operator], Op]
    cmpops: Mapping[type[ast.cmpop], Op]
    unary: Mapping[type[ast.unaryop], Callable[[Any], Any]]
    funcs: Mapping[str, Callable[..., Any]]
    constants: tuple[type, ...]  # the types a literal may have
    call: Caller  # builds a call of funcs[name]
    allowed: str  # what is allowed, for the error message
    keywords: frozenset[str] = frozenset()  # keyword arguments a call may pass
    wrap: Callable[[Op, bool, str], Op] = _plain  # checks around every binary operator (op, is_pow, text)
    chains: bool = True  # a < b < c; False: one comparison (element-wise on arrays)
    logic: bool = False  # and/or, if-else
    indexing: bool = False  # tuples, lists, slices, subscripts
    fold: bool = False  # binary operations without names are evaluated at parse time
    max_text: int = 10_000  # characters (deep nesting would exhaust the parser)
    max_depth: int = 100  # levels of nesting (evaluation recurses once per level)
    comprehensions: bool = False  # list literals and [x for x in ... if ...] (sequences are tuples); never nested
    max_items: int = 100_000  # elements one comprehension may make
    charge: Callable[[int], None] = _no_charge  # told every step a comprehension takes (the grammar's work budget)


def _depth(tree: ast.AST) -> int:
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def parse(text: object, grammar: Grammar) -> ast.Expression:
    """``text`` parsed, or one ConfigError: not a string, too long, invalid or too deep."""
    if not isinstance(text, str) or len(text) > grammar.max_text:
        raise ConfigError(f"expression {str(text)[:80]!r}...: must be a string of at most {grammar.max_text} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ConfigError(f"expression {text!r} is not valid: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise ConfigError(f"expression {text[:80]!r}: too deeply nested to parse") from None
    if _depth(tree) > grammar.max_depth:
        raise ConfigError(f"expression {text[:80]!r}: nested more than {grammar.max_depth} levels deep")
    return tree


class _Compiler:
    """One method per accepted node type (``_Name`` for :class:`ast.Name`, ...); each returns the
    node's closure, or None when the grammar refuses that form of the node."""

    def __init__(self, grammar: Grammar, text: str) -> None:
        self.g, self.text, self.names = grammar, text, set[str]()
        self.bound: list[str] = []  # the variables of the comprehensions being compiled

    def __call__(self, node: ast.AST) -> Fn:
        method: Callable[[Any], Fn | None] | None = getattr(self, f"_{type(node).__name__}", None)
        fn = method(node) if method is not None else None
        if fn is None:
            raise ConfigError(f"expression {self.text!r}: {type(node).__name__} is not allowed ({self.g.allowed})")
        return fn

    def _Expression(self, node: ast.Expression) -> Fn:
        return self(node.body)

    def _Constant(self, node: ast.Constant) -> Fn | None:
        value = node.value
        return (lambda env: value) if isinstance(value, self.g.constants) else None

    def _Name(self, node: ast.Name) -> Fn:
        name, text = node.id, self.text
        if name not in self.bound:
            self.names.add(name)

        def lookup(env: Env) -> Any:
            if name not in env:
                raise ConfigError(f"expression {text!r}: unknown name {name!r} (known: {sorted(env)[:40]})")
            return env[name]

        return lookup

    def _BinOp(self, node: ast.BinOp) -> Fn | None:
        if type(node.op) not in self.g.binops:
            return None
        op = self.g.wrap(self.g.binops[type(node.op)], isinstance(node.op, ast.Pow), self.text)
        left, right = self(node.left), self(node.right)
        fn: Fn = lambda env: op(left(env), right(env))
        return self._folded(fn, node) if self.g.fold else fn

    def _folded(self, fn: Fn, node: ast.AST) -> Fn:
        """A sub-expression without names, evaluated now (bounds and errors surface at parse time)."""
        if any(isinstance(n, ast.Name) for n in ast.walk(node)):
            return fn
        try:
            value = fn({})
        except ConfigError as exc:
            raise ConfigError(f"expression {self.text[:200]!r}: {exc}") from None
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise ConfigError(f"expression {self.text[:200]!r}: {type(exc).__name__}: {exc}") from None
        return lambda env: value

    def _UnaryOp(self, node: ast.UnaryOp) -> Fn | None:
        apply = self.g.unary.get(type(node.op))
        if apply is None:
            return None
        inner = self(node.operand)
        return lambda env: apply(inner(env))

    def _BoolOp(self, node: ast.BoolOp) -> Fn | None:
        if not self.g.logic:
            return None
        parts = [self(v) for v in node.values]
        if isinstance(node.op, ast.And):
            return lambda env: all(p(env) for p in parts)
        return lambda env: any(p(env) for p in parts)

    def _Compare(self, node: ast.Compare) -> Fn | None:
        if not all(type(o) in self.g.cmpops for o in node.ops) or (len(node.ops) > 1 and not self.g.chains):
            return None
        first = self(node.left)
        rest = [(self.g.wrap(self.g.cmpops[type(o)], False, self.text), self(c)) for o, c in zip(node.ops, node.comparators)]
        if len(rest) == 1:
            (op, second), = rest
            return lambda env: op(first(env), second(env))

        def chain(env: Env) -> bool:
            left = first(env)
            for op, fn in rest:
                right = fn(env)
                if not op(left, right):
                    return False
                left = right
            return True

        return chain

    def _IfExp(self, node: ast.IfExp) -> Fn | None:
        if not self.g.logic:
            return None
        test, body, orelse = self(node.test), self(node.body), self(node.orelse)
        return lambda env: body(env) if test(env) else orelse(env)

    def _Call(self, node: ast.Call) -> Fn | None:
        if not (isinstance(node.func, ast.Name) and node.func.id in self.g.funcs
                and all(k.arg in self.g.keywords for k in node.keywords)):
            return None
        args = [self(a) for a in node.args]
        kwargs = {str(k.arg): self(k.value) for k in node.keywords}
        return self.g.call(node.func.id, args, kwargs, self.text)

    def _ListComp(self, node: ast.ListComp | ast.GeneratorExp) -> Fn | None:
        """``[elt for a in A if c for b in B ...]`` as a tuple. A comprehension inside another one is refused,
        so the work of an evaluation is bounded by its comprehensions' steps (:attr:`Grammar.charge`)."""
        nested = any(isinstance(n, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp))
                     for n in ast.walk(node) if n is not node)
        if not self.g.comprehensions or nested or any(g.is_async or not isinstance(g.target, ast.Name)
                                                      for g in node.generators):
            return None
        gens: list[tuple[str, Fn, list[Fn]]] = []
        depth = len(self.bound)
        try:
            for gen in node.generators:
                source = self(gen.iter)  # read in the scope outside this generator's variable
                self.bound.append(str(getattr(gen.target, "id", "")))
                gens.append((self.bound[-1], source, [self(c) for c in gen.ifs]))
            element = self(node.elt)
        finally:
            del self.bound[depth:]
        return _comprehension(gens, element, self.g, self.text)

    _GeneratorExp = _ListComp

    def _Tuple(self, node: ast.Tuple | ast.List) -> Fn | None:
        if not (self.g.indexing or self.g.comprehensions):
            return None
        items = [self(e) for e in node.elts]
        return lambda env: tuple(i(env) for i in items)

    _List = _Tuple

    def _Slice(self, node: ast.Slice) -> Fn | None:
        if not self.g.indexing:
            return None
        parts = [None if p is None else self(p) for p in (node.lower, node.upper, node.step)]
        return lambda env: slice(*(None if p is None else p(env) for p in parts))

    def _Subscript(self, node: ast.Subscript) -> Fn | None:
        if not self.g.indexing:
            return None
        base, index, text = self(node.value), self(node.slice), self.text

        def subscript(env: Env) -> Any:
            try:
                return _index(base(env), index(env))
            except (IndexError, TypeError, ValueError) as exc:
                raise ConfigError(f"expression {text!r}: indexing failed: {exc}") from None

        return subscript


def _comprehension(gens: list[tuple[str, Fn, list[Fn]]], element: Fn, grammar: Grammar, text: str) -> Fn:
    def run(env: Env) -> tuple[Any, ...]:
        out: list[Any] = []

        def walk(level: int, scope: Env) -> None:
            if level == len(gens):
                out.append(element(scope))
                if len(out) > grammar.max_items:
                    raise ConfigError(f"expression {text[:80]!r}: makes more than {grammar.max_items} items")
                return
            name, source, conditions = gens[level]
            items = source(scope)
            if not isinstance(items, tuple):
                raise ConfigError(f"expression {text[:80]!r}: can iterate only over a list or range, not "
                                  f"{type(items).__name__}")
            for item in items:
                grammar.charge(1)
                inner = {**scope, name: item}
                if all(c(inner) for c in conditions):
                    walk(level + 1, inner)

        walk(0, env)
        return tuple(out)

    return run


def _index(value: Any, index: Any) -> Any:
    return np.asarray(value)[index]


def compile_text(text: str, grammar: Grammar) -> tuple[Fn, frozenset[str]]:
    """The closure of ``text`` under ``grammar`` and the names it reads."""
    compiler = _Compiler(grammar, text)
    fn = compiler(parse(text, grammar))
    return fn, frozenset(compiler.names)


@dataclass(frozen=True)
class Compiled:
    """A parsed expression of a subclass's :attr:`grammar`; ``names`` are the variables it reads.
    Picklable (for Ray): it is rebuilt from its text."""

    grammar: ClassVar[Grammar]
    text: str
    names: frozenset[str] = field(init=False)
    _fn: Fn = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fn, names = compile_text(self.text, self.grammar)
        object.__setattr__(self, "_fn", fn)
        object.__setattr__(self, "names", names)

    def __call__(self, env: Env) -> Any:
        return self._fn(env)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.text,))


NEG, NOT, INVERT = operator.neg, operator.not_, operator.invert


def POS(value: Any) -> Any:
    return value


COMPARISONS: Mapping[type[ast.cmpop], Op] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
