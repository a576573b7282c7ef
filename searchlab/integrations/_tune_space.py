"""Ray Tune domains as knobs, by behaviour; the spaces we cannot search, refused in one line (issue 47, items 3, 13, 14).

Why by behaviour: the log check was ``type(sampler).__name__ == "LogUniform"`` and Ray's class is ``_LogUniform``, so
``loguniform(1e-5, 1e-1)`` was searched on a linear grid. The sampler's classes (``ray.tune.search.sample``:
``Quantized``, ``LogUniform``, ``Normal``) are Ray's public sampler API; their subclasses are recognised too.

Refused, each in one ``ConfigError`` (a ValueError) at ``set_search_properties``/construction rather than passed
through: a nested dict holding domains (it reached the trainable as a raw ``Domain``), ``tune.grid_search`` (it
arrived as a constant dict), ``randn``/``qrandn`` and float bounds whose width is not finite (they proposed NaN or
inf), ``sample_from``, and integer or quantised ranges of more than :data:`~searchlab.core.spaces.MAX_VALUES` values
that are not log-scaled (a log range becomes a grid of ``float_grid`` log-spaced values).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from searchlab.core.spaces import MAX_VALUES, CategoricalKnob, IntKnob, Knob, OrdinalKnob
from searchlab.errors import ConfigError

ALTERNATIVE = "Ray Tune's own OptunaSearch or HyperOptSearch"


def check_space(space: Mapping[str, Any]) -> None:
    """Refuse, in one line, what the Searcher cannot search (module docstring)."""
    from ray.tune.search.sample import Domain

    for key, value in space.items():
        if isinstance(value, Mapping) and "grid_search" in value:
            raise ConfigError(f"parameter {key!r}: tune.grid_search cannot be combined with a searcher; "
                              "use tune.choice (searched), or drop search_alg for a grid")
        if isinstance(value, (Mapping, list, tuple)) and _holds_domain(value, Domain):
            raise ConfigError(f"parameter {key!r}: a nested search space; searchlab's Searcher takes a flat "
                              "param_space of tune.* domains (flatten it, e.g. 'a/b' keys, and rebuild in the trainable)")


def _holds_domain(value: Any, domain: type, depth: int = 0) -> bool:
    if isinstance(value, domain):
        return True
    if depth > 50:
        return False
    items = value.values() if isinstance(value, Mapping) else value if isinstance(value, (list, tuple)) else ()
    return any(_holds_domain(v, domain, depth + 1) for v in items)


def knob_of(name: str, domain: Any, float_grid: int = 129) -> Knob:
    """The knob of one Ray Tune domain (module docstring)."""
    from ray.tune.search import sample

    if isinstance(domain, sample.Categorical):
        return CategoricalKnob(name, tuple(range(len(domain.categories))))
    if not isinstance(domain, (sample.Integer, sample.Float)):
        raise ConfigError(f"parameter {name!r}: Ray Tune domain {type(domain).__name__} cannot be searched "
                          "(tune.uniform, loguniform, randint, lograndint, choice and their q* forms can)")
    sampler = cast(Any, domain).get_sampler()  # Ray's Domain classes are untyped
    q = sampler.q if isinstance(sampler, sample.Quantized) else None
    inner = sampler.sampler if isinstance(sampler, sample.Quantized) else sampler
    if isinstance(inner, sample.Normal):
        raise ConfigError(f"parameter {name!r}: tune.randn/qrandn has no bounds to search; use tune.uniform(low, high)")
    log = isinstance(inner, sample.LogUniform)
    low, high = domain.lower, domain.upper
    if not (math.isfinite(float(low)) and math.isfinite(float(high)) and math.isfinite(float(high) - float(low))):
        raise ConfigError(f"parameter {name!r}: bounds [{low}, {high}] are not a finite range to search; "
                          "give finite bounds (tune.uniform(low, high))")
    if isinstance(domain, sample.Integer):
        return _int_knob(name, int(low), int(high) if q is not None else int(high) - 1, q, log, float_grid)
    return _float_knob(name, float(low), float(high), q, log, float_grid)


def _int_knob(name: str, low: int, high: int, q: Any, log: bool, float_grid: int) -> Knob:
    """randint/lograndint (upper excluded, ``high`` given here included) or qrandint/qlograndint (multiples of q)."""
    step = int(q) if q is not None else 1
    first = -(-low // step) * step
    count = (high - first) // step + 1 if high >= first else 0
    if count < 1:
        raise ConfigError(f"parameter {name!r}: no integer in [{low}, {high}]" + (f" is a multiple of {q}" if q else ""))
    if log and count > float_grid:  # a grid in log space: every decade searched alike
        grid = np.geomspace(max(first, 1), high, float_grid)
        values = sorted({min(max(round(float(v) / step) * step, first), high) for v in grid})
        return OrdinalKnob(name, tuple(values))
    if count > MAX_VALUES:
        raise ConfigError(f"parameter {name!r}: {count} integers from {low} to {high} are more than searchlab's "
                          f"searchers take ({MAX_VALUES}); use tune.lograndint, a qrandint step of at least "
                          f"{-(-count * step // MAX_VALUES)}, or {ALTERNATIVE}")
    if q is not None:
        return OrdinalKnob(name, tuple(range(first, high + 1, step)))
    return IntKnob(name, low, high, 1, log)


def _float_knob(name: str, low: float, high: float, q: Any, log: bool, float_grid: int) -> Knob:
    if q is not None and not log:
        count = math.floor((high - low) / q) + 1
        if count > MAX_VALUES:
            raise ConfigError(f"parameter {name!r}: quniform with q={q} has {count} values in [{low}, {high}], more "
                              f"than searchlab's searchers take ({MAX_VALUES}); use a coarser q, tune.uniform (a grid "
                              f"of float_grid points), or {ALTERNATIVE}")
        values = np.arange(math.ceil(low / q) * q, high + q / 2, q)
    elif log:
        values = np.geomspace(low, high, float_grid)
        if q is not None:  # qloguniform: the log grid rounded to multiples of q
            values = np.clip(np.round(values / q) * q, math.ceil(low / q) * q, high)
    else:
        values = np.linspace(low, high, float_grid)
    return OrdinalKnob(name, tuple(dict.fromkeys(float(v) for v in values)))


def describe(entry: Any) -> Any:
    """One param_space entry as JSON data for a checkpoint: a domain by its parameters, a constant as itself."""
    from ray.tune.search import sample

    value: Any = entry  # Ray's Domain classes are untyped
    if isinstance(entry, sample.Domain):
        kind = type(value).__name__
        if isinstance(value, sample.Categorical):
            return {"domain": "choice", "categories": [_plain(c) for c in value.categories]}
        sampler = value.get_sampler()
        q = sampler.q if isinstance(sampler, sample.Quantized) else None
        inner = sampler.sampler if isinstance(sampler, sample.Quantized) else sampler
        return {"domain": kind.lower(), "lower": value.lower, "upper": value.upper, "q": q,
                "log": isinstance(inner, sample.LogUniform)}
    return {"constant": _plain(value)}


def _plain(value: Any) -> Any:
    import json

    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return {"repr": repr(value)[:200]}  # not data: a restore needs the space given again
    return value
