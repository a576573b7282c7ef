"""Safe numpy expressions: the expected output of a user kernel, written as data.

A spec may give the correct output as an expression over the kernel's initial arguments,
e.g. ``sum(x, axis=1)`` or ``0.2 * (u + roll(u, 1, 0) + roll(u, -1, 0) + roll(u, 1, 1) + roll(u, -1, 1))``.
Kernel Tuner would ``eval`` such text; here the one safe compiler
(:mod:`searchlab.core.expr._compile`) accepts only this module's grammar: numbers, argument
names, arithmetic and comparisons (element-wise), indexing and slicing, a fixed set of numpy
functions with the keywords ``axis``/``keepdims``, and tuples/lists of those. No
attributes, no strings, no comprehensions. Every intermediate array is bounded
(:data:`MAX_ELEMENTS`) *before* it is made, and integer powers are bounded, so a spec
cannot exhaust memory or time either.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from searchlab.core.expr._compile import COMPARISONS, INVERT, NEG, POS, Compiled, Env, Fn, Grammar, Op
from searchlab.errors import ConfigError

MAX_ELEMENTS = 1 << 26  # 64 Mi elements (512 MB of float64) per intermediate
MAX_INT_EXPONENT = 64

_BINOPS: dict[type[ast.operator], Op] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
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


def _size(shape: tuple[int, ...]) -> int:
    return math.prod(int(s) for s in shape)


def _check_size(value: Any, text: str) -> Any:
    if isinstance(value, np.ndarray) and value.size > MAX_ELEMENTS:
        raise ConfigError(f"expression {text!r}: an intermediate of {value.size} elements exceeds {MAX_ELEMENTS}")
    return value


def _binop(op: Op, is_pow: bool, text: str) -> Op:
    """``op`` with its operands checked: no sequences, bounded integer powers, and a result
    shape within :data:`MAX_ELEMENTS` before the array is made."""

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


def _call(name: str, args: list[Fn], kwargs: dict[str, Fn], text: str) -> Fn:
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


ARRAY = Grammar(
    binops=_BINOPS, cmpops=COMPARISONS, unary={ast.USub: NEG, ast.UAdd: POS, ast.Invert: INVERT}, funcs=_FUNCS,
    constants=(type(None), int, float, bool), call=_call, keywords=frozenset({"axis", "keepdims"}), wrap=_binop,
    chains=False, indexing=True, max_text=2000,
    allowed=f"numbers, argument names, arithmetic, comparisons, indexing, tuples, {sorted(_FUNCS)} "
            "with axis=/keepdims=",
)


class ArrayExpression(Compiled):
    """A parsed array expression; ``names`` are the arguments it reads."""

    grammar = ARRAY

    def __call__(self, env: Env) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(self._fn(env))
