"""The one safe-expression compiler (searchlab/core/expr/): both grammars share its bounds."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from searchlab.core.expr import ArrayExpression, Expression
from searchlab.errors import ConfigError


@pytest.mark.parametrize("cls", [Expression, ArrayExpression])
def test_nesting_is_bounded_in_both_grammars(cls: type) -> None:
    with pytest.raises(ConfigError, match="nested more than 100 levels"):
        cls("-" * 200 + "a")
    assert cls("(" * 50 + "a" + ")" * 50)({"a": 3}) == 3  # deep but legal parentheses are fine


@pytest.mark.parametrize("cls", [Expression, ArrayExpression])
def test_code_is_refused_in_both_grammars(cls: type) -> None:
    for text in ("__import__('os')", "a.__class__", "(lambda: 1)()", "[v for v in a]"):
        with pytest.raises(ConfigError, match="is not allowed"):
            cls(text)


def test_each_grammar_keeps_its_own_forms() -> None:
    assert Expression("a if a < b < 3 else 'no'")({"a": 1, "b": 2}) == 1  # chains, if-else, strings
    with pytest.raises(ConfigError, match="IfExp is not allowed"):
        ArrayExpression("a if a else a")
    with pytest.raises(ConfigError, match="Subscript is not allowed"):
        Expression("a[0]")
    u = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(ArrayExpression("u[:, ::-1] > 2")({"u": u}), u[:, ::-1] > 2)


def test_unknown_names_are_named_with_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown name 'zz' \(known: \['a'\]\)"):
        Expression("zz + 1")({"a": 1})
    with pytest.raises(ConfigError, match=r"unknown name 'zz' \(known: \['a'\]\)"):
        ArrayExpression("zz + 1")({"a": np.zeros(2)})


@pytest.mark.parametrize("cls", [Expression, ArrayExpression])
def test_expressions_pickle_by_text(cls: type) -> None:
    expr = cls("a * 2 + 1")
    again = pickle.loads(pickle.dumps(expr))
    assert type(again) is cls and again.text == expr.text and again.names == frozenset({"a"})
    assert float(again({"a": 2})) == 5.0
