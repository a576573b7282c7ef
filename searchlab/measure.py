"""The measurement protocol every device problem shares.

A single timing on these machines is not a fact (docs: DESIGN "Measuring so that
comparisons can be trusted"). Like ``futhark bench``, a measurement repeats a run until
enough time has been measured *and* the 95 % confidence interval of the median is tight
enough, bounded by a cap on the number of runs. Every sample is kept; the record carries
the median, the coefficient of variation and the interval so that a study can say how
noisy each number was.

Usage by an adapter::

    samples = measure(lambda: run_kernel_once(), protocol)   # each call returns seconds
    Measurement.ok(samples.median, samples=samples.values, sensors={**samples.sensors(), ...})
"""

from __future__ import annotations

import math
import statistics
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields, make_dataclass
from typing import Any

from searchlab.errors import ConfigError

# Two-sided 95 % normal quantile; the median's interval uses the order-statistic method.
_Z95 = 1.959963984540054


@dataclass(frozen=True)
class MeasurementProtocol:
    """When to stop repeating a timed run.

    ``min_runs`` runs always happen (after ``warmup`` unrecorded ones); then runs continue
    until both the summed measured time reaches ``min_time_s`` and the 95 % interval of the
    median is within ``target_rel_ci`` of the median (half-width / median), or until
    ``max_runs``. ``target_rel_ci=0`` disables the interval criterion (fixed-time protocol).
    """

    min_runs: int = 5
    max_runs: int = 50
    min_time_s: float = 0.05
    target_rel_ci: float = 0.02
    warmup: int = 1

    def __post_init__(self) -> None:
        checks = [
            (self.min_runs >= 1, f"measure.min_runs={self.min_runs}: must be >= 1"),
            (self.max_runs >= self.min_runs, f"measure.max_runs={self.max_runs}: must be >= min_runs ({self.min_runs})"),
            (math.isfinite(self.min_time_s) and self.min_time_s >= 0,
             f"measure.min_time_s={self.min_time_s}: must be finite, >= 0"),
            (math.isfinite(self.target_rel_ci) and self.target_rel_ci >= 0,
             f"measure.target_rel_ci={self.target_rel_ci}: must be finite, >= 0"),
            (self.warmup >= 0, f"measure.warmup={self.warmup}: must be >= 0"),
        ]
        for ok, message in checks:
            if not ok:
                raise ConfigError(message)


@dataclass(frozen=True)
class Samples:
    """Every timed run of one measurement, with the statistics a record keeps."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return float(statistics.median(self.values))

    @property
    def cv(self) -> float:
        """Coefficient of variation (stdev / mean); 0 for fewer than two samples."""
        if len(self.values) < 2:
            return 0.0
        mean = statistics.fmean(self.values)
        return float(statistics.stdev(self.values) / mean) if mean > 0 else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        return median_ci(self.values)

    @property
    def rel_ci(self) -> float:
        """Half-width of the median's 95 % interval relative to the median."""
        lo, hi = self.ci95
        med = self.median
        return (hi - lo) / 2 / med if med > 0 else math.inf

    def sensors(self) -> dict[str, float]:
        """The noise figures every device problem reports as sensors."""
        lo, hi = self.ci95
        return {"runs": float(len(self.values)), "cv": self.cv, "ci95_lo": lo, "ci95_hi": hi,
                "min_time": float(min(self.values))}


def median_ci(values: Sequence[float]) -> tuple[float, float]:
    """Distribution-free 95 % interval of the median from order statistics.

    The ranks n/2 ± z·√n/2 (rounded outwards, clipped to the sample) bound the median with
    about 95 % coverage for any continuous distribution; with fewer than 3 samples the
    interval is the sample range.
    """
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("median_ci of no samples")
    if n < 3:
        return float(xs[0]), float(xs[-1])
    half = _Z95 * math.sqrt(n) / 2
    lo = max(math.floor(n / 2 - half), 0)
    hi = min(math.ceil(n / 2 + half), n - 1)
    return float(xs[lo]), float(xs[hi])


def measure(run_once: Callable[[], float], protocol: MeasurementProtocol) -> Samples:
    """Repeat ``run_once`` (returns one run's time in seconds) under ``protocol``.

    Exceptions from ``run_once`` propagate: the adapter classifies them into a failure mode.
    """
    for _ in range(protocol.warmup):
        run_once()
    values: list[float] = []
    while len(values) < protocol.max_runs:
        values.append(float(run_once()))
        if len(values) < protocol.min_runs or sum(values) < protocol.min_time_s:
            continue
        if protocol.target_rel_ci == 0 or Samples(tuple(values)).rel_ci <= protocol.target_rel_ci:
            break
    return Samples(tuple(values))


def _config_class() -> type:
    """``MeasureConfig``: the protocol's fields as a mutable dataclass for a problem's Hydra
    schema (``problem.measure.min_runs=10``). Made from :class:`MeasurementProtocol` so each
    option is declared once; Hydra needs a non-frozen dataclass for overrides."""
    hints = typing.get_type_hints(MeasurementProtocol)
    spec = [(f.name, hints[f.name], f.default) for f in fields(MeasurementProtocol) if f.default is not MISSING]
    cls = make_dataclass("MeasureConfig", spec)
    cls.__module__ = __name__
    return cls


MeasureConfig = _config_class()


def protocol_from(options: Mapping[str, Any] | MeasurementProtocol | None,
                  **defaults: Any) -> MeasurementProtocol:
    """A protocol from a problem's ``measure`` option (a mapping of field overrides).

    ``defaults`` are the problem's own defaults, overridden by ``options``; unknown keys are a
    :class:`ConfigError` naming them.
    """
    if isinstance(options, MeasurementProtocol):
        return options
    given = dict(options or {})
    known = {f.name for f in fields(MeasurementProtocol)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise ConfigError(f"problem.measure: unknown option(s) {unknown} (known: {sorted(known)})")
    return MeasurementProtocol(**{**defaults, **given})
