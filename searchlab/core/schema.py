"""Every option is declared once: in its class's constructor's typed signature.

Why (issue 21): problem, executor and budget options used to be written two or three
times (a hand-written ``*Config`` dataclass for Hydra, the constructor, and a
``super().__init__(a=a, b=b, ...)`` list so ``Problem.params`` could fingerprint them), and
the copies drifted. Searchers were already right (``searcher_config``, issue 12); this module
is that builder made general. :func:`schema_of` builds the structured-config dataclass Hydra
stores from the keyword parameters of a class's ``__init__`` and of every base ``__init__`` it
forwards ``**kwargs`` to (the subclass's default wins), leaving out what the run supplies.
A parameter typed with a dataclass (``measure: MeasurementProtocol = MeasurementProtocol()``)
becomes a nested config (``problem.measure.min_runs=3``), and :func:`coerce` turns the plain
mapping Hydra hands back into that dataclass again, refusing unknown keys with one line.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, Union, get_args, get_origin, get_type_hints

from searchlab.errors import ConfigError

_PRIMITIVE = (int, float, str, bool)
# The default of a mapping option (``limits: Mapping[str, float] = EMPTY``): immutable, so one
# object can be every call's default, and a config of it is an empty dict that ``+key=value`` extends.
EMPTY: Mapping[str, Any] = MappingProxyType({})
_BUILT_FROM: dict[type, type] = {}  # derived schema -> the class it was built from (helptext reads its docs)


@dataclass(frozen=True)
class Option:
    """One constructor option: its name, (resolved) type and default (``inspect.Parameter.empty``: required)."""

    name: str
    annotation: Any
    default: Any


def _hints(fn: Any) -> dict[str, Any]:
    try:
        return get_type_hints(fn)
    except Exception:  # a name only imported under TYPE_CHECKING: fall back to no type check
        return {}


def options(cls: type, runtime: frozenset[str] = frozenset()) -> list[Option]:
    """The options of ``cls``: keyword parameters of its ``__init__`` and of the bases it forwards to.

    The walk stops at a base that sets ``__schema_base__ = True`` in its own body (``Searcher``,
    ``Problem``, ``Executor``: their parameters are the run's, not options) and at the first
    ``__init__`` that takes no ``**kwargs`` (nothing further can receive a config value).
    Names a class lists in ``__runtime__`` (an in-memory table, a test seam) are not options."""
    runtime = runtime | runtime_names(cls)
    found: dict[str, Option] = {}
    for klass in cls.__mro__:
        if klass is object or klass.__dict__.get("__schema_base__"):
            break
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        init = getattr(init, "__wrapped__", init)
        hints = _hints(init)
        params = inspect.signature(init).parameters.values()
        for p in params:
            if p.name == "self" or p.name in runtime or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            found.setdefault(p.name, Option(p.name, hints.get(p.name, Any), p.default))
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return list(found.values())


def runtime_names(cls: type) -> frozenset[str]:
    """Constructor parameters of ``cls`` that a caller in Python may pass but a config may not
    (``__runtime__ = frozenset({"table"})``): left out of its schema and of ``Problem.params``."""
    return frozenset(getattr(cls, "__runtime__", frozenset()))


def _dataclass_type(tp: Any) -> type | None:
    """The dataclass ``tp`` names (``X`` or ``X | None``), else None."""
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return _dataclass_type(rest[0]) if len(rest) == 1 else None
    return tp if isinstance(tp, type) and dataclasses.is_dataclass(tp) else None


def omegaconf_type(tp: Any) -> Any:
    """The nearest type OmegaConf can validate (a dataclass: its mutable mirror, a nested config)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            inner = omegaconf_type(rest[0])
            return inner if inner is Any or len(args) == 1 else typing.Optional[inner]  # noqa: UP045
        return Any
    if tp in _PRIMITIVE or (isinstance(tp, type) and issubclass(tp, enum.Enum)):
        return tp
    nested = _dataclass_type(tp)
    if nested is not None:
        return mirror(nested)
    if origin is not None and isinstance(origin, type):
        if issubclass(origin, Mapping):
            return types.GenericAlias(dict, (str, omegaconf_type(args[1]) if len(args) == 2 else Any))
        if issubclass(origin, Sequence) and not issubclass(origin, str):
            item = args[0] if args and (len(args) == 1 or args[-1] is Ellipsis) else Any
            return types.GenericAlias(list, (omegaconf_type(item),))
    return Any


@cache
def mirror(dc: type) -> type:
    """A mutable dataclass with ``dc``'s fields and defaults: Hydra merges overrides only into
    non-frozen structured configs, while the option itself stays a frozen, validated value."""
    hints = _hints(dc)
    spec = [_field(Option(f.name, hints.get(f.name, Any), _default_of(f))) for f in dataclasses.fields(dc)]
    out = dataclasses.make_dataclass(dc.__name__, spec)
    out.__module__ = dc.__module__
    out.__doc__ = f"The options of {dc.__qualname__} as a nested config (searchlab.core.schema.mirror)."
    return out


def _default_of(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return inspect.Parameter.empty


def _field(option: Option) -> tuple[str, Any, Any]:
    default, kind = option.default, omegaconf_type(option.annotation)
    if default is inspect.Parameter.empty:  # OmegaConf's MISSING: required, and after ``_target_``'s default
        return option.name, kind, dataclasses.field(default="???")
    if dataclasses.is_dataclass(default) and not isinstance(default, type):
        values = {f.name: getattr(default, f.name) for f in dataclasses.fields(default)}
        nested = mirror(type(default))
        return option.name, kind, dataclasses.field(default_factory=lambda: nested(**values))
    if isinstance(default, (list, tuple)):
        value = list(default)
        return option.name, kind, dataclasses.field(default_factory=lambda: list(value))
    if isinstance(default, Mapping):
        mapping = dict(default)
        return option.name, kind, dataclasses.field(default_factory=lambda: dict(mapping))
    return option.name, kind, dataclasses.field(default=default)


def public_target(cls: type) -> str:
    """The dotted path a config names: the shortest already-imported package above the defining
    module that re-exports the class (``searchlab.searchers.TagSearcher``,
    ``searchlab.adapters.knobs.Fir``: stored configs of earlier runs name those, and they stay
    put when a module moves inside its package), else ``module.qualname``."""
    parts = cls.__module__.split(".")
    for i in range(1, len(parts)):
        package = sys.modules.get(".".join(parts[:i]))
        if package is not None and package.__dict__.get(cls.__name__) is cls:
            return f"{package.__name__}.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def schema_of(cls: type, *, target: str | None = None, runtime: frozenset[str] = frozenset(),
              suffix: str = "") -> type:
    """The structured-config dataclass of ``cls``, built from its constructor (one declaration)."""
    name = cls.__name__.removesuffix(suffix) + "Config"
    fields: list[tuple[str, Any, Any]] = [("_target_", str, dataclasses.field(default=target or public_target(cls)))]
    fields += [_field(o) for o in options(cls, runtime)]
    schema = dataclasses.make_dataclass(name, fields)
    schema.__module__ = cls.__module__
    schema.__doc__ = f"Options of {cls.__qualname__} (derived from its constructor; see searchlab.core.schema)."
    _BUILT_FROM[schema] = cls
    return schema


def built_from(schema: type) -> type | None:
    """The class a derived schema was built from (None for a hand-written one)."""
    return _BUILT_FROM.get(schema)


def schema_defaults(schema: type) -> dict[str, Any]:
    """Each field's default (``"???"`` where required), ``_target_`` left out."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(schema):
        if f.name == "_target_":
            continue
        default = _default_of(f)
        out[f.name] = "???" if default is inspect.Parameter.empty else default
    return out


def coerce(cls: type, values: Mapping[str, Any], where: str, runtime: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``values`` (plain config values) with each dataclass-typed option built as its dataclass.

    An unknown key inside such an option is a one-line ConfigError naming it and the known ones."""
    out = dict(values)
    for option in options(cls, runtime):
        dc = _dataclass_type(option.annotation)
        value = out.get(option.name)
        if dc is None or not isinstance(value, Mapping):
            continue
        known = {f.name for f in dataclasses.fields(dc)}
        unknown = sorted(str(k) for k in value if k not in known)
        if unknown:
            raise ConfigError(f"{where}.{option.name}: unknown option(s) {unknown} (known: {sorted(known)})")
        given = {str(k): v for k, v in value.items()}
        # a partial mapping fills the rest from this option's own default (a problem's protocol), not the dataclass's
        default = option.default
        out[option.name] = dataclasses.replace(typing.cast(Any, default), **given) if isinstance(default, dc) else dc(**given)
    return out


def bound_arguments(init: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any],
                    skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The arguments a constructor call binds, defaults applied, ``self`` and ``**kwargs`` names flattened,
    ``skip`` left out: what :attr:`searchlab.core.problem.Problem.params` records (a problem was built
    with these)."""
    bound = inspect.signature(init).bind(None, *args, **kwargs)
    bound.apply_defaults()
    out: dict[str, Any] = {}
    for name, value in list(bound.arguments.items())[1:]:
        kind = bound.signature.parameters[name].kind
        if name in skip:
            continue
        if kind is inspect.Parameter.VAR_KEYWORD:
            out.update({k: v for k, v in value.items() if k not in skip})
        elif kind is not inspect.Parameter.VAR_POSITIONAL:
            out[name] = value
    return out


def plain(value: Any) -> Any:
    """``value`` with dataclasses as dicts and tuples as lists: the JSON shape a record stores."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
