"""Kernel Tuner 1.5's own simulation runs on a shared table, counted as searchlab counts its replays.

Kernel Tuner's simulation mode (``interface.tune_cache``) restricts the search space to the cache entries that
hold no error (``util.infer_restrictions_from_cache``): its strategies never propose a configuration the cache
records as failed. Two countings, each applied to both sides so that a comparison is like with like:

- ``hidden`` (as live): ``tune_kernel(..., simulation_mode=True)`` with one restriction that admits every
  recorded configuration, failed ones included (:func:`restriction`), so its strategies meet the failures and
  spend budget on them as they would on the device; searchlab replays ``recorded_failures=hidden``.
- ``known`` (Kernel Tuner's simulation mode): only the entries without an error; searchlab replays
  ``recorded_failures=known``.

A curve is the best-so-far objective after each *distinct* configuration looked up (a failed one counts and
keeps the best so far), padded to the budget with its last value (:func:`pad`); a fraction of the optimum is
the table's best time over it.
"""

from __future__ import annotations

import gzip
import json
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

COUNTINGS = ("hidden", "known")


def restriction(cache: Mapping[str, Any], counting: str) -> Callable[..., bool]:
    """A Kernel Tuner restriction over the recorded configurations: all of them (``hidden``) or, as
    ``util.infer_restrictions_from_cache``, those without an error (``known``)."""
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


def kt_run(job: tuple[str, str, int, int, str]) -> list[float]:
    """Best-so-far objective after each distinct configuration Kernel Tuner looked up (one worker: one thread)."""
    from searchlab.core import threads

    table, strategy, seed, budget, counting = job
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


def table_optimum(table: Path) -> float:
    """The best recorded time of a Kernel Tuner cache (failed entries have none)."""
    with gzip.open(table, "rt") as fh:
        data = json.load(fh)
    return min(float(e["time"]) for e in data["cache"].values() if isinstance(e.get("time"), (int, float)))


def pad(curve: list[float], budget: int) -> np.ndarray:
    """A best-so-far curve of ``budget`` entries: a run that converged or ran out keeps its best."""
    out = np.full(budget, np.inf)
    out[:len(curve)] = curve
    if curve:
        out[len(curve):] = curve[-1]
    return out
