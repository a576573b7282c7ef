"""The table file format (``searchlab-table/1``): a recorded space and one measurement per configuration.

Our own table files (:func:`save_table`), and a finished run's directory read as a table
(:func:`load_table`), feed :class:`~searchlab.adapters.table.problem.TableProblem`, the
studies and the transfer priors (DESIGN.md, "Replay").
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError
from searchlab.records import Config, Direction, Measurement, loss, measurement_from_dict, measurement_to_dict
from searchlab.spaces import CategoricalKnob, IntKnob, KnobSpace, OrdinalKnob, Space

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
