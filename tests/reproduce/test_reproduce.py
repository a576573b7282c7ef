"""``searchlab reproduce`` end to end, scored against the reference package on the same runs.

The runs are real (Kernel Tuner 1.5's ``random_sample`` and ``genetic_algorithm`` in simulation mode on the
shared MI250X convolution_milo space). The evaluations axis is recomputed here from the reference's own cache
files of those runs (``DIR/methodology``) with the package's classes, the T4 file fully validated; the time
axis is the package's ``get_strategy_scores`` on them, NumPy seeded as ``searchlab reproduce`` seeds it.
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


def test_scores_agree_with_the_package_on_the_same_runs(tmp_path: Path) -> None:
    from autotuning_methodology.report_experiments import get_strategy_scores

    out = tmp_path / "out"
    result = reproduce(str(experiment(tmp_path)), str(out), workers=0, quiet=True)
    scores = json.loads((out / "scores.json").read_text())
    assert set(scores) == {"fevals", "time"} and set(scores["time"]) == {"random", "ga"}
    assert sorted(p.name for p in (out / "repeats").rglob("*.json.gz")) == ["0000.json.gz"] * 2 + ["0001.json.gz"] * 2
    for name in ("random", "ga"):
        assert abs(scores["fevals"][name]["score"] - _package_fevals(Path(result["paths"]["methodology"]), name)) < 1e-6
    np.random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = get_strategy_scores(result["paths"]["methodology"])
    for name in ("random", "ga"):  # the package rounds to 3 decimals
        assert abs(scores["time"][name]["score"] - float(theirs[name]["score"])) <= 5e-4 + 1e-9
        assert abs(scores["time"][name]["error"] - float(theirs[name]["error"])) <= 5e-4 + 1e-9
    for stem in ("aggregate", "heatmap", "space_MI250X_convolution_milo"):
        assert (out / "figures" / f"{stem}.svg").is_file() and (out / "figures" / f"{stem}.png").is_file()
    for ext in ("md", "tex", "csv"):
        assert "Random" in (out / f"table.{ext}").read_text() or "random" in (out / f"table.{ext}").read_text()
    assert "<svg" in (out / "report.html").read_text()
    # a second call on the same directory runs nothing and gives the same scores
    again = reproduce(str(experiment(tmp_path)), str(out), workers=0, quiet=True)
    assert again["ran"] == 0 and json.loads((out / "scores.json").read_text()) == scores
