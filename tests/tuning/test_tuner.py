"""Tunable settings declared once, in searchers' signatures (issue 23, item 1)."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import pytest

from searchlab import registry
from searchlab.errors import ConfigError
from searchlab.searchers import GeneticSearcher, RandomSearcher, Searcher, Tunable, searcher_config, tunable_ranges
from searchlab.searchers._schema import option_defaults


class PluginStyle(RandomSearcher):
    """A searcher as a plugin would write it: markers in its signature, nothing else."""

    def __init__(self, space: Any, *, width: Annotated[int, Tunable(2, 40, log=True)] = 8,
                 rate: Annotated[float, Tunable(0.5, 2.0)] = 1.0,
                 mode: Annotated[str, Tunable(choices=("near", "far"))] = "near", plain: int = 3, **kwargs: Any) -> None:
        super().__init__(space, **kwargs)


class Narrower(PluginStyle):
    def __init__(self, space: Any, *, width: Annotated[int, Tunable(2, 4)] = 3, rate: float = 1.0, **kwargs: Any) -> None:
        super().__init__(space, width=width, rate=rate, **kwargs)


def test_a_plugin_style_searcher_is_tunable_with_no_extra_code() -> None:
    ranges = tunable_ranges(PluginStyle)
    assert sorted(ranges) == ["mode", "rate", "width"]  # `plain` and `tries` (unmarked) are not tunable
    assert (ranges["width"].kind, ranges["width"].low, ranges["width"].high, ranges["width"].log) == ("int", 2, 40, True)
    assert ranges["rate"].kind == "float" and ranges["rate"].values() == (0.5, 0.6875, 0.875, 1.062, 1.25, 1.438, 1.625,
                                                                          1.812, 2.0)
    assert ranges["mode"].kind == "choice" and ranges["mode"].values() == ("near", "far")


def test_the_subclass_declaration_wins() -> None:
    ranges = tunable_ranges(Narrower)
    assert (ranges["width"].low, ranges["width"].high, ranges["width"].log) == (2, 4, False)
    assert "rate" not in ranges  # re-declared without a marker: not tunable in the subclass
    assert "mode" in ranges  # inherited through **kwargs


def test_hydra_schema_sees_plain_types() -> None:
    fields = {f.name: f.type for f in dataclasses.fields(searcher_config(PluginStyle))}
    assert (fields["width"], fields["rate"], fields["mode"]) == (int, float, str)
    genetic = {f.name: f.type for f in dataclasses.fields(registry.searchers()["genetic"].schema)}
    assert (genetic["popsize"], genetic["method"]) == (int, str)


def test_genetic_ranges_follow_tuning_the_tuner() -> None:
    ranges = tunable_ranges(GeneticSearcher)
    assert sorted(ranges) == ["maxiter", "method", "mutation_chance", "popsize"]
    assert ranges["method"].values() == ("single_point", "two_point", "uniform", "disruptive_uniform")
    assert (ranges["popsize"].low, ranges["popsize"].high, ranges["popsize"].log) == (4, 64, True)


@pytest.mark.parametrize("name", ["simulated_annealing", "genetic", "dual_annealing", "greedy_ils", "tag", "tag_scaled",
                                  "mc", "uct", "auto", "probabilistic", "optuna_tpe", "portfolio", "optuna_qmc", "optuna_gp",
                                  "optuna_cmaes", "probabilistic_trivial"])
def test_each_annotated_searcher_has_its_default_inside_its_ranges(name: str) -> None:
    cls = registry.searcher_class(name)
    ranges, defaults = tunable_ranges(cls), option_defaults(cls)
    assert ranges, f"{name} declares no tunable setting"
    for option, t in ranges.items():
        assert t.contains(defaults[option]), (option, defaults[option], t)


def test_random_has_no_tunable_settings() -> None:
    assert tunable_ranges(RandomSearcher) == {}
    assert tunable_ranges(Searcher) == {}


@pytest.mark.parametrize("make", [lambda: Tunable(3, 3), lambda: Tunable(0, 4, log=True), lambda: Tunable(choices=("a",)),
                                  lambda: Tunable(1, 2, choices=("a", "b")), lambda: Tunable(0.0, 1.0, points=1)])
def test_bad_markers_are_refused(make: Any) -> None:
    with pytest.raises(ConfigError):
        make()


def test_an_int_option_needs_integer_bounds() -> None:
    class Bad(RandomSearcher):
        def __init__(self, space: Any, *, n: Annotated[int, Tunable(0.5, 3.0)] = 1, **kwargs: Any) -> None:
            super().__init__(space, **kwargs)

    with pytest.raises(ConfigError, match="integer bounds"):
        tunable_ranges(Bad)


def test_help_shows_the_ranges() -> None:
    from searchlab.cli.main import help_text

    text = help_text(["searcher=genetic"])
    assert "; tunable [5, 150] log" in text
    assert "; tunable {single_point, two_point, uniform, disruptive_uniform}" in text
    assert "; tunable [0.0001, 0.05] log" in help_text(["searcher=simulated_annealing"])
    assert "tunable" not in help_text(["searcher=random"])
