"""A small, safe arithmetic/boolean expression language for constraints and formulas.

Known constraints over knobs, derived features and constraint formulas over sensors
(paper 001 §6) are written as text in configs. They are parsed with :mod:`ast` and only
a whitelist of nodes is accepted, so a config can never run arbitrary code.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from searchlab.errors import ConfigError

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_FUNCS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "log2": math.log2,
    "sqrt": math.sqrt,
    "ceil": math.ceil,
    "floor": math.floor,
}

Env = Mapping[str, Any]
_Fn = Callable[[Env], Any]


def _compile(node: ast.AST, text: str, names: set[str]) -> _Fn:
    if isinstance(node, ast.Expression):
        return _compile(node.body, text, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str)):
        value = node.value
        return lambda env: value
    if isinstance(node, ast.Name):
        name = node.id
        names.add(name)

        def lookup(env: Env) -> Any:
            try:
                return env[name]
            except KeyError:
                raise ConfigError(f"expression {text!r}: unknown name {name!r}") from None

        return lookup
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        op, left, right = _BINOPS[type(node.op)], _compile(node.left, text, names), _compile(node.right, text, names)
        return lambda env: op(left(env), right(env))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        inner = _compile(node.operand, text, names)
        if isinstance(node.op, ast.USub):
            return lambda env: -inner(env)
        if isinstance(node.op, ast.Not):
            return lambda env: not inner(env)
        return inner
    if isinstance(node, ast.BoolOp):
        parts = [_compile(v, text, names) for v in node.values]
        if isinstance(node.op, ast.And):
            return lambda env: all(p(env) for p in parts)
        return lambda env: any(p(env) for p in parts)
    if isinstance(node, ast.Compare) and all(type(o) in _CMPOPS for o in node.ops):
        first = _compile(node.left, text, names)
        rest = [(_CMPOPS[type(o)], _compile(c, text, names)) for o, c in zip(node.ops, node.comparators)]

        def compare(env: Env) -> bool:
            left = first(env)
            for op, fn in rest:
                right = fn(env)
                if not op(left, right):
                    return False
                left = right
            return True

        return compare
    if isinstance(node, ast.IfExp):
        test, body, orelse = (_compile(n, text, names) for n in (node.test, node.body, node.orelse))
        return lambda env: body(env) if test(env) else orelse(env)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and not node.keywords
    ):
        fn, args = _FUNCS[node.func.id], [_compile(a, text, names) for a in node.args]
        return lambda env: fn(*(a(env) for a in args))
    raise ConfigError(
        f"expression {text!r}: {type(node).__name__} is not allowed "
        f"(numbers, names, + - * / // % **, comparisons, and/or/not, if-else, {sorted(_FUNCS)})"
    )


@dataclass(frozen=True)
class Expression:
    """A parsed expression; ``names`` are the variables it reads."""

    text: str
    names: frozenset[str] = field(init=False)
    _fn: _Fn = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            tree = ast.parse(self.text.strip(), mode="eval")
        except SyntaxError as exc:
            raise ConfigError(f"expression {self.text!r} is not valid: {exc.msg}") from None
        names: set[str] = set()
        object.__setattr__(self, "_fn", _compile(tree, self.text, names))
        object.__setattr__(self, "names", frozenset(names))

    def __call__(self, env: Env) -> Any:
        return self._fn(env)

    def __reduce__(self) -> tuple[Any, ...]:  # picklable for Ray: rebuild from text
        return (Expression, (self.text,))
