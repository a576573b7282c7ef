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

A timer that repeats the work itself (a C loop over a batch of back-to-back executions, as
the DFT and FFTW timers do, so that no Python call is inside the timed region) returns a
:class:`Batch`: the time of one execution (the sample kept) *and* how many executions it
averaged, so the protocol counts the time the run really measured toward ``min_time_s``.
Without it such a timer looks ``executions`` times shorter than it is and every
measurement runs to ``max_runs`` (issue 22, item 1).
"""

from __future__ import annotations

import math
import statistics
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields, make_dataclass
from typing import Any, NamedTuple

from searchlab.core.records import Measurement, Status
from searchlab.errors import ConfigError


@dataclass(frozen=True)
class MeasurementProtocol:
    """When to stop repeating a timed run.

    ``min_runs`` runs always happen (after ``warmup`` unrecorded ones); then runs continue
    until both the summed measured time reaches ``min_time_s`` and the 95 % interval of the
    median is within ``target_rel_ci`` of the median (half-width / median), or until
    ``max_runs``. ``target_rel_ci=0`` disables the interval criterion (fixed-time protocol).
    """

    min_runs: int = 5  # timed runs always made (after the warm-up)
    max_runs: int = 50  # timed runs at most, whatever the interval
    min_time_s: float = 0.05  # keep timing until the runs add up to this many seconds
    target_rel_ci: float = 0.02  # keep timing until the median's 95 % interval is this close (half-width / median; 0: off)
    warmup: int = 1  # unrecorded runs first (caches, clocks, JIT)

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


class Batch(NamedTuple):
    """One timed run that averaged ``executions`` back-to-back executions of the work."""

    per_execution_s: float  # the sample: one execution's time
    executions: int = 1  # the run measured per_execution_s * executions seconds


@dataclass(frozen=True)
class Samples:
    """Every timed run of one measurement, with the statistics a record keeps.

    ``values`` are per-execution times (one per run); ``measured_s`` is the time the runs
    really measured (more than ``sum(values)`` when a run timed a batch of executions).
    """

    values: tuple[float, ...]
    measured_s: float | None = None

    @property
    def measured(self) -> float:
        return float(sum(self.values)) if self.measured_s is None else self.measured_s

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


def median_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free interval of the median from exact binomial order-statistic ranks.

    The interval is ``[x_(l), x_(n+1-l)]`` (1-based, sorted) with ``l`` the largest rank whose
    lower tail ``P(Bin(n, 1/2) <= l - 1)`` is at most ``(1 - confidence) / 2``: coverage at least
    ``confidence`` for any continuous distribution, equal mass outside on either side
    (Hollander, Wolfe & Chicken, *Nonparametric Statistical Methods*, 3rd ed., §3.6). The normal
    approximation used before put the ranks one too high for n >= 9 (issue 35: 0.9475 at n = 21).
    With fewer than 6 samples no rank reaches 95 %; the interval is then the sample range
    (coverage 1 - 2^(1-n): 0.75 at n = 3), and a single sample is its own interval.
    """
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("median_ci of no samples")
    tail = (1.0 - confidence) / 2
    rank, cdf = 1, 0.0  # cdf: P(Bin(n, 1/2) <= rank - 1)
    while rank < n:
        cdf += _half_binomial_pmf(n, rank - 1)
        if cdf > tail:
            break
        rank += 1
    low = max(rank - 1, 1)  # the largest rank with tail <= ``tail`` (1: none, the sample range)
    return float(xs[low - 1]), float(xs[n - low])


def _half_binomial_pmf(n: int, k: int) -> float:
    """P(Bin(n, 1/2) = k), in log space (no overflow for thousands of pooled samples)."""
    return math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2.0))


def _timed(run: float | Batch) -> tuple[float, float]:
    """(the sample, the seconds the run measured) of what ``run_once`` returned."""
    if isinstance(run, Batch):
        if run.executions < 1:
            raise ValueError(f"Batch.executions={run.executions}: must be >= 1")
        return float(run.per_execution_s), float(run.per_execution_s) * run.executions
    return float(run), float(run)


def measure(run_once: Callable[[], float | Batch], protocol: MeasurementProtocol) -> Samples:
    """Repeat ``run_once`` under ``protocol``: it returns one run's time in seconds, or a
    :class:`Batch` (one execution's time and the executions the run averaged).

    The time criterion counts what the runs really measured; each run's per-execution time
    is kept as a sample. Exceptions from ``run_once`` propagate: the adapter classifies them
    into a failure mode.
    """
    for _ in range(protocol.warmup):
        run_once()
    values: list[float] = []
    measured = 0.0
    while len(values) < protocol.max_runs:
        value, seconds = _timed(run_once())
        values.append(value)
        measured += seconds
        if len(values) < protocol.min_runs or measured < protocol.min_time_s:
            continue
        if protocol.target_rel_ci == 0 or Samples(tuple(values)).rel_ci <= protocol.target_rel_ci:
            break
    return Samples(tuple(values), measured)


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


def samples_are_objective(m: Measurement) -> bool:
    """Whether ``m``'s samples are draws of its objective: the objective is their median (our
    protocol) or their mean (Kernel Tuner's ``time``). Rows whose samples are something else
    (e.g. times behind a Mflop/s objective) replay as recorded even with sample noise."""
    if m.status is not Status.OK or m.objective is None or not m.samples:
        return False
    tol = 1e-9 * max(abs(m.objective), 1e-300)
    return any(abs(center - m.objective) <= tol
               for center in (statistics.median(m.samples), statistics.fmean(m.samples)))
