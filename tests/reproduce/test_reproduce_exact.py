"""Where reproduce computes the package's numbers its own faster way, they are the package's numbers, bit for bit:
the result arrays (``runner.write_results``), the time-axis curve with its bagging (``get_curve_over_time``) and
the random-search baseline (``RandomSearchCalculatedBaseline``), on real Kernel Tuner runs."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.reproduce.conftest import experiment

KEYS = ["compilation", "runtimes", "framework", "search_algorithm", "validation"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Four repeats of two strategies on the shared MI250X space: their T4 results and compact runs."""
    import searchlab.reproduce.arrays as arrays
    from searchlab.reproduce.experiment import load_experiment
    from searchlab.reproduce.kt import run_repeat
    from searchlab.reproduce.plan import make_plan, statistics
    from searchlab.reproduce.spaces import write_cache

    tmp = tmp_path_factory.mktemp("exact")
    exp = load_experiment(experiment(tmp))
    stats = {s.key: statistics(exp, s) for s in exp.spaces}
    plans = make_plan(exp, {s.key: write_cache(s, tmp / "kc") for s in exp.spaces}, stats)
    out: dict[str, Any] = {"stats": next(iter(stats.values())), "groups": {}}
    original = arrays.compact
    for plan in plans:
        t4s: list[dict[str, Any]] = []

        def grab(t4: dict[str, Any], objective: str, keys: Any, t4s: list[dict[str, Any]] = t4s) -> dict[str, Any]:
            t4s.append(copy.deepcopy(t4))
            return original(t4, objective, keys)

        arrays.compact = grab
        try:
            compact = [run_repeat(plan.for_repeat(i))["run"] for i in range(4)]
        finally:
            arrays.compact = original
        out["groups"][plan.group.name] = (t4s[-4:], compact)
    return out


def _package_arrays(t4s: list[dict[str, Any]]) -> Any:
    from autotuning_methodology.runner import write_results
    from autotuning_methodology.searchspace_statistics import convert_from_time_unit

    from searchlab.reproduce.arrays import Description

    repeats = []
    for t4 in copy.deepcopy(t4s):  # what runner.tune does to each run: every time converted to seconds
        for result in t4["results"]:
            result["times"] = {k: convert_from_time_unit(v, t4["metadata"]["timeunit"]) for k, v in result["times"].items()}
        repeats.append(t4["results"])
    desc = Description("MI250X", "convolution_milo", "x", "x", KEYS, "time", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_results(repeats, desc, compressed=False)
    return desc


def test_arrays_curves_and_baseline_are_the_packages(runs: dict[str, Any]) -> None:
    from autotuning_methodology.baseline import RandomSearchCalculatedBaseline
    from autotuning_methodology.curves import StochasticOptimizationAlgorithm

    from searchlab.reproduce.arrays import write_arrays
    from searchlab.reproduce.fastcurve import FastBaseline, SeededCurve

    stats = runs["stats"]
    f0, f1, t0, t1 = stats.cutoff_point_fevals_time_start_end(0.01, 0.9)
    for resolution in (500, 40_000):
        time_range = np.linspace(t0, t1, resolution)
        assert np.array_equal(FastBaseline(stats).get_curve(time_range, "time"),
                              RandomSearchCalculatedBaseline(stats).get_curve(time_range, "time"))
    fevals = np.arange(f0, f1 + 1)
    assert np.array_equal(FastBaseline(stats).get_curve(fevals, "fevals"),
                          RandomSearchCalculatedBaseline(stats).get_curve(fevals, "fevals"))
    for name, (t4s, compact) in runs["groups"].items():
        package = _package_arrays(t4s)
        ours = write_arrays(compact, True)
        for key, value in package.arrays.items():
            assert np.array_equal(value, ours[key], equal_nan=True), (name, key)
        for resolution in (500, 40_000):
            time_range = np.linspace(t0, t1, resolution)
            np.random.seed(11)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = StochasticOptimizationAlgorithm(package).get_curve_over_time(
                    time_range, dist=stats.objective_performances_total_sorted, confidence_level=0.95)
                after = np.random.get_state()[1].copy()
                np.random.seed(11)
                mine = SeededCurve(package, np.random.get_state()).get_curve_over_time(
                    time_range, dist=stats.objective_performances_total_sorted, confidence_level=0.95)
            for a, b in zip(theirs, mine):
                assert np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True), (name, resolution)
            from sklearn.ensemble._bagging import MAX_INT

            from searchlab.reproduce.fastcurve import bagging_estimators

            np.random.seed(11)  # the draws emulated for a curve that is not computed: the same state after
            np.random.randint(MAX_INT, size=bagging_estimators(ours["fevals_results"].shape[1]))
            assert np.array_equal(np.random.get_state()[1], after)


def test_the_time_axis_order_is_get_strategy_scores_on_several_spaces(tmp_path: Path) -> None:
    """Two spaces: ``get_strategy_scores`` draws a curve for every GPU x application x strategy group in every
    space and keeps the last of a name; reproduce's scores are its numbers, exactly (issue 51)."""
    import json

    from autotuning_methodology.report_experiments import get_strategy_scores

    from searchlab.reproduce.cli import reproduce
    from tests.reproduce.conftest import raw_experiment, write

    raw = raw_experiment(tmp_path, repeats=3)
    raw["experimental_groups_defaults"]["gpus"] = ["MI250X", "W6600"]
    out = tmp_path / "out"
    reproduce(str(write(tmp_path, raw)), str(out), workers=1, quiet=True)
    scores = json.loads((out / "scores.json").read_text())["time"]
    np.random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = get_strategy_scores(str(out / "methodology" / "experiment.json"))
    assert {n: (round(v["score"], 3), round(v["error"], 3)) for n, v in scores.items()} == \
        {n: (v["score"], v["error"]) for n, v in theirs.items()}
