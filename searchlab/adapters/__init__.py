"""Problem searchlab.adapters. They depend on searchlab, never the reverse: searchlab finds their
config schemas through the ``searchlab.schemas`` entry point, which points at
:func:`problem_schemas`.

Each adapter package exports ``SCHEMAS`` (problem name -> structured config dataclass);
add a new package to ``_PACKAGES``.
"""

from __future__ import annotations

import importlib

_PACKAGES = [
    "searchlab.adapters.synthetic",
    "searchlab.adapters.grammar",
    "searchlab.adapters.futhark",
    "searchlab.adapters.knobs",
]


def problem_schemas() -> dict[str, type]:
    merged: dict[str, type] = {}
    for package in _PACKAGES:
        merged.update(importlib.import_module(package).SCHEMAS)
    return merged
