"""Which options of a searcher may be tuned, and over what range: declared in its signature.

Why here: a searcher's options are declared once, in its constructor (searchlab.searchers._schema);
the range a tuner may explore is a property of the same option, so it is written on the same
line with ``typing.Annotated``::

    def __init__(self, space, *, popsize: Annotated[int, Tunable(4, 64, log=True)] = 30, ...)

``Annotated`` is invisible to everything else: ``get_type_hints`` without ``include_extras``
(what the config schema builder uses) sees a plain ``int``, so Hydra's structured configs are
unchanged. :func:`tunable_ranges` reads the markers of any Searcher subclass, plugin searchers
included, so ``problem=searcher_settings`` (searchlab.tuning) can tune every searcher with
no code of its own (issue 23, item 1; after Willemsen et al., "Tuning the Tuner", arXiv 2509.26300,
which tunes Kernel Tuner's ``strategy_options`` over hand-written ranges).

Knob spaces have no continuous knob, so a float range is explored on ``points`` grid values
(geometric with ``log=True``), rounded to 4 significant digits: a deviation from a continuous
search that keeps every searcher able to search the settings.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, get_args, get_origin, get_type_hints

from searchlab.errors import ConfigError

__all__ = ["Annotated", "Tunable", "describe_ranges", "tunable_ranges"]


@dataclass(frozen=True)
class Tunable:
    """A tunable option's range: ``Tunable(low, high, log=...)`` or ``Tunable(choices=(...))``.

    ``kind`` is filled in by :func:`tunable_ranges` from the option's type (int, float or choice).
    """

    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple[Any, ...] | None = None
    points: int = 9  # grid values of a float range
    kind: str = ""

    def __post_init__(self) -> None:
        if self.choices is not None:
            if self.low is not None or self.high is not None or len(self.choices) < 2:
                raise ConfigError(f"Tunable{self._text()}: give either choices (at least two) or low and high")
            object.__setattr__(self, "choices", tuple(self.choices))
            return
        if self.low is None or self.high is None or not self.low < self.high:
            raise ConfigError(f"Tunable{self._text()}: need low < high")
        if self.log and self.low <= 0:
            raise ConfigError(f"Tunable{self._text()}: a log-scale range needs low > 0")
        if self.points < 2:
            raise ConfigError(f"Tunable{self._text()}: points must be >= 2")

    def _text(self) -> str:
        if self.choices is not None:
            return f"(choices={self.choices!r})"
        return f"({self.low}, {self.high}{', log=True' if self.log else ''})"

    def values(self) -> tuple[Any, ...]:
        """The values a knob space explores (choices; every integer; or the float grid)."""
        if self.choices is not None:
            return self.choices
        assert self.low is not None and self.high is not None
        if self.kind == "int":
            return tuple(range(int(self.low), int(self.high) + 1))
        if self.log:
            a, b = math.log(self.low), math.log(self.high)
            grid = [math.exp(a + (b - a) * i / (self.points - 1)) for i in range(self.points)]
        else:
            grid = [self.low + (self.high - self.low) * i / (self.points - 1) for i in range(self.points)]
        return tuple(dict.fromkeys(float(f"{v:.4g}") for v in grid))

    def contains(self, value: Any) -> bool:
        if self.choices is not None:
            return value in self.choices
        assert self.low is not None and self.high is not None
        return isinstance(value, (int, float)) and not isinstance(value, bool) and self.low <= value <= self.high

    def describe(self) -> str:
        if self.choices is not None:
            return "{" + ", ".join(str(c) for c in self.choices) + "}"
        return f"[{self.low:g}, {self.high:g}]{' log' if self.log else ''}"


def _kind(base: Any, marker: Tunable, where: str) -> str:
    if marker.choices is not None:
        return "choice"
    if base is int:
        if float(marker.low or 0).is_integer() and float(marker.high or 0).is_integer():
            return "int"
        raise ConfigError(f"{where}: an int option needs integer bounds, got {marker.describe()}")
    if base is float:
        return "float"
    raise ConfigError(f"{where}: a Tunable range needs an int or float option (or choices=...), not {base!r}")


def _markers(init: Any, where: str) -> dict[str, Tunable]:
    try:
        hints = get_type_hints(init, include_extras=True)
    except Exception:  # a name only imported under TYPE_CHECKING: no markers can be read
        return {}
    out: dict[str, Tunable] = {}
    for name, hint in hints.items():
        if get_origin(hint) is not Annotated:
            continue
        base, *extras = get_args(hint)
        marker = next((e for e in extras if isinstance(e, Tunable)), None)
        if marker is not None:
            out[name] = replace(marker, kind=_kind(base, marker, f"{where}.{name}"))
    return out


def tunable_ranges(searcher_cls: type) -> dict[str, Tunable]:
    """Option name -> its :class:`Tunable` range, read from the constructor chain of ``searcher_cls``
    (the same chain :func:`searchlab.searchers._schema.options` reads; a subclass's declaration wins)."""
    from searchlab.searchers._schema import RUNTIME, options

    wanted = {o.name for o in options(searcher_cls)}
    seen: set[str] = set()
    out: dict[str, Tunable] = {}
    for klass in searcher_cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        markers = _markers(init, searcher_cls.__name__)
        for p in inspect.signature(init).parameters.values():
            if p.name in RUNTIME or p.name not in wanted or p.name in seen:
                continue
            seen.add(p.name)
            if p.name in markers:
                out[p.name] = markers[p.name]
    return {name: out[name] for name in sorted(out)}


def describe_ranges(ranges: Mapping[str, Tunable]) -> str:
    """``tunable: popsize [4, 64] log, method {uniform, ...}`` (``--help``), or ``""``."""
    return ("tunable: " + ", ".join(f"{k} {t.describe()}" for k, t in ranges.items())) if ranges else ""


def registered_ranges_text(name: str) -> str:
    """:func:`describe_ranges` of the registered searcher ``name`` (``""`` if it cannot be loaded)."""
    from searchlab.searchers._build import searcher_class

    try:
        return describe_ranges(tunable_ranges(searcher_class(name)))
    except ConfigError:
        return ""
