"""Problem adapters. Nothing below them imports them by name: :mod:`searchlab.registry` finds
their problems through the ``searchlab.problems`` entry point that points at :func:`problem_schemas`
(a bundle), the same way a plugin package registers its problems.

Each adapter package exports ``SCHEMAS`` (problem name -> problem class; its options are its
constructor's typed keyword parameters, searchlab.core.schema); add a new package to
``_PACKAGES`` (docs/registry.md).
"""

from __future__ import annotations

import importlib

_PACKAGES = [
    "searchlab.adapters.synthetic",
    "searchlab.adapters.grammar",
    "searchlab.adapters.futhark",
    "searchlab.adapters.knobs",
    "searchlab.adapters.user",
    "searchlab.adapters.table",
]


def problem_schemas() -> dict[str, type]:
    """Every built-in adapter's problems by name (the packages are imported only here)."""
    merged: dict[str, type] = {}
    for package in _PACKAGES:
        merged.update(importlib.import_module(package).SCHEMAS)
    return merged
