"""Registering a test double: only registered classes are built from a config (searchlab.registry),
so a test that needs its own problem class registers it for the test's duration."""

from __future__ import annotations

import pytest


def register_problem(monkeypatch: pytest.MonkeyPatch, name: str, config_cls: type, where: str) -> None:
    """Add ``name`` -> ``config_cls`` to the registered problems while the test runs."""
    from searchlab import registry

    real = registry.entries
    double = registry.Entry("problem", name, config_cls, config_cls._target_, where)  # type: ignore[attr-defined]
    monkeypatch.setattr(registry, "entries", lambda kind: {**real(kind), **({name: double} if kind == "problem" else {})})
