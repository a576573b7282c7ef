"""How ``searchlab reproduce``'s scores compare with the reference's: on the same runs, and on different runs.

- **Same runs.** ``get_strategy_scores`` (the reference's own scorer) on our runs, exported in its cache layout
  (``DIR/methodology/experiment.json``), NumPy seeded with 0 before it as before ours: the time axis must be equal
  to its 3 decimals (reproduce emulates its draw order); the evaluations axis is recomputed from that export with
  the package's own classes, space by space, and must agree within 1e-6.
- **Different runs.** The reference's own runs (its cache files) scored by the package's functions on both axes
  (the same pipeline reproduce uses), beside ours: the package's P and error, and the mean per-repeat P with its
  bootstrap interval for each side; a difference is reported, never a verdict beyond the intervals.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

SCORE = ("import json,sys,warnings,numpy as np;warnings.simplefilter('ignore');"
         "from autotuning_methodology.report_experiments import get_strategy_scores;np.random.seed(0);"
         "r=get_strategy_scores(sys.argv[1]);print('JSON'+json.dumps({k:{a:float(b) for a,b in v.items()} "
         "for k,v in r.items()}))")


def strategy_scores(experiment: Path, cwd: Path) -> dict[str, Any]:
    """``get_strategy_scores`` in a fresh process (its import and its statistics are part of its cost)."""
    proc = subprocess.run([sys.executable, "-c", SCORE, str(experiment)], capture_output=True, text=True, cwd=cwd)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("JSON")), None)
    if proc.returncode != 0 or line is None:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": tail[:300]}
    result: dict[str, Any] = json.loads(line[4:])
    return result


def _stats(experiment: Any) -> dict[str, Any]:
    from searchlab.reproduce.plan import statistics

    return {sp.key: statistics(experiment, sp) for sp in experiment.spaces}


def _reference_descs(experiment: Any, parent: Path) -> Any:
    """The reference's runs (its ``.npz`` cache) as the arrays reproduce scores."""
    from autotuning_methodology.caching import ResultsDescription

    from searchlab.reproduce.arrays import Description
    from searchlab.reproduce.curvetask import ARRAYS

    descs: dict[str, dict[str, dict[str, Any]]] = {}
    for g in experiment.groups:
        rd = ResultsDescription(parent / "run" / g.name, g.space.application, g.space.gpu, g.name, g.display_name,
                                g.stochastic, list(experiment.time_keys), [g.space.objective], g.space.minimization)
        results = rd.get_results()
        desc = Description(g.space.gpu, g.space.application, g.name, g.display_name, list(experiment.time_keys),
                            g.space.objective, g.space.minimization)
        desc.set_results({k: np.asarray(getattr(results, k)) for k in ARRAYS})
        descs.setdefault(g.space.gpu, {}).setdefault(g.space.application, {})[g.name] = desc
    return descs


def _summary(experiment: Any, scores: Any, rs: Any) -> dict[str, Any]:
    from searchlab.reproduce.repeat_stats import bootstrap
    from searchlab.reproduce.tables import pooled

    out: dict[str, Any] = {}
    for axis in ("fevals", "time"):
        for name in experiment.strategies:
            p = scores.aggregate.get(axis, {}).get(name)
            mean, lo, hi = bootstrap(pooled(rs.per_repeat.get(axis, {}), name, [sp.key for sp in experiment.spaces]))
            out.setdefault(axis, {})[name] = {"P": None if p is None else p[0], "error": None if p is None else p[1],
                                              "repeat_mean": mean, "repeat_ci": [lo, hi],
                                              "not_scored": scores.errors.get(axis, {}).get(name)}
    return out


def reference_scores(experiment_file: Path) -> dict[str, Any]:
    """The reference's own runs scored by the package's functions (reproduce's pipeline), both axes."""
    from searchlab.reproduce.experiment import load_experiment
    from searchlab.reproduce.repeat_stats import repeat_scores
    from searchlab.reproduce.scoring import score

    exp = load_experiment(experiment_file, allow_code=True)
    stats = _stats(exp)
    descs = _reference_descs(exp, Path(json.loads(experiment_file.read_text())["parent_folder"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = score(exp, stats, descs)
        return _summary(exp, scores, repeat_scores(exp, stats, descs, scores.ranges))


def _package_fevals(experiment: Any, stats: dict[str, Any], method: Path) -> dict[str, float]:
    """P on the evaluations axis from the exported cache, by the package's classes alone (mean over spaces)."""
    from autotuning_methodology.baseline import RandomSearchCalculatedBaseline
    from autotuning_methodology.caching import ResultsDescription
    from autotuning_methodology.curves import StochasticOptimizationAlgorithm

    per: dict[str, list[float]] = {}
    for g in experiment.groups:
        st = stats[g.space.key]
        f0, f1, _, _ = st.cutoff_point_fevals_time_start_end(experiment.cutoff_percentile_start,
                                                             experiment.cutoff_percentile)
        fevals = np.arange(f0, f1 + 1)
        rd = ResultsDescription(method.parent / "run" / g.name, g.space.application, g.space.gpu, g.name, g.name, True,
                                list(experiment.time_keys), [g.space.objective], g.space.minimization)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            split = StochasticOptimizationAlgorithm(rd).get_curve_over_fevals(
                fevals, dist=st.objective_performances_total_sorted, confidence_level=experiment.confidence_level)
        c = np.concatenate([split[2], split[6]]) if split[6].ndim > 0 else split[2]
        std = RandomSearchCalculatedBaseline(st).get_standardised_curve(fevals, c, x_type="fevals")
        per.setdefault(g.name, []).append(float(np.mean(std)))
    return {n: float(np.mean(v)) for n, v in per.items()}


def same_runs(experiment_file: Path, ours: Path) -> dict[str, Any]:
    """Our scores against the package's own scoring of our runs (module docstring)."""
    from searchlab.reproduce.experiment import load_experiment

    scores = json.loads((ours / "scores.json").read_text())
    method = ours / "methodology" / "experiment.json"
    if not method.is_file():
        return {"error": "no methodology export (a name is not a plain file name)"}
    theirs = strategy_scores(method, ours)
    out: dict[str, Any] = {"how": "get_strategy_scores on our runs (its cache layout), np.random.seed(0) before it "
                                  "and before ours; it rounds to 3 decimals", "get_strategy_scores": theirs}
    if "error" not in theirs:
        out["time_equal_to_3_decimals"] = all(
            round(scores["time"][n]["score"], 3) == v["score"] and round(scores["time"][n]["error"], 3) == v["error"]
            for n, v in theirs.items())
        out["time_max_abs_diff"] = max(abs(scores["time"][n]["score"] - v["score"]) for n, v in theirs.items())
    exp = load_experiment(experiment_file, allow_code=True)
    fevals = _package_fevals(exp, _stats(exp), method)
    out["fevals_max_abs_diff"] = max(abs(scores["fevals"][n]["score"] - v) for n, v in fevals.items())
    out["fevals_within_1e-6"] = out["fevals_max_abs_diff"] <= 1e-6
    return out
