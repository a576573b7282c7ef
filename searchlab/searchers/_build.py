"""The one door that builds a searcher (issue 52, item 1): from a name, a config or a class, over a space.

Every path that turns a name or a config into a searcher comes here: the command line and ``optimize``
(:func:`searchlab.run.prepare.build_parts`), a study's cells and replays, tuning, reproduce, the Kernel Tuner,
Optuna and Ray Tune doors (:mod:`searchlab.integrations`), and the searchers that hold other searchers
(``portfolio``'s members, a transfer searcher's base). So one set of rules holds everywhere (Optuna's
``BaseSampler`` and Nevergrad's registry give one constructor the same way):

- a **name** (``"auto"``) is looked up in the registry (:mod:`searchlab.registry`: built-ins and plugins);
- a **config** is a mapping with ``_target_`` and the options: the target must be a registered searcher
  class (:func:`searchlab.recompose.registered_class`: records are data, nothing else is imported);
- a **class** is used as given (a caller's own subclass, e.g. in a test or a notebook);
- the class must be a :class:`Searcher`, fit the space (and the problem's capabilities, when given), and
  take the options: each refusal is one line naming the searcher (``ConfigError`` / ``IncompatibleError``).

:func:`searcher_class` is the lookup alone (a study checks its pairs before it builds anything; ``--help``
reads a class's options), and the only other place a searcher class is found by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Union

from searchlab.core.records import Direction
from searchlab.core.spaces import Space
from searchlab.errors import ConfigError, IncompatibleError, SearchlabError
from searchlab.searchers._base import Searcher

SearcherSpec = Union[str, type, Mapping[str, Any]]  # a registered name, a Searcher class, or a config


def searcher_class(spec: SearcherSpec, where: str = "searcher") -> type[Searcher]:
    """The registered :class:`Searcher` class that ``spec`` names (module docstring); one line if none."""
    cls: Any
    if isinstance(spec, str):
        from searchlab import registry

        cls = registry.searcher_class(spec)
    elif isinstance(spec, Mapping):
        from searchlab.recompose import registered_class

        cls = registered_class("searcher", spec.get("_target_"), where)
    else:
        cls = spec
    if not (isinstance(cls, type) and issubclass(cls, Searcher)):
        shown = spec.get("_target_") if isinstance(spec, Mapping) else spec
        raise ConfigError(f"{where}: {shown!r} is not a searchlab Searcher")
    return cls


def searcher_name(spec: SearcherSpec) -> str:
    """The public name of the searcher ``spec`` names (its class's ``name``; a registered name as given)."""
    if isinstance(spec, str):
        return spec
    cls = spec if isinstance(spec, type) else searcher_class(spec)
    return str(getattr(cls, "name", cls.__name__))


def build_searcher(spec: SearcherSpec, space: Space, *, direction: Direction = Direction.MINIMIZE,
                   seed: int | None = None, options: Mapping[str, Any] | None = None,
                   capabilities: Iterable[str] | None = None, where: str | None = None,
                   refusal: Callable[[str, str], str] | None = None) -> Searcher:
    """A ready searcher over ``space``: ``spec`` is a registered name, a Searcher class or a config mapping
    (``_target_`` and options; ``options`` add to or override the config's). ``capabilities``: the problem's,
    when there is one (a searcher may need some). ``where``: how the caller names the searcher in a message
    (``searcher=auto``; default: its name); ``refusal(name, reason)``: the line for an incompatible pair,
    where the caller says more (the command line names the searchers that do fit)."""
    shown = spec.get("_target_") if isinstance(spec, Mapping) else spec if isinstance(spec, str) else None
    cls = searcher_class(spec, where or f"searcher={shown}")
    name = where or f"searcher={shown if isinstance(spec, str) else cls.name}"
    given = {str(k): v for k, v in spec.items() if not str(k).startswith("_")} if isinstance(spec, Mapping) else {}
    given.update(options or {})
    reason = cls.incompatibility(space, capabilities)
    if reason:
        raise IncompatibleError(refusal(name, reason) if refusal is not None else f"{name}: {reason}")
    try:
        return cls(space, direction=direction, seed=seed, **given)
    except SearchlabError:
        raise
    except TypeError as exc:  # an option the class does not take
        raise ConfigError(f"{name}: options {sorted(given)} not accepted ({exc})") from None
