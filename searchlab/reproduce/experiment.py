"""An ``autotuning_methodology`` schema-1.2.0 experiment file, read and expanded as the reference expands it.

The reference (``autotuning_methodology/experiments.py``, ``get_experimental_groups``) makes one group per
GPU x application x strategy, each strategy's keys over ``experimental_groups_defaults``; relative paths
are taken from the working directory. We do the same, falling back to the experiment file's own directory
so a file works from anywhere, and check everything a run needs *before* anything is written: a bad file is
one line and exit 2 (:class:`~searchlab.errors.ConfigError`), never a half-made output directory.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError

__all__ = ["Experiment", "Group", "Space", "load_experiment"]

TIME_KEYS = ("compilation", "runtimes", "framework", "search_algorithm", "validation")


@dataclass(frozen=True)
class Space:
    """One brute-forced space: a GPU x application, its T4 file and (when there) Kernel Tuner's cache."""

    gpu: str
    application: str
    t1: Path  # the application's T1 input file (tuning parameters, restrictions)
    t4: Path  # the full search space file the pattern names (statistics, baseline)
    kt_cache: Path | None  # the Kernel Tuner cache the reference's runs read (the T4 name without "_T4")
    objective: str
    minimization: bool

    @property
    def key(self) -> str:
        return f"{self.gpu}+{self.application}"  # as report_experiments.get_aggregation_data_key


@dataclass(frozen=True)
class Group:
    """One strategy on one space, with the settings the file gives it."""

    space: Space
    name: str
    display_name: str
    search_method: str
    custom_path: Path | None
    hyperparameters: tuple[tuple[str, Any], ...]
    repeats: int
    samples: int
    stochastic: bool
    min_fraction_valid: float | None
    min_valid: int | None
    cutoff_margin: float

    @property
    def key(self) -> str:
        return f"{self.space.gpu}/{self.space.application}/{self.name}"


@dataclass(frozen=True)
class Experiment:
    path: Path
    raw: dict[str, Any] = field(repr=False)
    name: str
    spaces: tuple[Space, ...]
    groups: tuple[Group, ...]
    strategies: tuple[str, ...]  # the file's strategy names, in its order
    display: dict[str, str]
    cutoff_percentile: float
    cutoff_percentile_start: float
    cutoff_type: str
    time_keys: tuple[str, ...]
    resolution: int
    confidence_level: float


def _find(value: str, base: Path, what: str) -> Path:
    path = Path(value)
    for candidate in (path, base / path) if not path.is_absolute() else (path,):
        if candidate.exists():
            return candidate.absolute()  # not resolve(): the reference looks for Kernel Tuner's cache beside a link
    raise ConfigError(f"{what} {value!r}: no such file (looked in {Path.cwd()} and {base})")


def _read(path: Path) -> dict[str, Any]:
    from autotuning_methodology.validators import get_experiment_schema_filepath
    from jsonschema import ValidationError, validate

    if not path.is_file():
        raise ConfigError(f"experiment file {str(path)!r}: no such file")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"experiment file {str(path)!r}: not JSON ({exc})") from None
    schema = json.loads(get_experiment_schema_filepath().read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or raw.get("version") != schema["version"]:
        found = raw.get("version") if isinstance(raw, dict) else type(raw).__name__
        raise ConfigError(f"experiment file {str(path)!r}: version {found!r}, must be schema {schema['version']}")
    try:
        validate(instance=raw, schema=schema)
    except ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top)"
        raise ConfigError(f"experiment file {str(path)!r}: {where}: {exc.message} (schema 1.2.0)") from None
    return raw


def _strategy_check(strategy: dict[str, Any], base: Path) -> Path | None:
    from kernel_tuner.interface import strategy_map

    method = strategy["search_method"]
    if strategy.get("autotuner", "KernelTuner") != "KernelTuner":
        raise ConfigError(f"strategy {strategy['name']!r}: autotuner {strategy['autotuner']!r} is not supported "
                          "(only KernelTuner; the reference refuses KTT too)")
    if "custom_search_method_path" not in strategy:
        if method not in strategy_map:
            raise ConfigError(f"strategy {strategy['name']!r}: search_method {method!r} is not a Kernel Tuner 1.5 "
                              f"strategy (one of: {', '.join(sorted(strategy_map))})")
        return None
    path = _find(strategy["custom_search_method_path"], base, f"strategy {strategy['name']!r}: "
                 "custom_search_method_path")
    classes = {n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.ClassDef)}
    if method not in classes and not (method == "SearchlabOptAlg" and "Strategy" in classes):
        raise ConfigError(f"strategy {strategy['name']!r}: no class {method!r} in {path}")
    params = {p.get("name"): p.get("value") for p in strategy.get("search_method_hyperparameters", [])}
    if method == "SearchlabOptAlg":
        from searchlab import registry

        try:
            registry.searcher_class(str(params.get("searcher", "auto")))
        except Exception as exc:  # the registry's own one-line refusal
            raise ConfigError(f"strategy {strategy['name']!r}: searcher {params.get('searcher')!r}: {exc}") from None
    return path


