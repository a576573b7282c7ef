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

import gzip
import hashlib
import json
import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from searchlab.core.problem import Problem
from searchlab.errors import ConfigError
from searchlab.records import (
    Config,
    Direction,
    FailureMode,
    Measurement,
    Status,
    loss,
    measurement_from_dict,
    measurement_to_dict,
)
from searchlab.sensors import SensedKnobSpace
from searchlab.spaces import CategoricalKnob, IntKnob, KnobSpace, OrdinalKnob, Space

FORMAT = "searchlab-table/1"


@dataclass
class ReplayNoiseConfig:
    """Options every table replay shares (declared once; replay schemas extend this)."""

    sample_noise: bool = False  # draw one recorded sample per evaluation instead of the recorded objective
    noise_seed: int | None = None  # null: the run's seed (set by the app before the problem is built)


@dataclass
class TableProblemConfig(ReplayNoiseConfig):
    """``problem=table problem.path=...``: a table file or an exhaustive run's directory."""

    _target_: str = "searchlab.tables.TableProblem"
    path: str = "???"


@dataclass(frozen=True)
class Table:
    space: Space
    rows: Mapping[Config, Measurement]
    direction: Direction = Direction.MINIMIZE
    objective_name: str = "time"
    source: str = ""
    device: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def best(self) -> tuple[Config, Measurement] | None:
        ranked = [(loss(m, self.direction), c.key, c, m) for c, m in self.rows.items()]
        ranked = [r for r in ranked if math.isfinite(r[0])]
        return (min(ranked)[2], min(ranked)[3]) if ranked else None


def knobspace_to_dict(space: KnobSpace) -> dict[str, Any]:
    kinds = {IntKnob: "int", OrdinalKnob: "ordinal", CategoricalKnob: "categorical"}
    knobs = []
    for k in space.knobs:
        spec: dict[str, Any] = {"name": k.name, "kind": kinds[type(k)]}
        if isinstance(k, IntKnob):
            spec.update(low=k.low, high=k.high, step=k.step, log=k.log)
        else:
            spec["values"] = list(k.values)
        knobs.append(spec)
    return {"knobs": knobs, "constraints": [c.text for c in space.constraints]}


def knobspace_from_dict(d: Mapping[str, Any]) -> KnobSpace:
    knobs: list[IntKnob | OrdinalKnob | CategoricalKnob] = []
    for spec in d["knobs"]:
        if spec["kind"] == "int":
            knobs.append(IntKnob(spec["name"], spec["low"], spec["high"], spec.get("step", 1), spec.get("log", False)))
        elif spec["kind"] == "ordinal":
            knobs.append(OrdinalKnob(spec["name"], tuple(spec["values"])))
        else:
            knobs.append(CategoricalKnob(spec["name"], tuple(spec["values"])))
    return KnobSpace(tuple(knobs), tuple(d.get("constraints", ())))


def save_table(table: Table, path: str | Path) -> Path:
    """Write a knob-space table as gzipped JSON (``.json.gz``)."""
    if not isinstance(table.space, KnobSpace):
        raise ConfigError(f"only knob-space tables can be saved as files, not {table.space.kind!r} ones")
    payload = {
        "format": FORMAT, "space": knobspace_to_dict(table.space), "direction": table.direction.value,
        "objective_name": table.objective_name, "source": table.source, "device": table.device,
        "meta": dict(table.meta),
        "rows": [{"config": dict(c), **measurement_to_dict(m)} for c, m in table.rows.items()],
    }
    path = Path(path)
    with gzip.open(path, "wt") as fh:
        json.dump(payload, fh)
    return path


def load_table(path: str | Path) -> Table:
    """A table from our ``.json(.gz)`` format, or from a run directory / ``results.db``."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"table file {str(path)!r} does not exist")
    if path.is_dir() or path.name == "results.db":
        from searchlab.study import table_from_run  # runs become tables (exhaustive runs above all)

        return table_from_run(path if path.is_dir() else path.parent)
    try:
        with (gzip.open(path, "rt") if path.suffix == ".gz" else path.open()) as fh:
            payload = json.load(fh)
    except (OSError, ValueError, EOFError) as exc:  # ValueError: bad JSON, bad UTF-8, bad gzip trailer
        raise ConfigError(f"table file {str(path)!r} is not readable JSON: {exc}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise ConfigError(f"table file {str(path)!r}: format {found!r} is not {FORMAT!r}")
    try:  # a file is data: any shape it may have is refused in one line, never a traceback
        rows = {Config(r.pop("config")): measurement_from_dict(r) for r in payload["rows"]}
        return Table(knobspace_from_dict(payload["space"]), rows, Direction(payload["direction"]),
                     str(payload.get("objective_name", "time")), str(payload.get("source", str(path))),
                     str(payload.get("device", "")), dict(payload.get("meta") or {}))
    except ConfigError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ConfigError(f"table file {str(path)!r} is not a valid {FORMAT} table "
                          f"({type(exc).__name__}: {str(exc)[:200]})") from None


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
    """Replay a table: evaluation is a look-up, charged the recorded time."""

    name = "table"
    deterministic = True

    def __init__(self, table: Table | None = None, path: str | None = None, sample_noise: bool = False,
                 noise_seed: int | None = None, **params: Any) -> None:
        super().__init__(path=path, **params)
        if table is None:
            if path is None:
                raise ConfigError("problem=table needs problem.path=<table file>")
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
