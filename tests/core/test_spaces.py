"""Spaces, views and the safe expression language."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from searchlab.core.expr import Expression
from searchlab.core.records import Config
from searchlab.core.spaces import (
    DecisionDAG,
    DerivationGraph,
    ExplicitDAG,
    IntKnob,
    KnobSpace,
    OrdinalKnob,
    Threshold,
    ThresholdDataset,
    ThresholdTree,
    knob_from_spec,
    plateau_knobs,
    view_as,
)
from searchlab.errors import ConfigError, InvalidConfigError


def test_expression_evaluates_and_rejects_code() -> None:
    e = Expression("bx * by <= 1024 and (tile if unroll > 1 else 0) < 8")
    assert e.names == {"bx", "by", "tile", "unroll"}
    assert e({"bx": 32, "by": 32, "tile": 4, "unroll": 2}) is True
    assert e({"bx": 64, "by": 32, "tile": 4, "unroll": 2}) is False
    for bad in ("__import__('os').system('true')", "x.real", "[x for x in y]", "open('f')", "lambda: 1"):
        with pytest.raises(ConfigError):
            Expression(bad)
    with pytest.raises(ConfigError, match="unknown name 'zz'"):
        Expression("zz > 1")({})


def test_knob_space_constraints_sample_and_enumerate() -> None:
    space = KnobSpace((OrdinalKnob("a", (1, 2, 4, 8)), IntKnob("b", 1, 5, step=2)), constraints=("a * b <= 12",))
    members = list(space.enumerate())
    assert len(members) == sum(1 for a in (1, 2, 4, 8) for b in (1, 3, 5) if a * b <= 12)
    assert space.size() == 12
    rng = np.random.default_rng(0)
    assert all(space.check(space.sample(rng)) is None for _ in range(50))
    assert space.check(Config(a=8, b=5)) == "known constraint 'a * b <= 12' is false"
    with pytest.raises(InvalidConfigError):
        space.validate(Config(a=3, b=1))
    with pytest.raises(ConfigError, match="unknown knobs"):
        KnobSpace((OrdinalKnob("a", (1,)),), constraints=("c > 1",))


def test_knob_from_spec_forms() -> None:
    assert knob_from_spec("x", [1, 2]).values == (1, 2)
    assert knob_from_spec("x", {"low": 2, "high": 8, "step": 3}).values == (2, 5, 8)
    assert not knob_from_spec("x", {"choices": ["a", "b"]}).ordered
    with pytest.raises(ConfigError):
        knob_from_spec("x", {"lo": 1})


def _diamond() -> ExplicitDAG:
    # S -> A | B ; A -> C ; B -> C (shared) ; C -> w1 | w2 ; A -> w3
    return ExplicitDAG("S", {"S": [("a", "A"), ("b", "B")], "A": [("c", "C"), ("x", "w3")],
                             "B": [("c", "C")], "C": [("1", "w1"), ("2", "w2")]}, ["w1", "w2", "w3"])


def test_shared_nodes_are_counted_once() -> None:
    dag = _diamond()
    assert dag.count_sinks() == 3  # w1, w2 reached via A and via B, but counted once
    assert sorted(dag.key(w) for w in dag.iter_words()) == ["w1", "w2", "w3"]
    assert dag.follow(["b", "c", "2"]) == "w2"
    assert dag.count_sinks("B") == 2 and dag.count_sinks("A") == 3  # B does not own C in the spanning tree
    path, word = dag.uniform_word(np.random.default_rng(0), "B")
    assert dag.follow(path, "B") == word and word in ("w1", "w2")


def test_uniform_word_is_uniform_over_sinks() -> None:
    dag = _diamond()
    rng = np.random.default_rng(1)
    counts = collections.Counter(dag.uniform_word(rng)[1] for _ in range(3000))
    assert set(counts) == {"w1", "w2", "w3"}
    assert all(abs(c / 3000 - 1 / 3) < 0.04 for c in counts.values())


def test_decision_dag_counts_match_enumeration() -> None:
    space = KnobSpace((OrdinalKnob("a", (1, 2, 4)), OrdinalKnob("b", (1, 2, 4)), OrdinalKnob("c", (0, 1))),
                      constraints=("a * b <= 4", "c <= a - 1"))
    dag = DecisionDAG(space)
    assert dag.count_sinks() == len(list(space.enumerate()))
    words = [dag.to_config(dag.word_config(w)) for w in dag.iter_words()]
    assert sorted(w.key for w in words) == sorted(c.key for c in space.enumerate())


def _tree() -> ThresholdTree:
    return ThresholdTree(
        (Threshold("t0"), Threshold("t1", parent="t0", branch=False)),
        (ThresholdDataset("small", {"t0": (10,), "t1": (40, 30, 20)}),
         ThresholdDataset("big", {"t0": (100,), "t1": (400,)}),
         ThresholdDataset("check", {"t0": (50,), "t1": (7,)}, train=False)),
    )


def test_threshold_plateaus() -> None:
    tree = _tree()
    assert tree.plateau_values("t0") == (10, 100, 101)
    assert tree.plateau_values("t1") == (20, 30, 40, 400, 401)
    assert tree.is_loop_based("t1") and not tree.is_loop_based("t0")
    assert tree.plateau_index("t0", 5) == 0 and tree.plateau_index("t0", 50) == 1 and tree.plateau_index("t0", 10**6) == 2
    assert tree.size() == 15
    assert tree.default_config() == Config(t0=32768, t1=32768)
    assert tree.all_false() == Config(t0=101, t1=401)  # false on every dataset, validation too
    with pytest.raises(ConfigError, match="listed before"):
        ThresholdTree((Threshold("a", parent="b"), Threshold("b")), (ThresholdDataset("d", {}),))


def test_views_round_trip() -> None:
    tree = _tree()
    knobs_view = view_as(tree, (KnobSpace,))
    assert knobs_view is not None and knobs_view.space == plateau_knobs(tree)
    assert knobs_view.encode(Config(t0=50, t1=25)) == Config(t0=100, t1=30)  # snapped to representatives
    dag_view = view_as(tree, (DerivationGraph,))
    assert dag_view is not None and dag_view.space.size() == tree.size()
    config = Config(t0=100, t1=30)
    assert dag_view.decode(dag_view.encode(config)) == config
    assert view_as(ExplicitDAG("S", {}, ["S"]), (KnobSpace,)) is None
