"""Formulas and parameter values of a T1 spec, parsed safely (:mod:`searchlab.core.expr`).

Kernel Tuner 1.5's T1 reader ``eval``s ``Values`` and sizes; here a ``Values`` string must be
a list literal, ``range(...)`` or ``list(range(...))`` whose items are safe expressions, and a
formula is a :class:`~searchlab.core.expr.Expression` in which ``ProblemSize[i]`` is read as the
name ``ProblemSize_i`` (the expression language has no subscripts).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from searchlab.core.expr import Expression
from searchlab.errors import ConfigError

MAX_VALUES = 100_000
_PS = re.compile(r"\bProblemSize\s*\[\s*(\d+)\s*\]")


def formula(text: str | int | float, what: str) -> Expression:
    """A T1 formula (``ProblemSize[i]`` becomes the name ``ProblemSize_i``), parsed safely."""
    source = str(text)
    try:
        return Expression(_PS.sub(r"ProblemSize_\1", source))
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc}") from None


def evaluate_int(expr: Expression, env: Mapping[str, Any], what: str) -> int:
    """A formula that must give a positive integer (sizes)."""
    try:
        value = expr(env)
    except (ConfigError, ArithmeticError, TypeError, ValueError) as exc:
        raise ConfigError(f"{what}={expr.text!r}: {exc}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or float(value) != int(value) or int(value) < 1:
        raise ConfigError(f"{what}={expr.text!r} gives {value!r}: must be a positive integer")
    return int(value)


def _values(node: ast.expr, what: str) -> list[Any]:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "list" and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and not node.keywords:
        bounds = [Expression(ast.unparse(a))({}) for a in node.args]
        if not 1 <= len(bounds) <= 3 or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            raise ConfigError("range takes 1 to 3 integers")
        values: list[Any] = list(range(*bounds)[:MAX_VALUES + 1])
    elif isinstance(node, (ast.List, ast.Tuple)):
        values = [n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else Expression(ast.unparse(n))({})
                  for n in node.elts]
    else:
        raise ConfigError("must be a list literal, range(...) or list(range(...))")
    return values


def parse_values(text: str, kind: str, name: str) -> tuple[Any, ...]:
    """``Values`` of a tuning parameter: a list literal, ``range(...)`` or ``list(range(...))``."""
    what = f"TuningParameters {name!r} Values={text!r}"
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ConfigError(f"{what}: not valid ({exc.msg})") from None
    try:
        values = _values(node, what)
    except (ConfigError, ArithmeticError, TypeError, ValueError) as exc:
        raise ConfigError(f"{what}: {exc}") from None
    if not values or len(values) > MAX_VALUES:
        raise ConfigError(f"{what}: needs 1 to {MAX_VALUES} values, got {len(values)}")
    cast = {"int": int, "uint": int, "float": float, "bool": bool, "string": str}[kind]
    try:
        out = tuple(cast(v) for v in values)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what}: values are not {kind}: {exc}") from None
    if kind == "uint" and min(out) < 0:
        raise ConfigError(f"{what}: uint values must be >= 0")
    if kind == "string" and not all(re.fullmatch(r"[\w.+-]+", v) for v in out):
        raise ConfigError(f"{what}: string values become #defines and must be identifiers or numbers")
    return out
