"""The calibrated pieces of the tuning-knob search (paper 001): the §4.1 cutoff of a proxy
constraint, §7 constraint scaling, and the quality transform.

See ``_probabilistic_model`` for how they enter the score and docs/knobs.md for where they
deviate from the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from searchlab.core.records import Direction
from searchlab.core.sensors import Normal


def transform(value: float, direction: Direction, kind: str) -> float | None:
    """Quality, high is good: the raw formula (paper), -log or 1/value for minimising."""
    sign = 1.0 if direction is Direction.MAXIMIZE else -1.0
    if kind == "raw":
        return sign * value
    if not value > 0 or not np.isfinite(value):
        return None
    if kind == "log":
        return sign * float(np.log(value))
    return -sign / value  # inverse: 1/time for minimising, -1/value for maximising


def scale_log_p(log_p: np.ndarray, factor: float) -> np.ndarray:
    """P(ok) with its failure odds multiplied by ``factor``: p / (p + factor (1 - p)), in logs."""
    if factor == 1.0:
        return log_p
    p = np.exp(log_p)
    return np.asarray(log_p - np.log(factor + (1.0 - factor) * p))


class Calibration:
    """§7 constraint scaling: "dynamically adjusting constraint violation prediction
    probabilities based on observed failure rates" (details in [25], which we do not have).

    Ours: each test the searcher chose was proposed with a predicted P(ok) per constraint;
    once its result tells whether the constraint held, ``expected`` adds the predicted failure
    probability and ``observed`` the failure. The factor on a constraint's failure odds is
    ``(observed + 1) / (expected + 1)`` (one pseudo-test each, so no evidence means 1): a
    constraint that fails more often than predicted is feared more, one that fails less
    is feared less. Only the model's own predictions are calibrated, never the first
    (random) test.
    """

    def __init__(self) -> None:
        self.expected: dict[str, float] = {}
        self.observed: dict[str, int] = {}

    def record(self, predicted: Mapping[str, float], verdicts: Mapping[str, bool]) -> None:
        for name, log_p in predicted.items():
            if name in verdicts:
                self.expected[name] = self.expected.get(name, 0.0) + float(-np.expm1(log_p))
                self.observed[name] = self.observed.get(name, 0) + (not verdicts[name])

    def factors(self) -> dict[str, float]:
        return {n: (self.observed[n] + 1.0) / (self.expected[n] + 1.0) for n in self.expected}


def cutoff_region(failed: Sequence[float], passed: Sequence[float]) -> Normal | None:
    """The §4.1 cutoff from failed and successful values of a proxy metric (None: no failure yet).

    The paper: the region runs from the lowest failed value to the lowest failed value above
    the highest successful one; its mean and spread are the cutoff. It leaves open the case
    where no failure lies above the highest success (every failure is below some success:
    the proxy does not separate them yet). Taking the largest failure as the end (as we did)
    put the cutoff inside the successes and cut off the largest successful values. Ours: the
    region still runs from the lowest failure up through the highest success, but the cutoff
    is centred on the highest success — nothing above it has failed yet, so no successful
    value is ever predicted more likely to fail than not (P(ok) >= 0.5 at each).
    """
    if not failed:
        return None
    fails = np.sort(np.asarray(failed, dtype=float))
    high_ok = max(passed) if passed else -np.inf
    values = np.concatenate([fails, np.asarray(passed, dtype=float)])
    above = fails[fails > high_ok]
    if len(above):
        region = values[(values >= fails[0]) & (values <= above[0])]
        return Normal(float(region.mean()), float(region.std()))
    region = values[values >= fails[0]]
    return Normal(float(high_ok), float(region.std()))
