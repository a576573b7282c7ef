"""Each searcher's options are declared once: in its constructor's typed signature.

The builder itself is :mod:`searchlab.core.schema` (shared with problems and executors);
this module adds what is particular to searchers.

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

import inspect
from typing import Any

from searchlab.core import schema as _core
from searchlab.core.schema import Option, omegaconf_type, schema_defaults

RUNTIME = frozenset({"self", "space", "direction", "seed"})  # given by the run, not options

__all__ = ["RUNTIME", "Option", "omegaconf_type", "option_defaults", "options", "public_target",
           "schema_defaults", "searcher_config"]


def options(cls: type) -> list[Option]:
    """The options of ``cls``: keyword parameters of its ``__init__`` and of the bases it forwards to."""
    return _core.options(cls, RUNTIME)


def public_target(cls: type) -> str:
    """``searchlab.searchers.X`` for built-ins (each is re-exported there, and stored configs of
    earlier runs name that path), else ``module.qualname``."""
    if cls.__module__.startswith("searchlab.searchers._"):
        return f"searchlab.searchers.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def searcher_config(cls: type, target: str | None = None) -> type:
    """The structured-config dataclass of searcher ``cls``, built from its constructor."""
    schema = _core.schema_of(cls, target=target or public_target(cls), runtime=RUNTIME, suffix="Searcher")
    schema.__searcher__ = cls  # type: ignore[attr-defined]
    return schema


def option_defaults(cls: type) -> dict[str, Any]:
    """The constructor's defaults in the same shape as :func:`schema_defaults` (tuples as lists)."""
    out: dict[str, Any] = {}
    for o in options(cls):
        d = o.default
        out[o.name] = "???" if d is inspect.Parameter.empty else list(d) if isinstance(d, tuple) else d
    return out
