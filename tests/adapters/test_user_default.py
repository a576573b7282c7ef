"""A user's default configuration is checked against its space: one line per mistake (issue 46, item 3).

Pure: knob spaces and a threshold tree built here, no device, no compiler (problem=futhark's
``problem.default`` goes through :func:`user_default` on the space its program gives).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from searchlab.adapters._default import knob_default
from searchlab.adapters.futhark._sizes import SizeParam, ThresholdSizeSpace, user_default
from searchlab.core.spaces import CategoricalKnob, KnobSpace, OrdinalKnob, Threshold, ThresholdDataset, ThresholdTree
from searchlab.errors import ConfigError

SPACE = KnobSpace((OrdinalKnob("bx", (8, 16, 32)), CategoricalKnob("opt", ("-O2", "-O3"))), ("bx >= 16 or opt == '-O3'",))
TREE = ThresholdTree((Threshold("main.suff_outer_par_0", default=2), Threshold("main.suff_intra_par_1", default=32)),
                     (ThresholdDataset("a", {"main.suff_outer_par_0": (100,), "main.suff_intra_par_1": (16,)}),))
SIZES = (SizeParam("main.tblock_size_3", "thread_block_size", 32, (8, 16, 32, 64)),)


def test_a_knob_default_is_the_spaces_own_configuration() -> None:
    assert knob_default(SPACE, None, "default") is None  # no default: today's behaviour
    config = knob_default(SPACE, {"bx": 16.0, "opt": "-O2"}, "default")
    assert config == {"bx": 16, "opt": "-O2"} and isinstance(config["bx"], int)  # the value the search measures


@pytest.mark.parametrize("raw, message", [
    ([16, "-O2"], "default=[16, '-O2']: must be a non-empty mapping of parameter -> value, e.g. {bx: 8, opt: '-O2'}"),
    ({}, "default={}: must be a non-empty mapping"),
    ({"bx": 16, "opt": "-O2", "b": 1}, "default.b: not a parameter of the space (did you mean 'bx'?)"),
    ({"bx": 16}, "default: gives no value for ['opt']"),
    ({"bx": 12, "opt": "-O2"}, "default.bx=12: not one of its values [8, 16, 32]"),
    ({"bx": True, "opt": "-O2"}, "default.bx=True: not one of its values"),
    ({"bx": 8, "opt": "-O2"}, "violates a restriction (known constraint \"bx >= 16 or opt == '-O3'\" is false)"),
], ids=["list", "empty", "name", "missing", "value", "bool", "restriction"])
def test_bad_knob_defaults_are_one_line_errors(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        knob_default(SPACE, raw, "default")
    assert "\n" not in str(info.value)


def test_a_futhark_default_goes_over_futharks_defaults() -> None:
    assert user_default(TREE, TREE, (), None) == TREE.default_config()
    given = user_default(TREE, TREE, (), {"main.suff_outer_par_0": 1000})  # off the plateau grid: allowed
    assert given == {"main.suff_outer_par_0": 1000, "main.suff_intra_par_1": 32}
    space = ThresholdSizeSpace.build(TREE, SIZES)
    assert user_default(space, TREE, SIZES, {"main.tblock_size_3": 64})["main.tblock_size_3"] == 64


@pytest.mark.parametrize("raw, sizes, message", [
    ("main.suff_outer_par_0=5", False, "problem.default='main.suff_outer_par_0=5': must be a non-empty mapping"),
    ({"main.suff_outer_par_O": 5}, False, "problem.default.main.suff_outer_par_O: not a parameter of the space "
                                          "(did you mean 'main.suff_outer_par_0'"),
    ({"main.suff_outer_par_0": -1}, False, "problem.default.main.suff_outer_par_0=-1: a threshold must be an integer "
                                           "in [0, 2^63)"),
    ({"main.suff_outer_par_0": 2.5}, False, "problem.default.main.suff_outer_par_0=2.5: a threshold must be an integer"),
    ({"main.tblock_size_3": 64}, False, "problem.default.main.tblock_size_3: not a parameter"),  # sizes not tuned
    ({"main.tblock_size_3": 48}, True, "problem.default.main.tblock_size_3=48: not one of its values [8, 16, 32, 64]"),
], ids=["string", "name", "negative", "fraction", "size-without-sizes", "size-value"])
def test_bad_futhark_defaults_are_one_line_errors(raw: Any, sizes: bool, message: str) -> None:
    space = ThresholdSizeSpace.build(TREE, SIZES) if sizes else TREE
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        user_default(space, TREE, SIZES if sizes else (), raw)
    assert "\n" not in str(info.value)
