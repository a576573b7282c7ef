"""Configs read from files are data: rebuild them through the registered schemas only.

Why (issue 10, docs/security.md): Hydra's ``instantiate`` follows every ``_target_`` it
meets, nested ones included, so a crafted ``results.db`` (``resume=``, ``problem=table``,
``python -m searchlab.study``) could name any callable -- ``pathlib.Path.write_text``
wrote files through all three. The rule here is the project's: nothing read from a file
is instantiated unless it names a registered problem, searcher or executor class.

- :func:`registered_class`: the class of a ``_target_`` that one of the registered schemas
  (``conf/<group>/NAME.yaml`` over ``SCHEMAS``) names; any other target is refused with one
  line, and nothing is imported for it.
- :func:`recompose`: a stored config re-validated through its registered schema (unknown
  keys and wrong types are refused as at composition); a nested ``_target_`` (the grammar
  problem's objective) is accepted from a file only where it equals the schema's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from searchlab.core.commands import command
from searchlab.core.groups import REGISTERED
from searchlab.core.problem import Problem
from searchlab.errors import ConfigError, SearchlabError

GROUPS = REGISTERED  # searchlab.core.groups: the one list of config groups


class UntrustedTargetError(ConfigError):
    """A config names a ``_target_`` that is not a registered class (or a schema default)."""


def registered(group: str) -> dict[str, type]:
    """Registered name -> schema dataclass, for ``problem``, ``searcher`` or ``executor``."""
    from searchlab import registry

    if group not in registry.KINDS:
        raise ValueError(group)
    return registry.schemas(group)


def is_registered(group: str, target: object) -> bool:
    from searchlab import registry

    return registry.is_registered_target(target, group)


def registered_name(group: str, target: object, where: str) -> str:
    """The registered name of ``target``; UntrustedTargetError otherwise. The gate is the registry's
    (:func:`searchlab.registry.name_of_target`): one answer to "is this registered?" everywhere."""
    from searchlab import registry

    name = registry.name_of_target(target, group)
    if name is None:
        raise UntrustedTargetError(f"{where}._target_={target!r} is not a registered {group} class "
                                   f"(registered: {', '.join(sorted(registry.entries(group)))}; "
                                   f"see {command('searchlab', '--help')})")
    return name


def registered_class(group: str, target: object, where: str) -> type:
    """The class a registered target names (imported only after the check)."""
    from searchlab import registry

    return registry.load_class(group, registered_name(group, target, where))


def _nested_targets(value: Any, path: str) -> list[tuple[str, Any]]:
    """(dotted path, value) of every mapping holding ``_target_`` below the top level."""
    found: list[tuple[str, Any]] = []
    if isinstance(value, Mapping):
        if "_target_" in value and path:
            found.append((path, value))
        for key, item in value.items():
            found += _nested_targets(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found += _nested_targets(item, f"{path}.{i}" if path else str(i))
    return found


def _at(value: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def recompose(group: str, stored: object, where: str) -> dict[str, Any]:
    """Plain values of a config read from a file, rebuilt through its registered schema."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    if not isinstance(stored, Mapping):
        raise ConfigError(f"{where}: the stored {group} config is {type(stored).__name__}, not a mapping")
    name = registered_name(group, stored.get("_target_"), where)
    schema = registered(group)[name]
    values = {k: v for k, v in stored.items() if k != "_target_"}
    defaults = OmegaConf.to_container(OmegaConf.structured(schema), resolve=False)
    for path, node_value in _nested_targets(values, ""):
        if node_value != _at(defaults, path):
            raise UntrustedTargetError(f"{where}: {group}.{path}._target_={node_value.get('_target_')!r} read from a "
                                       f"file is refused: records are data, and only registered {group} classes "
                                       f"and their schema defaults are built from them")
    try:
        node = OmegaConf.merge(OmegaConf.structured(schema), OmegaConf.create(values))
        plain = OmegaConf.to_container(node, resolve=False)
    except (OmegaConfBaseException, ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: the stored {group} config does not fit {group}={name}: "
                          f"{str(exc).splitlines()[0]}") from None
    assert isinstance(plain, dict)
    return {str(k): v for k, v in plain.items()}


def build_problem(source: Problem | Mapping[str, Any]) -> Problem:
    """A problem from an object or a config mapping whose ``_target_`` is a registered problem.

    Built by calling the registered class with the config's plain values, never through
    Hydra's recursive ``instantiate``: a nested ``_target_`` is data here (the grammar
    problem resolves its own objective), so no config can make us call another callable
    (docs/security.md). A missing mandatory value (``???``) is named in one line.
    """
    if isinstance(source, Problem):
        return source
    from omegaconf import DictConfig, OmegaConf

    node = source if isinstance(source, DictConfig) else OmegaConf.create(dict(source))
    prefix = f"{node._get_full_key(None)}." if node._get_full_key(None) else ""
    missing = sorted(str(k).removeprefix(prefix) for k in OmegaConf.missing_keys(node))
    target = node.get("_target_")
    if missing:
        from searchlab.registry import name_of_target

        name = name_of_target(target, "problem") or str(target).rsplit(".", 1)[-1]
        raise ConfigError(f"problem={name} needs problem.{missing[0]}=... (no value given)")
    cls = registered_class("problem", target, "problem")
    data = OmegaConf.to_container(node, resolve=True)
    assert isinstance(data, dict)
    kwargs = {str(k): v for k, v in data.items() if not str(k).startswith("_")}
    try:
        problem = cls(**kwargs)
    except SearchlabError:
        raise
    except Exception as exc:  # an option the class does not take, or a value it cannot use
        reason = " ".join(str(exc).split())[:500]  # one line, whatever the library's message looks like
        raise ConfigError(f"problem {target!r} could not be built: {type(exc).__name__}: {reason}") from None
    if not isinstance(problem, Problem):
        raise ConfigError(f"problem target {target!r} is not a searchlab Problem")
    return problem
