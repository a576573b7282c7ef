"""Safe numpy expressions: the expected output of a user kernel, written as data.

A spec may give the correct output as an expression over the kernel's initial arguments,
e.g. ``sum(x, axis=1)`` or ``0.2 * (u + roll(u, 1, 0) + roll(u, -1, 0) + roll(u, 1, 1) + roll(u, -1, 1))``.
Kernel Tuner would ``eval`` such text; here it is parsed with :mod:`ast` and only a whitelist
is accepted, as :mod:`searchlab.core.expr` does for scalars: numbers, argument names,
arithmetic and comparisons (element-wise), indexing and slicing, a fixed set of numpy
functions with the keywords ``axis``/``keepdims``, and tuples/lists of those. No
attributes, no strings, no comprehensions. Every intermediate array is bounded
(:data:`MAX_ELEMENTS`) *before* it is made, and integer powers are bounded, so a spec
cannot exhaust memory or time either.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from searchlab.errors import ConfigError

MAX_ELEMENTS = 1 << 26  # 64 Mi elements (512 MB of float64) per intermediate
MAX_INT_EXPONENT = 64

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
_FUNCS: dict[str, Callable[..., Any]] = {
    "sum": np.sum, "prod": np.prod, "mean": np.mean, "min": np.min, "max": np.max, "cumsum": np.cumsum,
    "minimum": np.minimum, "maximum": np.maximum, "abs": np.abs, "sqrt": np.sqrt, "exp": np.exp,
    "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "floor": np.floor,
    "ceil": np.ceil, "where": np.where, "clip": np.clip, "roll": np.roll, "transpose": np.transpose,
    "reshape": np.reshape, "flip": np.flip, "concatenate": np.concatenate, "matmul": np.matmul,
    "float32": lambda x: np.asarray(x, np.float32), "float64": lambda x: np.asarray(x, np.float64),
    "int32": lambda x: np.asarray(x, np.int32), "int64": lambda x: np.asarray(x, np.int64),
}
_KEYWORDS = frozenset({"axis", "keepdims"})
Env = Mapping[str, Any]
_Fn = Callable[[Env], Any]


def _size(shape: tuple[int, ...]) -> int:
    return math.prod(int(s) for s in shape)


def _check_size(value: Any, text: str) -> Any:
    if isinstance(value, np.ndarray) and value.size > MAX_ELEMENTS:
        raise ConfigError(f"expression {text!r}: an intermediate of {value.size} elements exceeds {MAX_ELEMENTS}")
    return value


def _binop(op: Callable[[Any, Any], Any], is_pow: bool, text: str) -> Callable[[Any, Any], Any]:
    def apply(a: Any, b: Any) -> Any:
        for v in (a, b):
            if isinstance(v, (tuple, list, str)):
                raise ConfigError(f"expression {text!r}: arithmetic on a {type(v).__name__} is not allowed")
        if is_pow and isinstance(b, (int, np.integer)) and abs(int(b)) > MAX_INT_EXPONENT and isinstance(a, (int, np.integer)):
            raise ConfigError(f"expression {text!r}: integer exponent {b} exceeds {MAX_INT_EXPONENT}")
        shapes = [np.shape(a), np.shape(b)]
        try:
            out = np.broadcast_shapes(*shapes)
        except ValueError:
            raise ConfigError(f"expression {text!r}: shapes {shapes[0]} and {shapes[1]} do not broadcast") from None
        if _size(out) > MAX_ELEMENTS:
            raise ConfigError(f"expression {text!r}: a result of shape {out} exceeds {MAX_ELEMENTS} elements")
        return op(a, b)

    return apply


def _call(name: str, args: list[_Fn], kwargs: dict[str, _Fn], text: str) -> _Fn:
    fn = _FUNCS[name]

    def call(env: Env) -> Any:
        values = [a(env) for a in args]
        if name == "matmul" and len(values) == 2:
            a, b = (np.asarray(v) for v in values)
            if a.ndim > 2 or b.ndim > 2:
                raise ConfigError(f"expression {text!r}: matmul takes 1-D or 2-D arrays")
            if _size(a.shape[:-1]) * _size(b.shape[1:]) > MAX_ELEMENTS:
                raise ConfigError(f"expression {text!r}: matmul result exceeds {MAX_ELEMENTS} elements")
        try:
            return _check_size(fn(*values, **{k: v(env) for k, v in kwargs.items()}), text)
        except (TypeError, ValueError, IndexError, np.exceptions.AxisError) as exc:
            raise ConfigError(f"expression {text!r}: {name}(...) failed: {exc}") from None

    return call


def _compile(node: ast.AST, text: str, names: set[str]) -> _Fn:
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (int, float, bool))):
        value = node.value
        return lambda env: value
    if isinstance(node, ast.Name):
        name = node.id
        names.add(name)

        def lookup(env: Env) -> Any:
            if name not in env:
                raise ConfigError(f"expression {text!r}: unknown name {name!r} (known: {sorted(env)})")
            return env[name]

        return lookup
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        op = _binop(_BINOPS[type(node.op)], isinstance(node.op, ast.Pow), text)
        left, right = _compile(node.left, text, names), _compile(node.right, text, names)
        return lambda env: op(left(env), right(env))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
        inner = _compile(node.operand, text, names)
        if isinstance(node.op, ast.USub):
            return lambda env: -inner(env)
        return (lambda env: ~inner(env)) if isinstance(node.op, ast.Invert) else inner
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMPOPS:
        op = _binop(_CMPOPS[type(node.ops[0])], False, text)
        left, right = _compile(node.left, text, names), _compile(node.comparators[0], text, names)
        return lambda env: op(left(env), right(env))
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_compile(e, text, names) for e in node.elts]
        return lambda env: tuple(i(env) for i in items)
    if isinstance(node, ast.Slice):
        parts = [None if p is None else _compile(p, text, names) for p in (node.lower, node.upper, node.step)]
        return lambda env: slice(*(None if p is None else p(env) for p in parts))
    if isinstance(node, ast.Subscript):
        base, index = _compile(node.value, text, names), _compile(node.slice, text, names)

        def subscript(env: Env) -> Any:
            try:
                return np.asarray(base(env))[index(env)]
            except (IndexError, TypeError, ValueError) as exc:
                raise ConfigError(f"expression {text!r}: indexing failed: {exc}") from None

        return subscript
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS
            and all(k.arg in _KEYWORDS for k in node.keywords)):
        args = [_compile(a, text, names) for a in node.args]
        kwargs = {str(k.arg): _compile(k.value, text, names) for k in node.keywords}
        return _call(node.func.id, args, kwargs, text)
    raise ConfigError(f"expression {text!r}: {type(node).__name__} is not allowed (numbers, argument names, "
                      f"arithmetic, comparisons, indexing, tuples, {sorted(_FUNCS)} with axis=/keepdims=)")


@dataclass(frozen=True)
class ArrayExpression:
    """A parsed array expression; ``names`` are the arguments it reads."""

    text: str
    names: frozenset[str] = field(init=False)
    _fn: _Fn = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.text) > 2000:
            raise ConfigError(f"expression {self.text[:40]!r}...: longer than 2000 characters")
        try:
            tree = ast.parse(self.text.strip(), mode="eval")
        except SyntaxError as exc:
            raise ConfigError(f"expression {self.text!r} is not valid: {exc.msg}") from None
        names: set[str] = set()
        object.__setattr__(self, "_fn", _compile(tree.body, self.text, names))
        object.__setattr__(self, "names", frozenset(names))

    def __call__(self, env: Env) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(self._fn(env))

    def __reduce__(self) -> tuple[Any, ...]:
        return (ArrayExpression, (self.text,))
