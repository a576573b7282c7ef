"""Budgets, cutoffs, seeds and the repeats to run, as the reference sets them.

``experiments.calculate_budget``: the cutoff points come from the package's own
``SearchspaceStatistics.cutoff_point_fevals_time_start_end`` on the space; the budget is the cutoff time
(``cutoff_type: time``) or the cutoff evaluations (``fevals``), times ``1 + cutoff_margin`` (0.1 unless the file
says). ``runner.collect_results`` derives the minimum number of results a repeat must keep inside the cutoff.
The statistics are built from the space as :mod:`searchlab.interchange.t4_space` read and checked it (the package
is handed that document instead of reading the file again).

Seeds: repeat ``i`` of a group gets ``crc32("<gpu>/<application>/<strategy>/<i>")`` (recorded with the repeat),
unless the file fixes one (``SearchlabOptAlg``'s ``seed``), which is then used, and recorded, as given.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, replace
from math import ceil
from pathlib import Path
from typing import Any
from zlib import crc32

from searchlab.reproduce.experiment import Experiment, Group
from searchlab.reproduce.kt import RepeatSpec
from searchlab.reproduce.spaces import Space

__all__ = ["Plan", "make_plan", "statistics"]


@dataclass(frozen=True)
class Plan:
    group: Group
    spec: RepeatSpec  # seed 0: each repeat gets its own (:meth:`for_repeat`)

    def seed(self, index: int) -> int:
        if self.group.seed is not None:
            return self.group.seed
        return crc32(f"{self.group.key}/{index}".encode()) & 0x7FFFFFFF

    def for_repeat(self, index: int) -> RepeatSpec:
        return replace(self.spec, seed=self.seed(index), seed_fixed=self.group.seed is not None)


class _LazyPyplot(types.ModuleType):
    """``matplotlib.pyplot`` imported on first use: the package's statistics module imports it at the top for a
    histogram it draws on request only, and pyplot costs 0.2 s before the first repeat of every run."""

    def __getattr__(self, name: str) -> Any:
        import importlib

        return getattr(importlib.import_module("matplotlib.pyplot"), name)


def _statistics_module() -> Any:
    import sys

    if "autotuning_methodology.searchspace_statistics" not in sys.modules and "matplotlib.pyplot" not in sys.modules:
        sys.modules["matplotlib.pyplot"] = _LazyPyplot("matplotlib.pyplot")
        try:
            import autotuning_methodology.searchspace_statistics  # noqa: F401
        finally:
            del sys.modules["matplotlib.pyplot"]  # the next ``import matplotlib.pyplot`` is the real one
    from autotuning_methodology import searchspace_statistics

    return searchspace_statistics


def statistics(experiment: Experiment, space: Space) -> Any:
    """The package's ``SearchspaceStatistics`` of one space, from the document searchlab read and checked."""
    import warnings
    from unittest import mock

    module = _statistics_module()

    with mock.patch.object(module, "load_T4_format", lambda path, validate=True: space.doc), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return module.SearchspaceStatistics(application_name=space.application, device_name=space.gpu,
                                            minimization=space.minimization,
                                            objective_time_keys=list(experiment.time_keys),
                                            objective_performance_keys=[space.objective],
                                            full_search_space_file_path=space.t4, full_validate=False)


def _budget(experiment: Experiment, group: Group, stats: Any) -> tuple[dict[str, float], float, float, int]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, fevals, start_time, end_time = stats.cutoff_point_fevals_time_start_end(
            experiment.cutoff_percentile_start, experiment.cutoff_percentile)
    cutoff_start = max(start_time, 0.0) if experiment.cutoff_percentile_start > 0.0 else 0.0
    cutoff = end_time * (1 + group.cutoff_margin)
    if experiment.cutoff_type == "time":
        budget: dict[str, float] = {"time_limit": cutoff}
        max_fevals = max(round(cutoff / stats.get_time_per_feval("mean_per_feval")), 2)
    else:
        max_fevals = min(ceil(fevals * (1 + group.cutoff_margin)), stats.size)
        budget = {"max_fevals": max_fevals}
    if group.min_fraction_valid is not None:
        need = max(round(group.min_fraction_valid * min(max_fevals, stats.size)), 2)
        if group.min_valid is not None:
            need = max(min(need, group.min_valid), 2)
    else:
        need = int(group.min_valid or 10)
    return budget, cutoff_start, cutoff, need


def make_plan(experiment: Experiment, caches: dict[str, Path], stats: dict[str, Any]) -> list[Plan]:
    """One plan per group; ``caches`` and ``stats`` map ``space.key`` to its Kernel Tuner cache and statistics."""
    plans: list[Plan] = []
    for group in experiment.groups:
        space = group.space
        budget, start, cutoff, need = _budget(experiment, group, stats[space.key])
        spec = RepeatSpec(t1=str(space.t1.path), cache=str(caches[space.key]), objective=space.objective,
                          higher_is_better=not space.minimization, samples=group.samples,
                          search_method=group.search_method, custom=group.custom,
                          hyperparameters=group.hyperparameters, budget=tuple(budget.items()),
                          cutoff_time_start=start, cutoff_time=cutoff, min_num_evals=need,
                          time_keys=experiment.time_keys, seed=0)
        plans.append(Plan(group, spec))
    return plans
