"""Formulas and parameter values of a T1 spec, parsed safely (:mod:`searchlab.core.expr`).

Kernel Tuner 1.5's T1 reader ``eval``s ``Values`` and sizes; here ``Values`` are read by the one T1
reader (:mod:`searchlab.interchange.t1`, the safe evaluator) and cast to their declared type, and a
formula is a :class:`~searchlab.core.expr.Expression` in which ``ProblemSize[i]`` is read as the
name ``ProblemSize_i`` (the expression language has no subscripts).
"""

from __future__ import annotations

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


def cast_values(values: tuple[Any, ...], kind: str, name: str, text: str) -> tuple[Any, ...]:
    """A parameter's values (read by the one T1 reader, :mod:`searchlab.interchange.t1`) as its declared
    ``Type``: this adapter passes them to the kernel as ``#define NAME VALUE`` lines."""
    what = f"TuningParameters {name!r} Values={text!r}"
    if len(values) > MAX_VALUES:
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
