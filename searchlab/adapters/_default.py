"""A user's default configuration (what they run today), checked against the space it belongs to.

Why: a tuned result is recommended only when it measurably beats the default (searchlab.run.confirm,
searchlab.core.speedup), and a user's own kernel or program has no default the space could give
(issue 46, item 3). A spec's ``default:`` block (T1: ``Searchlab.Default``) or ``problem.default=``
names it; a default outside the space would be compared on a configuration the search can never
propose, so each mistake is one line naming the value and the rule (exit 2), before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from searchlab.core.records import Config
from searchlab.core.spaces import KnobSpace
from searchlab.errors import ConfigError, did_you_mean


def _example(space: KnobSpace) -> str:
    return "{" + ", ".join(f"{k.name}: {k.values[0]!r}" for k in space.knobs[:2]) + "}"


def mapping_of(raw: Any, where: str, example: str) -> Mapping[str, Any] | None:
    """``raw`` as a mapping of parameter -> value (None: no default given)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or not raw:
        raise ConfigError(f"{where}={raw!r}: must be a non-empty mapping of parameter -> value, e.g. {example}")
    return {str(k): v for k, v in raw.items()}


def unknown_names(given: Mapping[str, Any], names: tuple[str, ...], where: str) -> None:
    for name in given:
        if name not in names:
            raise ConfigError(f"{where}.{name}: not a parameter of the space{did_you_mean(name, list(names))} "
                              f"(parameters: {list(names)})")


def knob_default(space: KnobSpace, raw: Any, where: str) -> Config | None:
    """The default ``raw`` names, as a member of ``space`` that keeps its known constraints.

    Every parameter needs a value (a kernel gets each one as a ``#define``, a command each
    ``${name}``); a value must be one of the parameter's values (it is taken as the space's own
    value, so ``32.0`` is the configuration ``32`` the search measures)."""
    given = mapping_of(raw, where, _example(space))
    if given is None:
        return None
    unknown_names(given, space.names, where)
    missing = [n for n in space.names if n not in given]
    if missing:
        raise ConfigError(f"{where}: gives no value for {missing} (a default sets every parameter, e.g. {_example(space)})")
    values: dict[str, Any] = {}
    for name, value in given.items():
        allowed = space.knob(name).values
        same = [v for v in allowed if v == value and isinstance(v, bool) == isinstance(value, bool)]
        if not same:
            shown = list(allowed) if len(allowed) <= 12 else f"{list(allowed[:6])} ... {allowed[-1]!r}"
            raise ConfigError(f"{where}.{name}={value!r}: not one of its values {shown}")
        values[name] = same[0]
    config = Config(values)
    reason = space.check(config)
    if reason:
        raise ConfigError(f"{where}={dict(config)}: violates a restriction ({reason})")
    return config
