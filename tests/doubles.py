"""Registering a test double: only registered classes are built from a config (searchlab.registry),
so a test that needs its own problem class registers it for the test's duration."""

from __future__ import annotations

import pytest


def register_problem(monkeypatch: pytest.MonkeyPatch, name: str, cls: type, where: str) -> None:
    """Add ``name`` -> ``cls`` (a problem class; its schema derived from its constructor) to the
    registered problems while the test runs."""
    from searchlab import registry
    from searchlab.core.schema import schema_of

    real = registry.entries
    target = f"{cls.__module__}.{cls.__qualname__}"
    double = registry.Entry("problem", name, schema_of(cls, target=target), target, where)
    monkeypatch.setattr(registry, "entries", lambda kind: {**real(kind), **({name: double} if kind == "problem" else {})})
