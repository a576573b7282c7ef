"""Each searcher's options are declared once: in its constructor's typed signature.

Why: the structured config (Hydra's type check of ``searcher.X=V``, ``--help``'s defaults)
and the constructor used to repeat ~175 options and drifted apart (``optuna_gp``'s
``max_retries`` was 16 in the config and 4 in the constructor). :func:`searcher_config`
builds the config dataclass from the keyword-only parameters of the class's ``__init__``
and of every base ``__init__`` it forwards ``**kwargs`` to (the subclass's default wins),
leaving out what the run supplies (``space``, ``direction``, ``seed``). Types are mapped to
what OmegaConf can check (``Sequence[X]`` -> ``list[X]``, ``Mapping`` -> ``dict``, anything
else it cannot represent -> ``Any``).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin, get_type_hints

RUNTIME = frozenset({"self", "space", "direction", "seed"})  # given by the run, not options
_PRIMITIVE = (int, float, str, bool)


@dataclass(frozen=True)
class Option:
    name: str
    annotation: Any  # the constructor's (resolved) type
    default: Any  # inspect.Parameter.empty: required


def _hints(fn: Any) -> dict[str, Any]:
    try:
        return get_type_hints(fn)
    except Exception:  # a name only imported under TYPE_CHECKING: fall back to no type check
        return {}


def options(cls: type) -> list[Option]:
    """The options of ``cls``: keyword parameters of its ``__init__`` and of the bases it forwards to."""
    from searchlab.searchers._base import Searcher

    found: dict[str, Option] = {}
    for klass in cls.__mro__:
        if klass is Searcher or klass is object:
            break
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        hints = _hints(init)
        params = inspect.signature(init).parameters.values()
        for p in params:
            if p.name in RUNTIME or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            found.setdefault(p.name, Option(p.name, hints.get(p.name, Any), p.default))
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break  # the rest of the chain cannot receive options from a config
    return list(found.values())


def omegaconf_type(tp: Any) -> Any:
    """The nearest type OmegaConf can validate."""
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            inner = omegaconf_type(rest[0])
            return inner if inner is Any or len(args) == 1 else typing.Optional[inner]  # noqa: UP045
        return Any
    if tp in _PRIMITIVE or (isinstance(tp, type) and issubclass(tp, enum.Enum)):
        return tp
    if origin is not None and isinstance(origin, type):
        if issubclass(origin, Mapping):
            return dict[str, omegaconf_type(args[1])] if len(args) == 2 else dict[str, Any]  # type: ignore[misc]
        if issubclass(origin, Sequence) and not issubclass(origin, str):
            item = args[0] if args and (len(args) == 1 or args[-1] is Ellipsis) else Any
            return list[omegaconf_type(item)]  # type: ignore[misc]
    return Any


def _field(option: Option) -> tuple[str, Any, Any]:
    default = option.default
    if default is inspect.Parameter.empty:
        return option.name, omegaconf_type(option.annotation), dataclasses.field(default=dataclasses.MISSING)
    if isinstance(default, (list, tuple)):
        value = list(default)
        return option.name, omegaconf_type(option.annotation), dataclasses.field(default_factory=lambda: list(value))
    if isinstance(default, Mapping):
        mapping = dict(default)
        return option.name, omegaconf_type(option.annotation), dataclasses.field(default_factory=lambda: dict(mapping))
    return option.name, omegaconf_type(option.annotation), dataclasses.field(default=default)


def public_target(cls: type) -> str:
    """``searchlab.searchers.X`` for built-ins (each is re-exported there, and stored configs of
    earlier runs name that path), else ``module.qualname``."""
    if cls.__module__.startswith("searchlab.searchers._"):
        return f"searchlab.searchers.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def searcher_config(cls: type, target: str | None = None) -> type:
    """The structured-config dataclass of searcher ``cls``, built from its constructor."""
    name = cls.__name__.removesuffix("Searcher") + "Config"
    fields: list[tuple[str, Any, Any]] = [("_target_", str, dataclasses.field(default=target or public_target(cls)))]
    fields += [_field(o) for o in options(cls)]
    schema = dataclasses.make_dataclass(name, fields)
    schema.__module__ = cls.__module__
    schema.__doc__ = f"Options of {cls.__qualname__} (derived from its constructor; see searchlab.searchers._schema)."
    schema.__searcher__ = cls  # type: ignore[attr-defined]
    return schema


def schema_defaults(schema: type) -> dict[str, Any]:
    """Each field's default (``"???"`` where required), ``_target_`` left out."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(schema):
        if f.name == "_target_":
            continue
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
        else:
            out[f.name] = "???"
    return out


def option_defaults(cls: type) -> dict[str, Any]:
    """The constructor's defaults in the same shape as :func:`schema_defaults` (tuples as lists)."""
    out: dict[str, Any] = {}
    for o in options(cls):
        d = o.default
        out[o.name] = "???" if d is inspect.Parameter.empty else list(d) if isinstance(d, tuple) else d
    return out
