"""A small, safe arithmetic/boolean expression language for constraints and formulas.

Known constraints over knobs, derived features and constraint formulas over sensors
(paper 001 §6) are written as text in configs. They are parsed with :mod:`ast` and only
a whitelist of nodes is accepted, so a config can never run arbitrary code.

Nor can it exhaust the machine (issue 10, item 3): ``9**9**9**9`` would compute forever and
``'x'*10**11`` allocate 100 GB, so integer results are bounded to ``MAX_INT_BITS`` bits,
strings to ``MAX_STRING`` characters, and ``%`` on a string (printf formatting, which can
pad to any width) is refused. Sub-expressions without names are evaluated once when the
text is parsed, so a bad constant fails when the table or config is loaded, not mid-run.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from searchlab.errors import ConfigError

MAX_INT_BITS = 4096  # about 1233 decimal digits: far beyond any knob value, cheap to compute
MAX_STRING = 10_000
MAX_DEPTH = 100  # levels of nesting: evaluation recurses once per level
MAX_TEXT = 10_000  # characters of an expression's text (deep nesting would exhaust the parser)


def _bits(value: Any) -> int:
    return value.bit_length() if isinstance(value, int) else 0


def _bounded(value: Any, what: str) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise ConfigError(f"{what}: the result has more than {MAX_INT_BITS} bits (expressions are bounded)")
    if isinstance(value, str) and len(value) > MAX_STRING:
        raise ConfigError(f"{what}: the result is longer than {MAX_STRING} characters (expressions are bounded)")
    return value


def _pow(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1 and _bits(a) * b > MAX_INT_BITS:
        raise ConfigError(f"{a} ** {b}: the result would have about {_bits(a) * b} bits, more than {MAX_INT_BITS}")
    try:
        return _bounded(operator.pow(a, b), f"{a!r} ** {b!r}")
    except OverflowError:
        raise ConfigError(f"{a!r} ** {b!r}: overflows a float") from None


def _mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, str) and isinstance(n, int) and len(seq) * n > MAX_STRING:
            raise ConfigError(f"a string of {len(seq)} characters * {n}: longer than {MAX_STRING} characters")
    if isinstance(a, int) and isinstance(b, int) and _bits(a) + _bits(b) > MAX_INT_BITS + 1:
        raise ConfigError(f"a product of {_bits(a)}- and {_bits(b)}-bit integers: more than {MAX_INT_BITS} bits")
    return operator.mul(a, b)


def _mod(a: Any, b: Any) -> Any:
    if isinstance(a, str):
        raise ConfigError("% on a string (printf formatting) is not allowed in expressions")
    return operator.mod(a, b)


def _add(a: Any, b: Any) -> Any:
    return _bounded(operator.add(a, b), "+")


_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: _add,
    ast.Sub: operator.sub,
    ast.Mult: _mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: _mod,
    ast.Pow: _pow,
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
        binop: _Fn = lambda env: op(left(env), right(env))
        return _fold(binop, node, text)
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


def _depth(tree: ast.AST) -> int:
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _fold(fn: _Fn, node: ast.AST, text: str) -> _Fn:
    """A sub-expression without names, evaluated now (bounds and errors surface at parse time)."""
    if any(isinstance(n, ast.Name) for n in ast.walk(node)):
        return fn
    try:
        value = fn({})
    except ConfigError as exc:
        raise ConfigError(f"expression {text[:200]!r}: {exc}") from None
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise ConfigError(f"expression {text[:200]!r}: {type(exc).__name__}: {exc}") from None
    return lambda env: value


@dataclass(frozen=True)
class Expression:
    """A parsed expression; ``names`` are the variables it reads."""

    text: str
    names: frozenset[str] = field(init=False)
    _fn: _Fn = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or len(self.text) > MAX_TEXT:
            raise ConfigError(f"expression {str(self.text)[:80]!r}...: must be a string of at most {MAX_TEXT} characters")
        try:
            tree = ast.parse(self.text.strip(), mode="eval")
        except SyntaxError as exc:
            raise ConfigError(f"expression {self.text!r} is not valid: {exc.msg}") from None
        except (RecursionError, MemoryError, ValueError):
            raise ConfigError(f"expression {self.text[:80]!r}: too deeply nested to parse") from None
        if _depth(tree) > MAX_DEPTH:
            raise ConfigError(f"expression {self.text[:80]!r}: nested more than {MAX_DEPTH} levels deep")
        names: set[str] = set()
        object.__setattr__(self, "_fn", _compile(tree, self.text, names))
        object.__setattr__(self, "names", frozenset(names))

    def __call__(self, env: Env) -> Any:
        return self._fn(env)

    def __reduce__(self) -> tuple[Any, ...]:  # picklable for Ray: rebuild from text
        return (Expression, (self.text,))
