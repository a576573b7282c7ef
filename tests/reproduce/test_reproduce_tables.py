"""Holm's correction (pure)."""

from __future__ import annotations

from searchlab.reproduce.tables import holm


def test_holm_matches_the_step_down_rule() -> None:
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.5]) == [0.5]
    assert holm([0.9, 0.001]) == [0.9, 0.002]
