"""Kernel Tuner's ``Searchspace`` built from a searchlab knob space.

Built as Kernel Tuner builds it (``Searchspace(tune_params, restrictions, max_threads)``, solved
by python-constraint), with one restriction: our known constraints (:meth:`KnobSpace.check`),
the way ``bench/peers_kt.py`` restricts Kernel Tuner to a table's configurations. Kernel Tuner's
strategies then draw random members, neighbours and validity checks (``is_param_config_valid``)
from exactly the members our known constraints admit: a constraint-aware strategy never
proposes a known-infeasible configuration, and one that snaps to an invalid point gets
``InvalidConfig`` without a measurement. Why not hand over our own enumeration (``from_cache``):
the order of the member list matters to the strategies (neighbours at equal distance are taken
in list order, random samples are drawn by index); with the solver's order, a bridged strategy
given the same global random states proposes exactly what Kernel Tuner's own run proposes.
``max_threads`` is Kernel Tuner's simulation device's (1e9): no block-size restriction is added.

Kernel Tuner holds the whole list in memory, so spaces above :data:`MAX_MEMBERS` are refused.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from searchlab.core.records import Config
from searchlab.core.spaces import KnobSpace

MAX_MEMBERS = 2_000_000  # product of the knobs' sizes Kernel Tuner is asked to enumerate
MAX_THREADS = 1_000_000_000  # Kernel Tuner's SimulationDevice


def too_large(space: KnobSpace) -> str | None:
    """Why Kernel Tuner's enumerated search space cannot hold ``space`` (None: it can)."""
    if space.size() > MAX_MEMBERS:
        return (f"Kernel Tuner's strategies enumerate the search space; this one has {space.size():,} members "
                f"(at most {MAX_MEMBERS:,})")
    return None


def tune_params(space: KnobSpace) -> dict[str, list[Any]]:
    """Kernel Tuner's ``tune_params``: each knob's values in the knob's order."""
    return {k.name: list(k.values) for k in space.knobs}


_BUILT: dict[int, tuple[KnobSpace, Any]] = {}  # id(space) -> (space, its Searchspace), the last few
_KEEP = 4


def build_searchspace(space: KnobSpace) -> Any:
    """A Kernel Tuner ``Searchspace`` of the members that satisfy ``space``'s known constraints.

    Solved once per space object and process, and each caller gets a deep copy of that pristine
    instance: solving the constraint problem checks every member of the product (0.2 s at
    10,240), and a replay study runs many seeds on one table's space. A copy, not the instance:
    what a strategy leaves in it (its neighbour indices, built in the order it explored) changes
    a later run's proposals, and a bridged run must propose what Kernel Tuner's own run does.
    Keyed by identity, not equality: two recorded tables with the same knobs are equal spaces
    with other members."""
    hit = _BUILT.get(id(space))
    if hit is None or hit[0] is not space:
        hit = _BUILT[id(space)] = (space, _build(space))
        while len(_BUILT) > _KEEP:
            _BUILT.pop(next(iter(_BUILT)))
    return _fresh_copy(hit[1])


def _fresh_copy(pristine: Any) -> Any:
    """A copy whose mappings and sets (the caches a run fills) are its own, sharing the rest (the
    member list and its index arrays, which no strategy writes): a deep copy of the whole
    space cost 0.2 s a run, as much as solving it."""
    out = copy.copy(pristine)
    for name, value in vars(pristine).items():
        if isinstance(value, (dict, set)) and name not in _READ_ONLY:
            setattr(out, name, copy.deepcopy(value))
    return out


# Kernel Tuner 1.5's member -> index map: built with the list, never written after (were it
# renamed, it would be copied: slower, still right)
_READ_ONLY = frozenset({"_Searchspace__dict"})


def _build(space: KnobSpace) -> Any:
    from constraint import FunctionConstraint
    from kernel_tuner.searchspace import Searchspace

    names = space.names

    def admit(*values: Any) -> bool:
        return space.check(Config(dict(zip(names, values)))) is None

    return Searchspace(tune_params(space), [FunctionConstraint(admit)], MAX_THREADS)


def to_config(names: Sequence[str], element: Sequence[Any]) -> Config:
    """The configuration of a Kernel Tuner parameter tuple (numpy scalars made plain)."""
    return Config({n: (v.item() if hasattr(v, "item") else v) for n, v in zip(names, element)})
