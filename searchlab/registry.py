"""The registry: which problems and searchers exist, found through entry points.

Why entry points: a researcher's searcher or an engineer's problem lives in their own
package; ``pip install`` of that package is all it takes for ``searcher=NAME`` or
``problem=NAME`` to work in the CLI, ``--help``, studies and ``portfolio`` members
(docs/registry.md). Two groups, ``searchlab.problems`` and ``searchlab.searchers``; an
entry point loads to one of

- a structured-config dataclass whose ``_target_`` default names the class (the entry
  point's name is the public name),
- a :class:`~searchlab.searchers.Searcher` subclass: its config schema is derived from its
  constructor's typed signature (:func:`searchlab.searchers.searcher_config`),
- a mapping ``name -> one of the above`` (or a callable returning one): a bundle. searchlab
  registers its own built-ins this way (``searchlab.searchers:SCHEMAS``,
  ``searchlab.adapters:SCHEMAS``), so a built-in added to a ``SCHEMAS`` dict needs no new line
  in pyproject.toml.

Records are data, never code: :func:`is_registered_target` is the one place that answers
whether a dotted path read from a file (a ``results.db`` config, a study, a resume) may be
imported and instantiated: only the ``_target_`` of a registered problem, searcher or
executor may.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from searchlab.core.groups import ENTRY_POINTS, REGISTERED, current_target
from searchlab.core.schema import schema_of
from searchlab.errors import ConfigError, did_you_mean

GROUPS = ENTRY_POINTS  # searchlab.core.groups: the one list of config groups
KINDS = REGISTERED
# what the run supplies to a class, not options of its config
RUNTIME = {"searcher": frozenset({"space", "direction", "seed"})}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# searchlab's own entry points (pyproject.toml; tests/registry/test_registry.py keeps the two equal). They are
# always read from here, not from the installed metadata, which goes stale when a module moves
# (an editable install is not re-installed on every checkout) or is absent (a source tree on PYTHONPATH).
BUILTINS = {
    "problem": {"searchlab": "searchlab.adapters:problem_schemas", "tuning": "searchlab.tuning:SCHEMAS"},
    "searcher": {"searchlab": "searchlab.searchers:SCHEMAS"},
}
# the executors: classes whose constructors declare their options, named by the path stored configs use
_EXECUTORS = {"serial": "searchlab.run.execution.SerialExecutor", "ray": "searchlab.run.execution.RayExecutor",
              "auto": "searchlab.run.execution.AutoExecutor"}
# Where a registered class lived before it moved (issue 21): stored configs of earlier runs name these
# ``_target_``s, and results.db files stay readable and resumable. The one alias table; old -> new.


@dataclass(frozen=True)
class Entry:
    """One registered problem, searcher or executor."""

    kind: str  # problem | searcher | executor
    name: str  # what ``problem=NAME`` / ``searcher=NAME`` selects
    schema: type  # the structured config dataclass stored in Hydra's ConfigStore
    target: str  # the schema's ``_target_``: the class a config of this entry builds
    source: str  # where it came from: "entry point GROUP:NAME (DIST)"


def _target_of(schema: type, where: str) -> str:
    if not dataclasses.is_dataclass(schema):
        raise ConfigError(f"{where}: {schema!r} is not a config dataclass or a Searcher class")
    default = {f.name: f.default for f in dataclasses.fields(schema)}.get("_target_")
    if not isinstance(default, str) or not default:
        raise ConfigError(f"{where}: schema {schema.__name__} has no `_target_: str = 'pkg.Class'` default")
    return default


def _as_schema(kind: str, obj: Any, where: str) -> type:
    """A schema from what an entry point names: a config dataclass as it is, or a class whose
    schema is derived from its constructor (:func:`searchlab.core.schema.schema_of`: the one
    recipe for problems, searchers and executors alike)."""
    if not isinstance(obj, type):
        raise ConfigError(f"{where}: {obj!r} is not a class")
    if not dataclasses.is_dataclass(obj):
        return schema_of(obj, runtime=RUNTIME.get(kind, frozenset()),
                         suffix={"searcher": "Searcher", "problem": "Problem"}.get(kind, ""),
                         target=_builtin_searcher_target(kind, obj))
    _target_of(obj, where)
    return obj


def _builtin_searcher_target(kind: str, cls: type) -> str | None:
    """Built-in searchers are named ``searchlab.searchers.X`` in stored configs (re-exported there)."""
    if kind == "searcher" and cls.__module__.startswith("searchlab.searchers._"):
        return f"searchlab.searchers.{cls.__name__}"
    return None


def _expand(ep: EntryPoint, kind: str) -> Iterator[tuple[str, Any]]:
    obj = ep.load()
    if callable(obj) and not isinstance(obj, type):
        obj = obj()  # a bundle factory
    if isinstance(obj, Mapping):
        yield from obj.items()
    else:
        yield ep.name, obj


def _source(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    label = f"{dist.name} {dist.version}" if dist is not None else "searchlab's built-ins"
    return f"entry point {ep.group}:{ep.name} ({label})"


def _entry_points(kind: str) -> list[EntryPoint]:
    """Installed plugins' entry points, then searchlab's own (:data:`BUILTINS`)."""
    found = sorted((ep for ep in entry_points(group=GROUPS[kind])
                    if getattr(getattr(ep, "dist", None), "name", None) != "searchlab"), key=lambda e: e.name)
    return found + [EntryPoint(name, value, GROUPS[kind]) for name, value in BUILTINS[kind].items()]


def _load(kind: str) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for ep in _entry_points(kind):
        source = _source(ep)
        try:
            items = list(_expand(ep, kind))
        except Exception as exc:  # a broken plugin must not take the built-ins down with it
            print(f"searchlab: warning: {source} cannot be loaded ({type(exc).__name__}: {exc}); skipped",
                  file=sys.stderr, flush=True)
            continue
        for name, obj in items:
            where = f"{kind} {name!r} from {source}"
            if not _NAME.match(str(name)):
                raise ConfigError(f"{where}: a {kind} name must be an identifier")
            schema = _as_schema(kind, obj, where)
            entry = Entry(kind, str(name), schema, _target_of(schema, where), source)
            old = out.get(entry.name)
            if old is not None and (old.schema is not entry.schema):
                raise ConfigError(f"{kind}={name} is registered twice: by {old.source} and by {source}; "
                                  "uninstall one of them")
            out.setdefault(entry.name, entry)
    return out


@cache
def _registry(kind: str) -> Mapping[str, Entry]:
    if kind == "executor":
        return {name: Entry(kind, name, schema_of(_import(path), target=path), path, "searchlab")
                for name, path in _EXECUTORS.items()}
    if kind not in GROUPS:
        raise ValueError(f"kind={kind!r}: one of {KINDS}")
    return _load(kind)


def refresh() -> None:
    """Forget what was loaded (after installing a plugin into a running interpreter)."""
    _registry.cache_clear()
    _aliases.cache_clear()


def entries(kind: str) -> Mapping[str, Entry]:
    """Every registered problem / searcher / executor by name."""
    return _registry(kind)


def problems() -> Mapping[str, Entry]:
    return entries("problem")


def searchers() -> Mapping[str, Entry]:
    return entries("searcher")


def schemas(kind: str) -> dict[str, type]:
    return {name: e.schema for name, e in entries(kind).items()}


def entry(kind: str, name: str) -> Entry:
    """The entry called ``name``, or a one-line ConfigError listing what there is."""
    found = entries(kind).get(name)
    if found is None:
        names = sorted(entries(kind))
        raise ConfigError(f"{kind}={name}: no such {kind} is registered{did_you_mean(name, names)} "
                          f"(available: {', '.join(names)})")
    return found


def _import(target: str) -> Any:
    module, _, attr = target.rpartition(".")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_class(kind: str, name: str) -> type:
    """The class a registered name builds (imported only because it is registered)."""
    e = entry(kind, name)
    try:
        cls = _import(e.target)
    except Exception as exc:
        raise ConfigError(f"{kind}={name}: target {e.target!r} from {e.source} cannot be imported ({exc})") from None
    if not isinstance(cls, type):
        raise ConfigError(f"{kind}={name}: target {e.target!r} is not a class")
    return cls


def problem_class(name: str) -> type:
    return load_class("problem", name)


def searcher_class(name: str) -> type:
    return load_class("searcher", name)


@cache
def _aliases(kind: str) -> Mapping[str, str]:
    """Other dotted paths of each registered class (its defining module), found by importing the
    registered targets only (trusted: they come from installed entry points)."""
    out: dict[str, str] = {}
    for name, e in entries(kind).items():
        try:
            cls = _import(e.target)
        except Exception:
            continue
        out[f"{cls.__module__}.{cls.__qualname__}"] = name
    return out


def name_of_target(target: object, kind: str | None = None) -> str | None:
    """The registered name whose class ``target`` (a dotted path read from anywhere) denotes, else None.

    Nothing named by ``target`` is imported: only registered targets are compared, so a
    ``_target_`` read from a record can be checked before anything is instantiated."""
    if not isinstance(target, str):
        return None
    target = current_target(target)  # a record of an earlier release (searchlab.core.groups.MOVED)
    for k in (kind,) if kind else KINDS:
        for name, e in entries(k).items():
            if e.target == target:
                return name
        alias = _aliases(k).get(target)
        if alias is not None:
            return alias
    return None


def is_registered_target(target: object, kind: str | None = None) -> bool:
    """Whether ``target`` is the ``_target_`` of a registered problem/searcher/executor (of ``kind``)."""
    return name_of_target(target, kind) is not None


def check_target(target: object, kind: str, what: str) -> str:
    """``target`` if it is registered for ``kind``, else a ConfigError naming it (for records read from files)."""
    if not is_registered_target(target, kind):
        raise ConfigError(f"{what}: _target_={target!r} is not a registered {kind}; refusing to import it "
                          f"(registered: {', '.join(sorted(entries(kind)))})")
    return str(target)


def describe(kind: str, name: str) -> str:
    """One phrase about an entry: the first paragraph of its class's docstring (or of the class's
    module), joined into one line: a first line alone may stop mid-sentence (issue 46, item 4)."""
    try:
        cls = load_class(kind, name)
    except ConfigError:
        return ""
    for doc in (cls.__doc__, getattr(sys.modules.get(cls.__module__), "__doc__", None)):
        if doc and doc.strip():
            return " ".join(doc.strip().split("\n\n")[0].split()).rstrip(".")
    return ""
