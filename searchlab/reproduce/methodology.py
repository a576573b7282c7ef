"""The runs in the reference's own cache layout, so the reference's scorer scores exactly these runs.

``DIR/methodology/experiment.json`` is the experiment file with ``parent_folder`` set to that directory and
its paths made absolute; ``DIR/methodology/run/<strategy>/<gpu>_<application>.npz`` is what the package's
``ResultsDescription.set_results`` writes for the arrays of our stored repeats. The reference finds them in its
cache and does not run again, so ``get_strategy_scores("DIR/methodology/experiment.json")`` scores the very runs
``searchlab reproduce`` made (tests/reproduce and bench/reproduce_agree.py do). Skipped when a strategy, GPU or
application name is not a plain file name: the layout uses them as paths, and names never leave ``--out``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["export"]


def _absolute(raw: dict[str, Any], experiment: Any) -> None:
    defaults = raw["experimental_groups_defaults"]
    t1 = {s.application: s.t1.path for s in experiment.spaces}
    for app in defaults["applications"]:
        app["folder"] = str(t1[app["name"]].parent)
        app["input_file"] = t1[app["name"]].name
    pattern = defaults.get("pattern_for_full_search_space_filenames")
    if pattern is None:
        return
    first = experiment.spaces[0]
    filled = pattern["regex"].replace("${applications}", first.application).replace("${gpus}", first.gpu)
    base = str(first.t4)[: len(str(first.t4)) - len(filled)] if str(first.t4).endswith(filled) else ""
    if not Path(pattern["regex"]).is_absolute() and base:
        pattern["regex"] = base + pattern["regex"]
    for strategy in raw["search_strategies"]:
        if "custom_search_method_path" in strategy:
            custom = next(g.custom for g in experiment.groups if g.name == strategy["name"])
            if custom == "searchlab":
                import searchlab.integrations.kernel_tuner as ours

                custom = ours.__file__
            strategy["custom_search_method_path"] = str(custom)


def plain(experiment: Any) -> bool:
    """Whether every name the reference turns into a path (strategy, GPU, application) is a plain file name."""
    import re

    names = [*experiment.strategies, *(sp.gpu for sp in experiment.spaces), *(sp.application for sp in experiment.spaces)]
    return all(re.fullmatch(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]{0,99}", n) for n in names)


def export(experiment: Any, descs: Any, root: Path) -> Path | None:
    """Write ``root/methodology/`` (see the module docstring); returns its experiment file, or None where a name
    the reference would turn into a path is not a plain file name (names never leave the output directory)."""
    import copy
    import json

    from autotuning_methodology.caching import ResultsDescription

    from searchlab.reproduce.store import atomic_write

    if not plain(experiment):
        return None

    folder = (root / "methodology").absolute()
    raw = copy.deepcopy(dict(experiment.raw))
    raw["parent_folder"] = str(folder)
    raw["experimental_groups_defaults"]["ignore_cache"] = False
    _absolute(raw, experiment)
    for group in experiment.groups:
        ours = descs[group.space.gpu][group.space.application][group.name]
        target = folder / "run" / group.name / f"{group.space.gpu}_{group.space.application}.npz"
        if target.exists():
            target.unlink()  # a resume that ran more repeats: the package refuses to overwrite
        theirs = ResultsDescription(run_folder=folder / "run" / group.name, application_name=group.space.application,
                                    device_name=group.space.gpu, group_name=group.name,
                                    group_display_name=group.display_name, stochastic=group.stochastic,
                                    objective_time_keys=list(experiment.time_keys),
                                    objective_performance_keys=[group.space.objective],
                                    minimization=group.space.minimization)
        theirs.set_results(ours.arrays)
    path = folder / "experiment.json"
    atomic_write(path, json.dumps(raw, indent=1).encode())
    return path
