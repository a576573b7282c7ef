"""Paired speed-ups and the rule that recommends a tuned configuration (never worse than doing nothing).

The confirm phase (:mod:`searchlab.run.confirm`) and problems that compare on their own datasets
(the Futhark adapter) decide alike, so the rule sits in the core layer.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from searchlab.core.measure import median_ci
from searchlab.core.records import Direction


def ratio_interval(ratios: Sequence[float]) -> dict[str, Any]:
    """Median of paired ratios with its distribution-free 95 % interval (``median_ci``; with 5
    pairs that is their range, ≈ 94 % coverage)."""
    lo, hi = median_ci(ratios)
    return {"speedup": float(statistics.median(ratios)), "ci95": [lo, hi], "pairs": len(ratios)}


def speedup(default: float, other: float, direction: Direction) -> float:
    """How many times better ``other`` is than ``default`` (> 1: better), for either direction."""
    num, den = (default, other) if direction is Direction.MINIMIZE else (other, default)
    return num / den if den > 0 else math.inf


def recommended(comparison: Mapping[str, Any] | None) -> bool:
    """Whether a tuned configuration measurably beats the default: the lower end of the paired
    95 % interval of its speed-up is above 1 (never worse than doing nothing)."""
    return comparison is not None and float(comparison["ci95"][0]) > 1.0
