"""Kernel Tuner's side of ``bench/peers.py``, and how each side counts the recorded failures (issue 22).

Kernel Tuner 1.5's simulation mode (``interface.tune_cache``) restricts the search space to the
cache entries that hold no error (``util.infer_restrictions_from_cache``): its strategies never
propose a configuration the cache records as failed, and on convolution_A100 they search 4,201
configurations where a live run would have met 4,362 (161 failed). Two countings, each applied
to both sides so that a row compares like with like:

- ``hidden`` (as live): Kernel Tuner runs ``tune_kernel(..., simulation_mode=True)`` with one
  restriction that admits every recorded configuration, failed ones included
  (:func:`restriction`), so its strategies meet the failures and spend budget on them as they
  would have on the device; searchlab replays ``recorded_failures=hidden`` (the default).
- ``known`` (Kernel Tuner's simulation mode): ``tune_cache`` as shipped; searchlab replays
  ``recorded_failures=known``, the failed entries being known-infeasible.
"""

from __future__ import annotations

import gzip
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

COUNTINGS = ("hidden", "known")


def restriction(cache: Mapping[str, Any], counting: str) -> Callable[..., bool]:
    """Kernel Tuner restriction over the recorded configurations: all of them (``hidden``) or,
    as ``util.infer_restrictions_from_cache``, those without an error (``known``)."""
    names = cache["tune_params_keys"]
    admitted = {tuple(e[n] for n in names) for e in cache["cache"].values()
                if counting == "hidden" or "__error__" not in e}

    def admit(*values: Any) -> bool:
        return values in admitted

    return admit


def kt_results(table: str, strategy: str, seed: int, budget: int, counting: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Kernel Tuner's results (one per proposal, repeats included) and its parameter names."""
    from constraint import FunctionConstraint
    from kernel_tuner import util
    from kernel_tuner.interface import tune_kernel

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cache.json"
        with gzip.open(table, "rt") as src:
            path.write_text(src.read())
        cache = util.read_cache(str(path), open_cache=False)
        args = util.infer_args_from_cache(cache)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results, _ = tune_kernel(**args, cache=str(path), simulation_mode=True,
                                     restrictions=[FunctionConstraint(restriction(cache, counting))],
                                     strategy=strategy, strategy_options={"max_fevals": budget}, quiet=True, seed=seed)
    return results, list(cache["tune_params_keys"])


def kt_run(args: tuple[str, str, int, int, str]) -> list[float]:
    """Best-so-far objective after each distinct cached configuration Kernel Tuner looked up
    (a failed one counts and keeps the best so far)."""
    table, strategy, seed, budget, counting = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from searchlab.core import threads

    threads.limit_pools(1)
    results, names = kt_results(table, strategy, seed, budget, counting)
    seen: set[tuple[object, ...]] = set()
    best, curve = np.inf, []
    for r in results:
        key = tuple(r[n] for n in names)
        if key in seen:
            continue
        seen.add(key)
        value = r.get("time")
        if isinstance(value, (int, float)) and np.isfinite(value):
            best = min(best, float(value))
        curve.append(best)
    return curve[:budget]


def ours_run(args: tuple[str, str, int, int, str], options: Mapping[str, Any] | None = None) -> list[float]:
    """Best-so-far objective after each measurement of a searchlab searcher (known-infeasible
    proposals are not measurements and are not counted)."""
    table, name, seed, budget, counting = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from searchlab import registry
    from searchlab.core import threads

    threads.limit_pools(1)  # one worker per core: numpy's OpenBLAS, loaded before, had a thread per core
    from searchlab.adapters.knobs import KernelTunerCache
    from searchlab.api import optimize
    from searchlab.run.loop import Budget

    problem = KernelTunerCache(path=table, recorded_failures=counting)
    searcher = registry.searcher_class(name)(problem.space, direction=problem.direction, seed=seed, **dict(options or {}))
    outcome = optimize(problem, searcher, Budget(evaluations=budget))
    best, curve = np.inf, []
    for r in outcome.results:
        if r.measurement.status.value == "infeasible":
            continue
        if r.ok and r.measurement.objective is not None:
            best = min(best, float(r.measurement.objective))
        curve.append(best)
    return curve[:budget]


def failed_tables(tables: list[Path]) -> frozenset[str]:
    """Names of the tables that record a failed configuration: the only ones where the countings differ."""
    import json

    out = set()
    for table in tables:
        with gzip.open(table, "rt") as fh:
            if any(isinstance(e.get("time"), str) for e in json.load(fh)["cache"].values()):
                out.add(table.name)
    return frozenset(out)


def counting_of(name: str, row: Mapping[str, Any]) -> str:
    """A row's counting; rows stored before issue 22 carry none: Kernel Tuner's ran ``tune_cache``
    (known), ours the default replay (hidden)."""
    return str(row.get("counting") or ("known" if name.startswith("kt:") else "hidden"))


def complete(new: dict[str, Any], stored: Mapping[str, Any], name: str, failed: frozenset[str]) -> dict[str, Any]:
    """``new`` (run on some tables) completed with ``stored``'s per-run values on the tables it lacks,
    for the seeds both hold; a table is taken only where both countings coincide (no recorded
    failure) or the stored row counts alike. ``new`` as it is when nothing can be added."""
    runs, first = dict(new.get("runs") or {}), int(new.get("first_seed", 0))
    if not runs:
        return new
    seeds_new = range(first, first + len(next(iter(runs.values()), [])))
    old, old_first = stored.get("runs") or {}, int(stored.get("first_seed", 0))
    same = counting_of(name, stored) == counting_of(name, new)
    extra = [t for t in old if t not in runs and (same or t not in failed)]
    if not extra:
        return new
    seeds_old = range(old_first, old_first + len(next(iter(old.values()))))
    common = [s for s in seeds_new if s in seeds_old]
    if not common:
        return new
    keys = [k for k in new if k.startswith("@")]  # checkpoints: a prefix of the stored row's
    table_runs = {t: [v[s - first] for s in common] for t, v in runs.items()}
    table_runs.update({t: [old[t][s - old_first][:len(keys)] for s in common] for t in extra})
    frac = np.array([v for per_seed in table_runs.values() for v in per_seed])
    rng = np.random.default_rng(0)
    row: dict[str, Any] = {k: _stats(frac[:, i], rng) for i, k in enumerate(keys)}
    scores = {**{t: stored["methodology_score"][t] for t in extra}, **new["methodology_score"]}
    weights = (len(runs), len(extra))  # the plotted curve only: approximate (stored curve over all its tables)
    curve = [(weights[0] * x + weights[1] * y) / sum(weights) for x, y in zip(new["mean_curve"], stored["mean_curve"])]
    row.update(methodology_score=scores, runs=table_runs, first_seed=common[0], counting=counting_of(name, new),
               mean_curve=curve, completed_from_stored=sorted(extra))
    return row


def _stats(fractions: np.ndarray, rng: np.random.Generator) -> dict[str, object]:
    means = [float(np.mean(rng.choice(fractions, len(fractions)))) for _ in range(2000)]
    return {"mean": float(np.mean(fractions)), "median": float(np.median(fractions)),
            "ci95": [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))]}
