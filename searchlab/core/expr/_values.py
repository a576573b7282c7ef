"""Parameter values written as Python expressions, evaluated safely (T1 ``Values``; issue 51, item 1).

Kernel Tuner 1.5 ``eval``s a T1 file's ``Values`` (``"[32 * i for i in range(1, 32)]"``,
``"[1] + [2 * i for i in range(1, 11)]"``, ``"[2**i for i in range(0, 6)]"``), so a spec file can run any
code. Here the same texts are read by the one safe compiler (:mod:`._compile`) with this grammar:
literals (numbers, strings, booleans), lists, ``+ - * / // % **``, comparisons and ``and/or/not`` (for
comprehension conditions), ``range(...)``, ``list(...)`` and list comprehensions (one or more ``for``
clauses with ``if`` conditions; not nested in each other). No other name is known, and there are no
attributes, subscripts, or other calls. Sizes are bounded: at most :data:`MAX_VALUES` items in any list,
integers of at most 4096 bits, and at most :data:`MAX_STEPS` comprehension steps per text, so a hostile
file is one line, not a hung or exhausted machine. Values keep their Python types exactly as ``eval``
gives them (``[1, 2]`` stays integers, ``[1.0]`` floats), because Kernel Tuner keys its cache by them.
"""

from __future__ import annotations

import ast
import contextvars
import operator
from collections.abc import Callable
from typing import Any

from searchlab.core.expr._compile import COMPARISONS, NEG, NOT, POS, Compiled, Grammar, plain_call
from searchlab.core.expr._scalar import _add, _mod, _mul, _pow
from searchlab.errors import ConfigError

MAX_VALUES = 100_000
MAX_STEPS = 1_000_000
_BUDGET: contextvars.ContextVar[list[int]] = contextvars.ContextVar("values_budget")


def _charge(steps: int) -> None:
    budget = _BUDGET.get(None)
    if budget is None:
        return
    budget[0] -= steps
    if budget[0] < 0:
        raise ConfigError(f"takes more than {MAX_STEPS} steps to evaluate (values are bounded)")


def _sized(value: Any) -> Any:
    if isinstance(value, tuple):
        if len(value) > MAX_VALUES:
            raise ConfigError(f"a list of {len(value)} items: more than {MAX_VALUES}")
        _charge(len(value))
    return value


def _seq_add(a: Any, b: Any) -> Any:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return _sized(a + b)
    return _add(a, b)


def _seq_mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, tuple) and isinstance(n, int) and not isinstance(n, bool):
            if len(seq) * max(n, 0) > MAX_VALUES:
                raise ConfigError(f"a list of {len(seq)} items * {n}: more than {MAX_VALUES} items")
            return _sized(seq * n)
    return _mul(a, b)


def _range(*bounds: Any) -> tuple[int, ...]:
    if not 1 <= len(bounds) <= 3 or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
        raise ConfigError(f"range{bounds}: takes 1 to 3 integers")
    span = range(*bounds)
    if len(span) > MAX_VALUES:
        raise ConfigError(f"range{bounds} has {len(span)} values: more than {MAX_VALUES}")
    values: tuple[int, ...] = _sized(tuple(span))
    return values


def _list(*args: Any) -> tuple[Any, ...]:
    if len(args) != 1 or not isinstance(args[0], tuple):
        raise ConfigError("list(...) takes one list or range")
    return tuple(args[0])


_FUNCS: dict[str, Callable[..., Any]] = {"range": _range, "list": _list}
_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: _seq_add, ast.Sub: operator.sub, ast.Mult: _seq_mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: _mod, ast.Pow: _pow,
}
VALUES = Grammar(
    binops=_BINOPS, cmpops=COMPARISONS, unary={ast.USub: NEG, ast.UAdd: POS, ast.Not: NOT}, funcs=_FUNCS,
    constants=(int, float, bool, str), call=plain_call(_FUNCS), logic=True, comprehensions=True,
    max_items=MAX_VALUES, charge=_charge,
    allowed="literals, lists, + - * / // % **, comparisons, and/or/not, range(), list(), list comprehensions",
)


class ValuesExpression(Compiled):
    """A parsed ``Values`` text; calling it gives the values (a tuple), or one ConfigError."""

    grammar = VALUES

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.names:
            raise ConfigError(f"expression {self.text!r}: unknown names {sorted(self.names)} (only the variables of "
                              "its own comprehensions, range and list)")

    def __call__(self, env: Any = None) -> Any:
        token = _BUDGET.set([MAX_STEPS])
        try:
            return self._fn({})
        except ConfigError as exc:
            text = str(exc)
            raise ConfigError(text if text.startswith("expression") else f"expression {self.text[:200]!r}: {text}") from None
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise ConfigError(f"expression {self.text[:200]!r}: {type(exc).__name__}: {exc}") from None
        finally:
            _BUDGET.reset(token)


def evaluate_values(text: object) -> tuple[Any, ...]:
    """The values a ``Values`` text gives: a non-empty list of numbers, strings or booleans."""
    if not isinstance(text, str):
        raise ConfigError(f"{text!r}: must be a string holding a Python list expression")
    value = ValuesExpression(text)()
    if not isinstance(value, tuple):
        raise ConfigError(f"{text[:200]!r} gives {type(value).__name__} {value!r}, not a list")
    if not value:
        raise ConfigError(f"{text[:200]!r} gives an empty list")
    bad = [v for v in value if not isinstance(v, (int, float, str, bool))]
    if bad:
        raise ConfigError(f"{text[:200]!r}: an item {bad[0]!r} is not a number, string or boolean")
    return value

