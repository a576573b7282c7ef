"""Recorded measurement tables as data: the :class:`Table` record, the knob space of a
recorded table (:class:`TableKnobSpace`) and the ``searchlab-table/1`` file format.

Core data (issue 21, item 3): the interchange readers (T4, Kernel Tuner caches), the priors
of transfer searchers and the table problem (:mod:`searchlab.adapters.table.problem`, which replays a table
and also opens run directories as tables) all build on it, and it imports nothing above the
core layer.
"""

from __future__ import annotations

import copy
import gzip
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.core.records import Config, Direction, Measurement, loss, measurement_from_dict, measurement_to_dict
from searchlab.core.sensors import SensedKnobSpace
from searchlab.core.spaces import CategoricalKnob, IntKnob, KnobSpace, OrdinalKnob, Space
from searchlab.errors import ConfigError
from searchlab.interchange._checks import checked
from searchlab.interchange._documents import read_json

FORMAT = "searchlab-table/1"


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


def read_table_file(path: str | Path, *, doc: Mapping[str, Any] | None = None) -> Table:
    """A table from our ``.json(.gz)`` format (a file is data: a bad one is one ConfigError; ``doc``: the
    file, parsed already)."""
    path = Path(path)
    payload: Any = read_json(path, "table file") if doc is None else copy.deepcopy(dict(doc))
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise ConfigError(f"table file {str(path)!r}: format {found!r} is not {FORMAT!r}")
    try:  # a file is data: any shape it may have is refused in one line, never a traceback
        rows = {Config(r.pop("config")): measurement_from_dict(r) for r in payload["rows"]}
        table = Table(knobspace_from_dict(payload["space"]), rows, Direction(payload["direction"]),
                      str(payload.get("objective_name", "time")), str(payload.get("source", str(path))),
                      str(payload.get("device", "")), dict(payload.get("meta") or {}))
        return checked(table, f"table file {str(path)!r}")  # rows that agree with the space (issue 37, item 9)
    except ConfigError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ConfigError(f"table file {str(path)!r} is not a valid {FORMAT} table "
                          f"({type(exc).__name__}: {str(exc)[:200]})") from None


@dataclass(frozen=True)
class TableKnobSpace(SensedKnobSpace):
    """A knob space whose members are the configurations a table holds: the others violate a
    *known* constraint (e.g. Kernel Tuner's restrictions, checked before compiling), so they
    are never sent and never sampled. Carries a sensor model like any SensedKnobSpace."""

    members: frozenset[Config] = field(default_factory=frozenset, compare=False, repr=False)

    _prefixes: frozenset[tuple[Any, ...]] = field(init=False, default=frozenset(), compare=False, repr=False)
    _indexed: list[Mapping[tuple[int, ...], Config]] = field(init=False, default_factory=list, compare=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        names = self.names
        rows = [tuple(m[n] for n in names) for m in self.members]  # each member's values once, then its prefixes
        prefixes = {row[:d] for row in rows for d in range(len(names) + 1)}
        object.__setattr__(self, "_prefixes", frozenset(prefixes))

    def validate(self, config: Config) -> None:
        if config not in self.members:  # a member is valid: one look-up instead of a walk over its knobs
            super().validate(config)

    def check(self, config: Config) -> str | None:
        reason = super().check(config)
        if reason is None and config not in self.members:
            return "not in the recorded table (excluded when it was recorded)"
        return reason

    def _drawable(self) -> Mapping[tuple[int, ...], Config]:
        """The members by value-index tuple, made on the first draw: a random draw outside them is
        rejected without a configuration built, and a draw inside returns the member itself (its
        key and hash made once), unless its canonical key differs from the knob values' (e.g. a
        value recorded as 1.0 for the knob value 1), where the draw is built from the knob values
        as before, so keys (and replay noise) do not change (issue 23, item 3)."""
        if not self._indexed:
            _, plan = self._plan
            where = {d: {v: i for i, v in enumerate(values)} for _, d, values in plan}
            order = [(d, self.knobs[d].name) for d in range(len(self.knobs))]
            out: dict[tuple[int, ...], Config] = {}
            for m in self.members:
                row = tuple(where[d].get(m[name], -1) for d, name in order)
                if -1 not in row:
                    built = Config.from_sorted(tuple((name, values[row[d]]) for name, d, values in plan))
                    out[row] = m if m.key == built.key else built
            self._indexed.append(out)
        return self._indexed[0]

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
