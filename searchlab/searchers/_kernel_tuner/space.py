"""Kernel Tuner's ``Searchspace`` built from a searchlab knob space.

Why ``from_cache``: Kernel Tuner builds a space by solving its restrictions with
python-constraint; our known constraints are already decided by :meth:`KnobSpace.check`, so
the feasible members are enumerated here and handed over as a ready list (Kernel Tuner's own
path for a space read from a cache file). Kernel Tuner's strategies then draw random members,
neighbours and validity checks (``is_param_config_valid``) from exactly the members our known
constraints admit: a constraint-aware strategy never proposes a known-infeasible configuration,
and one that snaps to an invalid point gets ``InvalidConfig`` without a measurement.

Kernel Tuner holds the whole list in memory, so spaces above :data:`MAX_MEMBERS` are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from searchlab.core.records import Config
from searchlab.core.spaces import KnobSpace

MAX_MEMBERS = 2_000_000  # product of the knobs' sizes Kernel Tuner is asked to enumerate


def too_large(space: KnobSpace) -> str | None:
    """Why Kernel Tuner's enumerated search space cannot hold ``space`` (None: it can)."""
    if space.size() > MAX_MEMBERS:
        return (f"Kernel Tuner's strategies enumerate the search space; this one has {space.size():,} members "
                f"(at most {MAX_MEMBERS:,})")
    return None


def tune_params(space: KnobSpace) -> dict[str, list[Any]]:
    """Kernel Tuner's ``tune_params``: each knob's values in the knob's order."""
    return {k.name: list(k.values) for k in space.knobs}


def build_searchspace(space: KnobSpace) -> Any:
    """A Kernel Tuner ``Searchspace`` of the members that satisfy ``space``'s known constraints."""
    from kernel_tuner.searchspace import Searchspace

    names = space.names
    members = {str(i): {n: config[n] for n in names} for i, config in enumerate(space.enumerate())}
    return Searchspace(None, None, None, from_cache={"tune_params": tune_params(space), "cache": members})


def to_config(names: Sequence[str], element: Sequence[Any]) -> Config:
    """The configuration of a Kernel Tuner parameter tuple (numpy scalars made plain)."""
    return Config({n: (v.item() if hasattr(v, "item") else v) for n, v in zip(names, element)})
