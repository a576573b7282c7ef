"""``searchlab reproduce`` end to end, scored against the reference package on the same runs.

The runs are real (Kernel Tuner 1.5's ``random_sample`` and ``genetic_algorithm`` in simulation mode on the
shared MI250X convolution_milo space). The time axis must be exactly ``get_strategy_scores`` on the same runs
(exported in the package's cache layout), NumPy seeded alike: reproduce emulates its draw order; the evaluations
axis is recomputed from the exported cache files with the package's own classes. ``searchlab.study`` reads the
directory as a study.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from searchlab.reproduce.cli import reproduce
from tests.reproduce.conftest import HUB, experiment


def _package_fevals(method_file: Path, name: str) -> float:
    from autotuning_methodology.baseline import RandomSearchCalculatedBaseline
    from autotuning_methodology.caching import ResultsDescription
    from autotuning_methodology.curves import StochasticOptimizationAlgorithm
    from autotuning_methodology.searchspace_statistics import SearchspaceStatistics

    keys = ["compilation", "runtimes", "framework", "search_algorithm", "validation"]
    stats = SearchspaceStatistics("convolution_milo", "MI250X", True, keys, ["time"],
                                  HUB / "cachefiles" / "convolution_milo" / "MI250X_T4.json", full_validate=True)
    start, end, _, _ = stats.cutoff_point_fevals_time_start_end(0.01, 0.9)
    fevals = np.arange(start, end + 1)
    rd = ResultsDescription(method_file.parent / "run" / name, "convolution_milo", "MI250X", name, name, True, keys,
                            ["time"], True)
    curve = StochasticOptimizationAlgorithm(rd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        split = curve.get_curve_over_fevals(fevals, dist=stats.objective_performances_total_sorted,
                                            confidence_level=0.95)
    c = np.concatenate([split[2], split[6]]) if split[6].ndim > 0 else split[2]
    return float(np.mean(RandomSearchCalculatedBaseline(stats).get_standardised_curve(fevals, c, x_type="fevals")))


def test_scores_are_the_packages_on_the_same_runs_and_the_study_reads_the_directory(tmp_path: Path) -> None:
    from autotuning_methodology.report_experiments import get_strategy_scores

    out = tmp_path / "out"
    result = reproduce(str(experiment(tmp_path, repeats=3)), str(out), workers=1, quiet=True)
    scores = json.loads((out / "scores.json").read_text())
    assert set(scores["time"]) == {"random", "ga"} and scores["not_scored"] == {}
    method = out / "methodology" / "experiment.json"
    for name in ("random", "ga"):
        assert abs(scores["fevals"][name]["score"] - _package_fevals(method, name)) < 1e-6
    np.random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = get_strategy_scores(str(method))
    for name in ("random", "ga"):  # the package rounds to 3 decimals; the draws are the same, so no more than that
        assert round(scores["time"][name]["score"], 3) == theirs[name]["score"]
        assert round(scores["time"][name]["error"], 3) == theirs[name]["error"]
    assert (out / "figures" / "all_aggregate.svg").is_file() and "<svg" in (out / "report.html").read_text()
    details = json.loads((out / "details.json").read_text())
    seeds = details["seeds"]["MI250X/convolution_milo/random"]
    assert [s[0] for s in seeds] == [0, 1, 2] and len({s[1] for s in seeds}) == 3  # each repeat's own seed, recorded
    for row in details["rows"]:  # every repeat's own P is kept, and the table's mean is its mean
        if row["space"] != "all" and row["repeat_mean"] is not None:
            per = details["per_repeat"][row["axis"]][row["space"]][row["strategy"]]
            assert len(per) == 3 and abs(sum(per) / 3 - row["repeat_mean"]) < 1e-9
    again = reproduce(str(experiment(tmp_path, repeats=3)), str(out), workers=1, quiet=True)
    assert again["ran"] == 0 and json.loads((out / "scores.json").read_text()) == scores
    from searchlab.study.__main__ import main as study

    assert study([str(out), "--out", str(tmp_path / "study")]) == 0
    summary = (tmp_path / "study" / "summary.md").read_text()
    assert "MI250X/convolution_milo" in summary and "random" in summary and "ga" in summary
    assert result["ran"] == 6