def _application(app: dict[str, Any], base: Path) -> tuple[Path, str, bool]:
    folder = Path(app.get("folder", "."))
    t1 = _find(str(folder / app["input_file"]), base, f"application {app['name']!r}: input_file")
    keys = app.get("objective_performance_keys")
    if not keys:
        raise ConfigError(f"application {app['name']!r}: give objective_performance_keys (one key)")
    if len(keys) != 1:
        raise ConfigError(f"application {app['name']!r}: objective_performance_keys {keys}: one key only "
                          "(the reference refuses multi-objective too)")
    objective = keys[0]
    if "minimization" in app:
        return t1, objective, bool(app["minimization"])
    if "time" in objective.lower():
        return t1, objective, True
    if any(k in objective.lower() for k in ("score", "gflop/s", "gflops", "gb/s")):
        return t1, objective, False
    raise ConfigError(f"application {app['name']!r}: objective {objective!r}: set 'minimization' (the direction "
                      "cannot be inferred)")


def _spaces(raw: dict[str, Any], base: Path) -> list[Space]:
    defaults = raw["experimental_groups_defaults"]
    pattern = defaults.get("pattern_for_full_search_space_filenames")
    if pattern is None:
        raise ConfigError("experimental_groups_defaults: give pattern_for_full_search_space_filenames "
                          "(SimulationInput in the T1 file is not supported)")
    out: list[Space] = []
    for gpu in defaults["gpus"]:
        for app in defaults["applications"]:
            t1, objective, minimization = _application(app, base)
            name = pattern["regex"].replace("${applications}", app["name"]).replace("${gpus}", gpu)
            if "${" in name:
                raise ConfigError(f"pattern {pattern['regex']!r}: only ${{applications}} and ${{gpus}} are supported")
            t4 = _find(name, base, f"space {gpu}/{app['name']}: full search space file")
            cache = t4.with_name(t4.name.replace("_T4", ""))
            out.append(Space(gpu, app["name"], t1, t4, cache if cache != t4 and cache.is_file() else None,
                             objective, minimization))
    return out


def _group(space: Space, strategy: dict[str, Any], defaults: dict[str, Any], custom: Path | None) -> Group:
    merged = {**{k: v for k, v in defaults.items() if k not in ("applications", "gpus",
                                                                 "pattern_for_full_search_space_filenames")},
              **strategy}
    params = tuple((str(p["name"]), p["value"]) for p in strategy.get("search_method_hyperparameters", []))
    return Group(space=space, name=strategy["name"], display_name=strategy["display_name"],
                 search_method=strategy["search_method"], custom_path=custom, hyperparameters=params,
                 repeats=int(merged.get("repeats", 100)), samples=int(merged.get("samples", 32)),
                 stochastic=bool(merged.get("stochastic", True)),
                 min_fraction_valid=merged.get("minimum_fraction_of_budget_valid"),
                 min_valid=merged.get("minimum_number_of_valid_search_iterations"),
                 cutoff_margin=float(merged.get("cutoff_margin", 0.1)))


def load_experiment(path: str | Path) -> Experiment:
    """The experiment file at ``path``, checked whole (one line per refusal, nothing written)."""
    path = Path(path)
    raw = _read(path)
    base = path.resolve().parent
    defaults = raw["experimental_groups_defaults"]
    names = [s["name"] for s in raw["search_strategies"]]
    if len(set(names)) != len(names):
        raise ConfigError(f"search_strategies: names {names} are not unique")
    if defaults.get("autotuner", "KernelTuner") != "KernelTuner":
        raise ConfigError(f"experimental_groups_defaults: autotuner {defaults['autotuner']!r}: only KernelTuner")
    customs = {s["name"]: _strategy_check(s, base) for s in raw["search_strategies"]}
    spaces = _spaces(raw, base)
    groups = tuple(_group(sp, s, defaults, customs[s["name"]]) for sp in spaces for s in raw["search_strategies"])
    stats = raw["statistics_settings"]
    keys = list(stats["objective_time_keys"])
    time_keys = TIME_KEYS if "all" in keys else tuple(keys)
    vis = raw["visualization_settings"]
    if int(vis["resolution"]) != vis["resolution"]:
        raise ConfigError(f"visualization_settings.resolution {vis['resolution']!r}: must be an integer")
    return Experiment(path=path.resolve(), raw=raw, name=raw["name"], spaces=tuple(spaces), groups=groups,
                      strategies=tuple(names), display={s["name"]: s["display_name"] for s in raw["search_strategies"]},
                      cutoff_percentile=float(stats["cutoff_percentile"]),
                      cutoff_percentile_start=float(stats.get("cutoff_percentile_start", 0.01)),
                      cutoff_type=str(stats["cutoff_type"]), time_keys=time_keys,
                      resolution=int(vis["resolution"]), confidence_level=float(vis["confidence_level"]))
