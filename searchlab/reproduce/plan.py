"""Budgets, cutoffs and the cache each space's runs read, as the reference sets them.

``experiments.calculate_budget``: the cutoff points come from the package's own
``SearchspaceStatistics.cutoff_point_fevals_time_start_end`` on the T4 file; the budget is the cutoff time
(``cutoff_type: time``) or the cutoff evaluations (``fevals``), times ``1 + cutoff_margin`` (0.1 unless the
file says). ``runner.collect_results`` derives the minimum number of results a repeat must keep inside the
cutoff. Kernel Tuner's simulation mode reads its own cache format: the reference looks for it beside the T4
file (the T4 name without ``_T4``) and fails when it is not there; here such a space gets a cache converted
from the T4 file (benchmark time = the sum of the recorded runtimes, which is what the methodology's time
axis counts), written once into ``DIR/kt_cache/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from math import ceil
from pathlib import Path
from typing import Any

from searchlab.reproduce.experiment import Experiment, Group, Space
from searchlab.reproduce.kt import RepeatSpec, _values

__all__ = ["Plan", "make_plan", "statistics"]


@dataclass(frozen=True)
class Plan:
    group: Group
    spec: RepeatSpec  # seed 0: each repeat gets its own (:meth:`for_repeat`)

    def for_repeat(self, index: int) -> RepeatSpec:
        from dataclasses import replace
        from zlib import crc32

        return replace(self.spec, seed=crc32(f"{self.group.key}/{index}".encode()) & 0x7FFFFFFF)


def statistics(experiment: Experiment, space: Space) -> Any:
    """The package's ``SearchspaceStatistics`` of one space (schema checked by our reader, not again here)."""
    from autotuning_methodology.searchspace_statistics import SearchspaceStatistics

    return SearchspaceStatistics(application_name=space.application, device_name=space.gpu,
                                 minimization=space.minimization, objective_time_keys=list(experiment.time_keys),
                                 objective_performance_keys=[space.objective], full_search_space_file_path=space.t4,
                                 full_validate=False)


def _converted_cache(space: Space, out: Path) -> Path:
    """Kernel Tuner's cache format from the T4 file (only where the reference's own cache is missing)."""
    path = out / "kt_cache" / f"{space.gpu}_{space.application}.json"
    if path.is_file():
        return path
    t1 = json.loads(space.t1.read_text(encoding="utf-8"))
    params = {p["Name"]: _values(str(p["Values"])) for p in t1["ConfigurationSpace"]["TuningParameters"]}
    data = json.loads(space.t4.read_text(encoding="utf-8"))
    scale = {"seconds": 1000.0, "s": 1000.0, "microseconds": 1e-3}.get(data.get("metadata", {}).get("timeunit", ""), 1.0)
    cache: dict[str, Any] = {}
    for row in data["results"]:
        conf, times = row["configuration"], row.get("times", {})
        entry: dict[str, Any] = dict(conf)
        for m in row.get("measurements", []):
            entry[m["name"]] = m["value"]
        runtimes = [scale * float(t) for t in times.get("runtimes") or []]
        entry.update(times=runtimes, compile_time=scale * float(times.get("compilation", 0) or 0),
                     verification_time=scale * float(times.get("validation", 0) or 0),
                     benchmark_time=sum(runtimes), framework_time=scale * float(times.get("framework", 0) or 0),
                     strategy_time=0)
        cache[",".join(str(conf[n]) for n in params)] = entry
    spec = t1["KernelSpecification"]
    doc = {"device_name": space.gpu, "kernel_name": spec["KernelName"], "problem_size": spec["ProblemSize"],
           "tune_params_keys": list(params), "tune_params": params, "objective": space.objective, "cache": cache}
    from searchlab.reproduce.store import RepeatStore

    RepeatStore._write(path, json.dumps(doc).encode())
    return path


def _budget(experiment: Experiment, group: Group, stats: Any) -> tuple[dict[str, float], float, float, int]:
    _, fevals, start_time, end_time = stats.cutoff_point_fevals_time_start_end(experiment.cutoff_percentile_start,
                                                                              experiment.cutoff_percentile)
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


def make_plan(experiment: Experiment, out: Path, stats: dict[str, Any]) -> list[Plan]:
    """One plan per group; ``stats`` maps ``space.key`` to its ``SearchspaceStatistics``."""
    plans: list[Plan] = []
    caches: dict[str, Path] = {}
    for group in experiment.groups:
        space = group.space
        if space.key not in caches:
            caches[space.key] = space.kt_cache or _converted_cache(space, out)
        budget, start, cutoff, need = _budget(experiment, group, stats[space.key])
        spec = RepeatSpec(t1=str(space.t1), cache=str(caches[space.key]), objective=space.objective,
                          higher_is_better=not space.minimization, samples=group.samples,
                          search_method=group.search_method,
                          custom_path=str(group.custom_path) if group.custom_path else None,
                          hyperparameters=group.hyperparameters, budget=tuple(budget.items()),
                          cutoff_time_start=start, cutoff_time=cutoff, min_num_evals=need,
                          time_keys=experiment.time_keys, seed=0)
        plans.append(Plan(group, spec))
    return plans
