"""An ``autotuning_methodology`` experiment file, read and expanded as the reference reads and expands it.

What the reference accepts is what runs (issue 51, item 1): the file is validated against the installed package's
own schema, which takes any ``version`` string (files of schema 1.0.0-1.2.0 are all in the field; the
``standardization`` branch's 1.2.0 schema is a subset of it); the groups are every GPU x application x strategy
(``experiments.get_experimental_groups``), each strategy's keys over ``experimental_groups_defaults``; a group
without an ``autotuner`` is refused, and KTT (or any autotuner but Kernel Tuner) is refused, both as the reference
refuses them. Each space is read by :mod:`.spaces`, the file's limits, names and strategies are checked by
:mod:`.checks`, and all of it happens before anything is written: a bad file is one line and exit 2
(:class:`~searchlab.errors.ConfigError`), never a half-made output directory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError
from searchlab.reproduce import checks
from searchlab.reproduce.spaces import Space, find, read_space

__all__ = ["Experiment", "Group", "load_experiment", "needs"]

TIME_KEYS = ("compilation", "runtimes", "framework", "search_algorithm", "validation")
EXTRA = "pip install 'searchlab[reproduce]'"


@dataclass(frozen=True)
class Group:
    """One strategy on one space, with the settings the file gives it."""

    space: Space
    name: str
    display_name: str
    search_method: str
    custom: str | None  # None: a Kernel Tuner strategy; "searchlab": SearchlabOptAlg from the registry; else a file
    hyperparameters: tuple[tuple[str, Any], ...]
    repeats: int
    samples: int
    stochastic: bool
    min_fraction_valid: float | None
    min_valid: int | None
    cutoff_margin: float
    seed: int | None = None  # a seed the file fixes (SearchlabOptAlg's ``seed``), used by every repeat

    @property
    def key(self) -> str:
        return f"{self.space.gpu}/{self.space.application}/{self.name}"


@dataclass(frozen=True)
class Experiment:
    path: Path
    raw: Mapping[str, Any] = field(repr=False)
    digest: str
    name: str
    version: str | None
    spaces: tuple[Space, ...]
    groups: tuple[Group, ...]
    strategies: tuple[str, ...]  # the file's strategy names, in its order
    display: Mapping[str, str]
    cutoff_percentile: float
    cutoff_percentile_start: float
    cutoff_type: str
    time_keys: tuple[str, ...]
    resolution: int
    confidence_level: float
    plots: tuple[Mapping[str, Any], ...]
    allow_code: bool = False


def needs() -> None:
    """Kernel Tuner and autotuning_methodology, or one line naming the extra that installs them."""
    from importlib.util import find_spec

    missing = [name for name in ("kernel_tuner", "autotuning_methodology") if find_spec(name) is None]
    if missing:
        raise ConfigError(f"searchlab reproduce runs Kernel Tuner and scores with autotuning_methodology; "
                          f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed: {EXTRA}")


def _read(path: Path) -> tuple[dict[str, Any], str]:
    import hashlib

    from jsonschema import ValidationError, validate

    from searchlab.core import files, jsondata

    shown = f"experiment file {str(path)!r}"
    if not path.exists():
        raise ConfigError(f"{shown}: no such file")
    data = files.read_bytes(path, "experiment file")  # a regular file, at most SEARCHLAB_MAX_READ_MB
    try:
        raw = jsondata.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{shown}: not JSON ({str(exc).splitlines()[0][:200]})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{shown}: its top level is {type(raw).__name__}, not an object")
    from autotuning_methodology.validators import get_experiment_schema_filepath

    schema = json.loads(get_experiment_schema_filepath().read_text(encoding="utf-8"))
    try:
        validate(instance=raw, schema=schema)
    except ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top)"
        raise ConfigError(f"{shown}: {where}: {exc.message[:300]} (autotuning_methodology's experiment schema, "
                          "which the reference validates against too)") from None
    return raw, hashlib.sha256(data).hexdigest()


def _autotuner(strategy: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
    tuner = strategy.get("autotuner", defaults.get("autotuner"))
    if tuner is None:
        raise ConfigError(f"strategy {strategy['name']!r}: no 'autotuner', in the strategy or experimental_groups_"
                          "defaults (the reference requires it for every group)")
    if tuner != "KernelTuner":
        raise ConfigError(f"strategy {strategy['name']!r}: autotuner {tuner!r} is not supported; only KernelTuner "
                          "runs (autotuning_methodology 1.1.0 refuses KTT too: 'KTT is working on supporting the "
                          "shared interface')")


def _custom(strategy: Mapping[str, Any], base: Path, allow_code: bool) -> tuple[str | None, int | None]:
    """Where a strategy's code comes from, and the seed a SearchlabOptAlg fixes."""
    what = f"strategy {strategy['name']!r}"
    method = str(strategy["search_method"])
    params = checks.hyperparameters(strategy, what)
    if "custom_search_method_path" not in strategy:
        if method not in checks.KERNEL_TUNER_STRATEGIES:
            raise ConfigError(f"{what}: search_method {method!r} is not a Kernel Tuner 1.5 strategy (one of: "
                              f"{', '.join(sorted(checks.KERNEL_TUNER_STRATEGIES))})")
        return None, None
    path = find(str(strategy["custom_search_method_path"]), base, f"{what}: custom_search_method_path")
    from searchlab.core.files import regular_file

    regular_file(path, f"{what}: custom_search_method_path")
    if checks.is_searchlab_module(path) and method == checks.SEARCHLAB_OPTALG:
        _, fixed, _ = checks.searchlab_params(params, what)
        return "searchlab", fixed
    if not allow_code:
        raise ConfigError(f"{what}: custom_search_method_path={str(path)!r} would import and run that file's code; "
                          "pass --allow-code to allow it (docs/security.md)")
    checks.custom_class(path, method, f"{what}: custom_search_method_path")
    return str(path), None


