"""What an experiment file may ask for, beyond the package's JSON schema: limits, names, seeds, strategies.

The reference (``autotuning_experiment``) checks the schema and then trusts the file: a hyperparameter without a
``name``, ``gpus: []``, a negative ``cutoff_margin`` or ``repeats: 1000000000`` become tracebacks or hours of
work. Each is one line here, naming the value and the rule, before anything is written (issue 51, item 3).

Limits (stated in docs/study.md): :data:`MAX_REPEATS` repeats per group, :data:`MAX_TOTAL_REPEATS` in a file,
:data:`MAX_SAMPLES` samples, :data:`MAX_RESOLUTION` points on the time axis, :data:`MAX_GROUPS` groups.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError

MAX_REPEATS = 10_000
MAX_TOTAL_REPEATS = 1_000_000
MAX_SAMPLES = 10_000
MAX_RESOLUTION = 10_000_000
MAX_GROUPS = 10_000
MAX_SEED = 2**63
SEARCHLAB_OPTALG = "SearchlabOptAlg"
# Kernel Tuner 1.5's strategy_map (kernel_tuner/interface.py), named here so that checking a file does not import
# Kernel Tuner (2 s); tests/reproduce/test_reproduce_files.py checks it against the installed Kernel Tuner.
KERNEL_TUNER_STRATEGIES = frozenset({
    "adaptive_tabu_greywolf", "basinhopping", "bayes_opt", "brute_force", "diff_evo", "dual_annealing",
    "firefly_algorithm", "genetic_algorithm", "greedy_ils", "greedy_mls", "hybrid_vndx", "minimize", "mls", "nsga2",
    "nsga3", "ordered_greedy_mls", "pso", "pyatf_strategies", "random_sample", "simulated_annealing", "skopt"})


def limited(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{what}={value!r}: must be an integer from {low} to {high} (searchlab reproduce's limit)")
    return value


def margin(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or \
            not 0 <= value <= 10:
        raise ConfigError(f"{what}={value!r}: must be a number from 0 to 10 (the budget is the cutoff times "
                          f"1 + cutoff_margin)")
    return float(value)


def seed(value: Any, what: str) -> int:
    """A seed a file fixes: an integer in [0, 2^63) (``1.5``, ``"abc"`` and ``-5`` are refused, never cut)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_SEED:
        raise ConfigError(f"{what}={value!r}: a seed must be an integer from 0 to 2^63-1")
    return value


def hyperparameters(strategy: Mapping[str, Any], what: str) -> tuple[tuple[str, Any], ...]:
    out: list[tuple[str, Any]] = []
    for i, item in enumerate(strategy.get("search_method_hyperparameters") or ()):
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not name or "value" not in item:
            raise ConfigError(f"{what}: search_method_hyperparameters[{i}]={item!r}: each needs a 'name' (a string) "
                              "and a 'value'")
        if any(name == n for n, _ in out):
            raise ConfigError(f"{what}: search_method_hyperparameters names {name!r} twice")
        out.append((name, item["value"]))
    return tuple(out)


def nonempty(values: Any, what: str) -> list[Any]:
    if not isinstance(values, list) or not values:
        raise ConfigError(f"experimental_groups_defaults.{what}={values!r}: must list at least one (nothing to run)")
    return values


def unique(names: list[str], what: str) -> None:
    seen = {n for n in names if names.count(n) > 1}
    if seen:
        raise ConfigError(f"{what}: {sorted(seen)} named more than once (the reference would keep only the last "
                          "one's results)")


def custom_class(path: Path, method: str, what: str) -> None:
    """``path`` (a regular file, read bounded) defines ``class method``: checked without importing it."""
    from searchlab.core import files

    text = files.read_text(path, what)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        raise ConfigError(f"{what}={str(path)!r}: not Python source ({type(exc).__name__}: {exc})") from None
    if method not in {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}:
        raise ConfigError(f"{what}={str(path)!r}: defines no class {method!r} (the strategy's search_method)")


def is_searchlab_module(path: Path) -> bool:
    """Whether ``path`` is searchlab's own Kernel Tuner integration (its SearchlabOptAlg is built from the registry:
    no file is imported)."""
    import searchlab.integrations.kernel_tuner as ours

    try:
        return path.samefile(Path(ours.__file__))
    except OSError:
        return False


def searchlab_params(params: tuple[tuple[str, Any], ...], what: str) -> tuple[str, int | None, dict[str, Any]]:
    """``SearchlabOptAlg``'s hyperparameters: the searcher (registered), a fixed seed, the searcher's options
    (checked against its registered schema, as ``searcher.X=`` on the command line)."""
    from omegaconf import OmegaConf

    from searchlab import registry

    options = dict(params)
    name = options.pop("searcher", "auto")
    fixed = options.pop("seed", None)
    if not isinstance(name, str) or name not in registry.searchers():
        raise ConfigError(f"{what}: searcher {name!r} is not a registered searcher "
                          f"(known: {', '.join(sorted(registry.searchers()))})")
    fixed = None if fixed is None else seed(fixed, f"{what}: seed")
    try:
        OmegaConf.merge(OmegaConf.structured(registry.schemas("searcher")[name]), options)
    except Exception as exc:  # OmegaConf's validation errors: an unknown option or a wrong type
        raise ConfigError(f"{what}: searcher {name!r} options {options}: {str(exc).splitlines()[0]}") from None
    return name, fixed, options
