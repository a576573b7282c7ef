"""Recorded measurement tables, replayed as problems (DESIGN.md, "Replay").

A table maps every configuration of a space to the measurement recorded for it. A
:class:`TableProblem` evaluates by look-up: no device time is spent, but each evaluation
is charged the recorded compile + run time (``Measurement.charged_s``), so studies with
hundreds of seeds are cheap, fair and reproducible. Sources: our own table files
(``save_table``), Kernel Tuner cache files (searchlab.adapters.knobs), and exhaustive runs.

Tables keep every recorded sample. With ``sample_noise=true`` a replay returns one recorded
sample per evaluation instead of the row's median/mean, drawn by a generator seeded from
(``noise_seed``, the configuration, how often this replay has drawn it), so replayed studies
see the noise real runs see, reproducibly, and two searchers run with the same seed see the
same draws for the same configuration (common random numbers for paired comparisons). See
docs/measurement.md, "Noise in replays".
"""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from searchlab.adapters.table._file import Table, load_table
from searchlab.core.problem import Problem
from searchlab.errors import ConfigError
from searchlab.records import Config, FailureMode, Measurement, Status
from searchlab.sensors import SensedKnobSpace
from searchlab.spaces import Space


def samples_are_objective(m: Measurement) -> bool:
    """Whether ``m``'s samples are draws of its objective: the objective is their median (our
    protocol) or their mean (Kernel Tuner's ``time``). Rows whose samples are something else
    (e.g. times behind a Mflop/s objective) replay as recorded even with sample noise."""
    if m.status is not Status.OK or m.objective is None or not m.samples:
        return False
    tol = 1e-9 * max(abs(m.objective), 1e-300)
    return any(abs(center - m.objective) <= tol
               for center in (statistics.median(m.samples), statistics.fmean(m.samples)))


def draw_sample(m: Measurement, seed: int, key: str, occurrence: int) -> Measurement:
    """``m`` with one of its recorded samples as the objective (see the module docstring).

    Sensors equal to the recorded objective (the objective's own sensor) take the drawn value;
    ``extra`` keeps the recorded objective and the sample's index.
    """
    digest = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    rng = np.random.default_rng(np.random.SeedSequence([seed & (2**63 - 1), digest, occurrence]))
    index = int(rng.integers(len(m.samples)))
    value = m.samples[index]
    sensors = {k: (value if v == m.objective else v) for k, v in m.sensors.items()}
    extra = {**m.extra, "recorded_objective": m.objective, "drawn_sample": index}
    return replace(m, objective=value, samples=(value,), sensors=sensors, extra=extra)


class TableProblem(Problem):
    """Replay a table: evaluation is a look-up, charged the recorded time.

    ``table``: a table already in memory (studies, tests, the replays that extend this class);
    it is not an option of the config (``__runtime__``), and ``params`` does not hold it."""

    name = "table"
    deterministic = True
    __runtime__: ClassVar[frozenset[str]] = frozenset({"table"})

    def __init__(self, table: Table | None = None, path: str = "???", sample_noise: bool = False,
                 noise_seed: int | None = None) -> None:
        """``path``: a table file or an exhaustive run's directory; ``sample_noise``: draw one recorded
        sample per evaluation instead of the recorded objective; ``noise_seed``: the draws' seed
        (null: the run's seed, set by the app before the problem is built)."""
        super().__init__()
        if table is None:
            if not path or path == "???":
                raise ConfigError(f"problem={self.name} needs problem.path=<table file>")
            table = load_table(path)
        self.table = table
        self.direction = table.direction  # type: ignore[misc]
        self.objective_name = table.objective_name  # type: ignore[misc]
        self.sample_noise, self.noise_seed = bool(sample_noise), int(noise_seed or 0)
        self.deterministic = not self.sample_noise  # type: ignore[misc]
        self._draws: Counter[str] = Counter()

    @property
    def space(self) -> Space:
        return self.table.space

    def evaluate(self, config: Config) -> Measurement:
        row = self.table.rows.get(config)
        if row is None:
            return Measurement(Status.FAILED, failure_mode=FailureMode.INVALID, message="configuration not in the table")
        if self.sample_noise and samples_are_objective(row):
            occurrence = self._draws[config.key]
            self._draws[config.key] += 1
            return draw_sample(row, self.noise_seed, config.key, occurrence)
        return row

    @property
    def noisy(self) -> bool:
        """A replay with sample noise, of a table with differing samples to draw, varies
        like a device (so the confirm phase runs by default)."""
        return self.sample_noise and any(len(set(m.samples)) > 1 and samples_are_objective(m)
                                         for m in self.table.rows.values())

    @property
    def known_optimum(self) -> float | None:
        best = self.table.best()
        return None if best is None else best[1].objective

    def fingerprint_params(self) -> Mapping[str, Any]:
        base = {"source": self.table.source, "device": self.table.device, "rows": len(self.table.rows)}
        return {**base, "sample_noise": True} if self.sample_noise else base  # noise_seed is like the run seed


@dataclass(frozen=True)
class TableKnobSpace(SensedKnobSpace):
    """A knob space whose members are the configurations a table holds: the others violate a
    *known* constraint (e.g. Kernel Tuner's restrictions, checked before compiling), so they
    are never sent and never sampled. Carries a sensor model like any SensedKnobSpace."""

    members: frozenset[Config] = field(default_factory=frozenset, compare=False, repr=False)

    _prefixes: frozenset[tuple[Any, ...]] = field(init=False, default=frozenset(), compare=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        names = self.names
        prefixes = {tuple(m[n] for n in names[:d]) for m in self.members for d in range(len(names) + 1)}
        object.__setattr__(self, "_prefixes", frozenset(prefixes))

    def check(self, config: Config) -> str | None:
        reason = super().check(config)
        if reason is None and config not in self.members:
            return "not in the recorded table (excluded when it was recorded)"
        return reason

    def partial_ok(self, assigned: Mapping[str, Any]) -> bool:
        """Membership decided as early as possible: an assignment of the first knobs (in
        order, as the decision-DAG view makes them) must be a prefix of a recorded member."""
        names = self.names
        if set(names[:len(assigned)]) != assigned.keys():
            return super().partial_ok(assigned)  # not a prefix in knob order: decided on the full configuration
        return self.prefix_ok(tuple(assigned[n] for n in names[:len(assigned)]))

    def prefix_ok(self, values: Sequence[Any]) -> bool:
        return tuple(values) in self._prefixes and super().partial_ok(dict(zip(self.names, values)))

    def constraint_scopes(self) -> tuple[frozenset[str], ...]:
        return (*super().constraint_scopes(), frozenset(self.names))
