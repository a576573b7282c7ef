"""Our Kernel Tuner methodology score against the ``autotuning-methodology`` package on the same runs.

The package (a test-only dependency in the ``dev`` extra, imported lazily) cannot be driven on
our records without its experiment files, so its own functions are called on our arrays: its
``SearchspaceStatistics.cutoff_point_fevals_time_start_end`` (the range),
``RandomSearchCalculatedBaseline`` (the random curve, PCHIP smoothing included),
``StochasticOptimizationAlgorithm.get_curve_over_fevals`` (the searcher's curve) and
``Baseline.get_standardised_curve``, then ``np.mean`` as its ``get_strategy_scores`` does.
The runs are real: random search and simulated annealing replaying a Kernel Tuner cache
(convolution on an A100, 4362 configurations) through the search loop.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from searchlab.study.analysis import methodology as KT

CACHE = Path(__file__).resolve().parents[3] / "shared" / "data" / "kernel_tuner" / "convolution_A100.json.gz"


def _package() -> object:
    try:
        import autotuning_methodology.baseline as baseline
    except ImportError as exc:  # only when it cannot be installed (it is in the dev extra)
        pytest.skip(f"autotuning-methodology is not installed ({exc}): pip install -e '.[dev]'")
    return baseline


@pytest.fixture(scope="module")
def runs() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    if not CACHE.is_file():
        pytest.skip(f"no Kernel Tuner cache at {CACHE}")
    from searchlab.adapters.knobs.kernel_tuner import KernelTunerCache
    from searchlab.api import optimize
    from searchlab.run.loop import Budget
    from searchlab.searchers import RandomSearcher
    from searchlab.searchers._sequential.simulated_annealing import SimulatedAnnealingSearcher

    problem = KernelTunerCache(path=str(CACHE))
    values = np.array([m.objective if m.objective is not None else np.nan for m in problem.table.rows.values()])
    out = {}
    for name, make in (("random", RandomSearcher), ("simulated_annealing", SimulatedAnnealingSearcher)):
        curves = []
        for seed in range(8):
            outcome = optimize(problem, make(problem.space, seed=seed), Budget(evaluations=60))
            objective = np.array([r.objective if r.objective is not None else np.nan for r in outcome.results])
            curves.append(np.fmin.accumulate(objective))  # NaN until the first valid result, as the package records
        out[name] = np.array(curves)
    return values, out


def _theirs(values: np.ndarray, best: np.ndarray, cutoff: float) -> tuple[float, np.ndarray, np.ndarray]:
    baseline = _package()
    from autotuning_methodology.curves import StochasticOptimizationAlgorithm
    from autotuning_methodology.searchspace_statistics import SearchspaceStatistics

    stats = SearchspaceStatistics.__new__(SearchspaceStatistics)  # its arrays, set from our table
    ascending = np.sort(values[np.isfinite(values)])
    stats.minimization = True
    stats.objective_performances_total_sorted = ascending
    stats.objective_performances_total_sorted_nan = np.concatenate([ascending, np.full(np.isnan(values).sum(), np.nan)])
    stats.total_time_median = lambda: 1.0  # only the time axis needs it
    start, end, _, _ = stats.cutoff_point_fevals_time_start_end(KT.START, cutoff)
    fevals = np.arange(start, end + 1)
    random = baseline.RandomSearchCalculatedBaseline(stats)
    curve = StochasticOptimizationAlgorithm.__new__(StochasticOptimizationAlgorithm)
    curve.display_name = "ours"
    curve._x_fevals = np.tile(np.arange(1, best.shape[1] + 1, dtype=float), (best.shape[0], 1)).T
    curve._y = best.T  # evaluations x repeats, as the package stores results
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        split = curve.get_curve_over_fevals(fevals, dist=ascending, confidence_level=0.95)
        searcher = np.concatenate([split[2], split[6]]) if split[6].ndim > 0 else split[2]
        standardised = random.get_standardised_curve(fevals, searcher, x_type="fevals")
    return float(np.mean(standardised)), standardised, fevals


@pytest.mark.slow
@pytest.mark.parametrize("cutoff", [KT.CUTOFF, 0.7])  # 0.95: evaluations 2-1050 (runs carried); 0.7: 2-25
def test_our_score_equals_the_package_on_the_same_runs(runs: tuple[np.ndarray, dict[str, np.ndarray]],
                                                       cutoff: float) -> None:
    values, by_searcher = runs
    scores = {}
    for name, best in by_searcher.items():
        theirs, their_curve, fevals = _theirs(values, best, cutoff)
        ours, our_curve, rng = KT.methodology_score(values, True, best, cutoff=cutoff)
        assert (rng.start, rng.end) == (fevals[0], fevals[-1])
        assert np.abs(our_curve - their_curve).max() < 1e-6
        assert abs(ours - theirs) < 1e-6
        scores[name] = ours
    # and the check can fail: the two searchers score differently, and a perturbed run changes it
    assert scores["random"] != scores["simulated_annealing"]
    best = by_searcher["random"].copy()
    best[:, :5] = np.nanmax(values)
    assert abs(KT.methodology_score(values, True, best, cutoff=cutoff)[0] - scores["random"]) > 1e-3