def _group(space: Space, strategy: Mapping[str, Any], defaults: Mapping[str, Any], custom: tuple[str | None, int | None],
           what: str) -> Group:
    merged = {**{k: v for k, v in defaults.items()
                 if k not in ("applications", "gpus", "pattern_for_full_search_space_filenames")}, **strategy}
    fraction = merged.get("minimum_fraction_of_budget_valid")
    return Group(space=space, name=str(strategy["name"]), display_name=str(strategy["display_name"]),
                 search_method=str(strategy["search_method"]), custom=custom[0],
                 hyperparameters=checks.hyperparameters(strategy, what),
                 repeats=checks.limited(merged.get("repeats", 100), f"{what}: repeats", 1, checks.MAX_REPEATS),
                 samples=checks.limited(merged.get("samples", 32), f"{what}: samples", 1, checks.MAX_SAMPLES),
                 stochastic=bool(merged.get("stochastic", True)),
                 min_fraction_valid=None if fraction is None else float(fraction),
                 min_valid=merged.get("minimum_number_of_valid_search_iterations"),
                 cutoff_margin=checks.margin(merged.get("cutoff_margin", 0.1), f"{what}: cutoff_margin"),
                 seed=custom[1])


def load_experiment(path: str | Path, allow_code: bool = False) -> Experiment:
    """The experiment file at ``path``, checked whole (one line per refusal, nothing written)."""
    needs()
    path = Path(path)
    raw, digest = _read(path)
    base = path.resolve().parent
    defaults, stats, vis = raw["experimental_groups_defaults"], raw["statistics_settings"], raw["visualization_settings"]
    strategies = raw["search_strategies"]
    names = [str(s["name"]) for s in strategies]
    checks.unique(names, "search_strategies")
    gpus = [str(g) for g in checks.nonempty(defaults.get("gpus"), "gpus")]
    apps = checks.nonempty(defaults.get("applications"), "applications")
    checks.unique(gpus, "gpus")
    checks.unique([str(a["name"]) for a in apps], "applications")
    for strategy in strategies:
        _autotuner(strategy, defaults)
    customs = {str(s["name"]): _custom(s, base, allow_code) for s in strategies}
    keys = list(stats["objective_time_keys"])
    time_keys = list(TIME_KEYS) if "all" in keys else keys
    resolution = vis["resolution"]
    if int(resolution) != resolution:
        raise ConfigError(f"visualization_settings.resolution={resolution!r}: must be an integer")
    checks.limited(int(resolution), "visualization_settings.resolution", 2, checks.MAX_RESOLUTION)
    checks.limited(len(gpus) * len(apps) * len(strategies), "groups (gpus x applications x strategies)", 1,
                   checks.MAX_GROUPS)
    t1s: dict[str, Any] = {}
    spaces = [read_space(raw, app, gpu, base, time_keys, t1s) for gpu in gpus for app in apps]
    groups = tuple(_group(sp, s, defaults, customs[str(s["name"])], f"group {sp.gpu}/{sp.application}/{s['name']}")
                   for sp in spaces for s in strategies)
    checks.limited(sum(g.repeats for g in groups), "repeats in all groups", 1, checks.MAX_TOTAL_REPEATS)
    version = raw.get("version")
    return Experiment(path=path.resolve(), raw=raw, digest=digest, name=str(raw["name"]),
                      version=None if version is None else str(version), spaces=tuple(spaces), groups=groups,
                      strategies=tuple(names), display={str(s["name"]): str(s["display_name"]) for s in strategies},
                      cutoff_percentile=float(stats["cutoff_percentile"]),
                      cutoff_percentile_start=float(stats["cutoff_percentile_start"]),
                      cutoff_type=str(stats["cutoff_type"]), time_keys=tuple(time_keys), resolution=int(resolution),
                      confidence_level=float(vis["confidence_level"]), plots=tuple(vis.get("plots") or ()),
                      allow_code=allow_code)
