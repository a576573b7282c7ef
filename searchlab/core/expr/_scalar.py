"""A small, safe arithmetic/boolean expression language for constraints and formulas.

Known constraints over knobs, derived features and constraint formulas over sensors
(paper 001 §6) are written as text in configs. They are parsed by the one safe compiler
(:mod:`searchlab.core.expr._compile`) with this module's grammar, so a config can never
run arbitrary code.

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
from collections.abc import Callable
from typing import Any

from searchlab.core.expr._compile import COMPARISONS, NEG, NOT, POS, Compiled, Grammar, plain_call
from searchlab.errors import ConfigError

MAX_INT_BITS = 4096  # about 1233 decimal digits: far beyond any knob value, cheap to compute
MAX_STRING = 10_000


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
_FUNCS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "log2": math.log2,
    "sqrt": math.sqrt,
    "ceil": math.ceil,
    "floor": math.floor,
}
SCALAR = Grammar(
    binops=_BINOPS, cmpops=COMPARISONS, unary={ast.USub: NEG, ast.UAdd: POS, ast.Not: NOT}, funcs=_FUNCS,
    constants=(int, float, bool, str), call=plain_call(_FUNCS), logic=True, fold=True,
    allowed=f"numbers, names, + - * / // % **, comparisons, and/or/not, if-else, {sorted(_FUNCS)}",
)


class Expression(Compiled):
    """A parsed scalar expression; ``names`` are the variables it reads."""

    grammar = SCALAR
