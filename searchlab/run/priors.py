"""``prior=[PATH,...]``: recorded tables or runs of the same space on other devices or sizes.

A prior is data that transfer searchers (``searcher=transfer*``, docs/transfer.md) learn from
before their first proposal. Each PATH is one of (the existing loaders, nothing instantiated):

- a Kernel Tuner cache (``.json``/``.json.gz`` with ``tune_params`` and ``cache``),
- a T4 results file (``.json`` with ``results``),
- a searchlab table (``searchlab-table/1``, ``.json.gz``),
- a run directory or its ``results.db`` (every recorded evaluation; it need not be exhaustive).
  Only the stored records are read: no problem or searcher is rebuilt from it.

Matching rule (configurations are matched by parameter name and value):

- a problem knob the prior lacks is filled with the knob's value when it has exactly one,
  else refused; a prior parameter the problem lacks is dropped when it takes one value in that
  prior, else refused (the prior measured a different space);
- prior rows with a value outside the problem's knob values, or that the problem's known
  constraints reject, are dropped (another input size may allow other tile sizes);
- a prior sharing no successfully measured configuration with the problem's space is refused,
  and so is a prior whose objective direction differs from the problem's;
- a configuration measured several times keeps its best value; failures count as speed 0.

Each prior table is normalised to *speed* in [0, 1]: best / value when minimising, value /
best when maximising (ranks when values are not all positive); a problem configuration that a
prior table lacks has speed 0 there. The cross-device ranking is the mean speed over tables.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchlab.core.records import Config, Direction, Status
from searchlab.core.spaces import KnobSpace, Space
from searchlab.errors import ConfigError
from searchlab.searchers import Searcher


@dataclass(frozen=True)
class RawPrior:
    """One file or run as read: parameter names, direction, best objective per configuration."""

    source: str
    device: str
    names: tuple[str, ...]
    direction: Direction
    rows: Mapping[Config, float | None]  # None: failed


@dataclass(frozen=True)
class PriorTable:
    """One prior matched to the problem's space: speed in [0, 1] per problem configuration."""

    source: str
    device: str
    speed: Mapping[Config, float]
    dropped: int  # prior rows outside the problem's space


@dataclass(frozen=True)
class Prior:
    tables: tuple[PriorTable, ...]

    @property
    def configs(self) -> tuple[Config, ...]:
        """Every configuration some table measured, in canonical-key order (deterministic)."""
        return tuple(sorted({c for t in self.tables for c in t.speed}, key=lambda c: c.key))

    def score(self, config: Config, weights: Sequence[float] | None = None) -> float:
        """Weighted mean speed over the tables (equal weights by default)."""
        w = list(weights) if weights is not None else [1.0] * len(self.tables)
        total = sum(w) or 1.0
        return sum(wi * t.speed.get(config, 0.0) for wi, t in zip(w, self.tables)) / total

    def ranking(self, weights: Sequence[float] | None = None) -> list[Config]:
        """Configurations by descending mean speed (ties: canonical key), the zero-shot order."""
        return sorted(self.configs, key=lambda c: (-self.score(c, weights), c.key))


# -- reading ---------------------------------------------------------------------------------
def read_prior(path: str | Path) -> RawPrior:
    """One PATH of ``prior=`` as data: a run's records as they are, a file through the one table door
    (:func:`searchlab.interchange.open_table`, which decides its format and parses it once per process)."""
    from searchlab.interchange import open_table

    p = Path(os.path.expanduser(str(path)))
    if not p.exists():
        raise ConfigError(f"prior={path}: no such file or run directory")
    if p.is_dir() and not (p / "results.db").is_file():
        raise ConfigError(f"prior={path}: a directory without results.db (give a run directory, a Kernel Tuner "
                          "cache, a T4 file or a table)")
    if p.is_dir() or p.name == "results.db":
        return _from_run(p if p.is_dir() else p.parent, str(path))
    table = open_table(p, "prior")
    if not isinstance(table.space, KnobSpace):
        raise ConfigError(f"prior={path}: a {table.space.kind} table; priors are knob-space tables")
    rows = {c: (m.objective if m.status is Status.OK and m.objective is not None and math.isfinite(m.objective)
                else None) for c, m in table.rows.items()}
    return RawPrior(str(path), table.device, table.space.names, table.direction, rows)


def _from_run(run_dir: Path, shown: str) -> RawPrior:
    from searchlab.core.store import read_run
    from searchlab.errors import StoreError

    try:
        info, results = read_run(run_dir)
    except StoreError as exc:
        raise ConfigError(f"prior={shown}: {exc}") from None
    if not results:
        raise ConfigError(f"prior={shown}: the run recorded no evaluation")
    direction = Direction(str(info.get("direction") or "minimize"))
    rows: dict[Config, float | None] = {}
    for r in results:
        m = r.measurement
        value = m.objective if m.status is Status.OK and m.objective is not None and not m.is_subproblem else None
        old = rows.get(r.config)
        if old is None or (value is not None and (value < old if direction is Direction.MINIMIZE else value > old)):
            rows[r.config] = value
    names = tuple(next(iter(rows)))
    devices = info.get("devices") or []
    device = str(devices[0].get("name", "")) if devices and isinstance(devices[0], dict) else ""
    return RawPrior(shown, device, names, direction, rows)


# -- matching ----------------------------------------------------------------------------------
def _constant_values(raw: RawPrior, name: str) -> set[Any]:
    return {c[name] for c in raw.rows}


def _speeds(values: Mapping[Config, float | None], direction: Direction) -> dict[Config, float]:
    ok = {c: v for c, v in values.items() if v is not None}
    if not ok:
        return {c: 0.0 for c in values}
    if all(v > 0 for v in ok.values()):
        best = min(ok.values()) if direction is Direction.MINIMIZE else max(ok.values())
        speed = {c: (best / v if direction is Direction.MINIMIZE else v / best) for c, v in ok.items()}
    else:  # not all positive: a ratio means nothing, ranks do
        order = sorted(ok, key=lambda c: ok[c], reverse=direction is Direction.MAXIMIZE)
        speed = {c: 1.0 - i / max(len(order) - 1, 1) for i, c in enumerate(order)}
    return {c: speed.get(c, 0.0) for c in values}


def match(raw: RawPrior, space: KnobSpace, direction: Direction) -> PriorTable:
    """``raw`` on the problem's space, by the matching rule in the module docstring."""
    where = f"prior={raw.source}"
    if raw.direction is not direction:
        raise ConfigError(f"{where}: the prior {raw.direction.value}s its objective but the problem "
                          f"{direction.value}s it; a prior must measure the same objective")
    names = set(space.names)
    fill: dict[str, Any] = {}
    for name in sorted(names - set(raw.names)):
        choices = space.knob(name).values
        if len(choices) != 1:
            raise ConfigError(f"{where}: lacks the problem's parameter {name!r} (which takes {len(choices)} values); "
                              f"a prior must set every parameter of the problem: {sorted(names)}")
        fill[name] = choices[0]
    extra = sorted(set(raw.names) - names)
    for name in extra:
        if len(_constant_values(raw, name)) != 1:
            raise ConfigError(f"{where}: has parameter {name!r} with several values, which the problem lacks "
                              f"(problem parameters: {sorted(names)})")
    values: dict[Config, float | None] = {}
    dropped = 0
    for config, value in raw.rows.items():
        mapped = {**{n: v for n, v in config.items() if n in names}, **fill}
        if any(mapped[n] not in space.knob(n).values for n in mapped):
            dropped += 1
            continue
        c = Config(mapped)
        if space.check(c) is not None:
            dropped += 1
            continue
        values[c] = value
    if not any(v is not None for v in values.values()):
        raise ConfigError(f"{where}: no successfully measured configuration of it lies in the problem's space "
                          f"({dropped} of {len(raw.rows)} rows have values or constraints outside it)")
    return PriorTable(raw.source, raw.device, _speeds(values, direction), dropped)


def load_prior(paths: Sequence[str] | None, space: Space, direction: Direction) -> Prior | None:
    """``prior=`` matched to the problem, or None when no prior is given."""
    if not paths:
        return None
    if isinstance(paths, str):
        raise ConfigError(f"prior={paths}: give a list, e.g. 'prior=[{paths}]'")
    if not isinstance(space, KnobSpace):
        raise ConfigError(f"prior={list(paths)}: priors work on knob spaces; this problem's space is {space.kind!r}")
    if len(set(map(str, paths))) != len(paths):
        raise ConfigError(f"prior={list(paths)}: names a path twice")
    return Prior(tuple(match(read_prior(str(p)), space, direction) for p in paths))


def give_prior(searcher: Searcher, prior: Prior | None, name: str) -> str | None:
    """Hand the prior to the searcher once, before its first proposal; a note when it ignores it."""
    if prior is None:
        return None
    if not searcher.attach_prior(prior):  # Searcher.attach_prior: False where the searcher ignores priors
        return f"searcher={name} does not learn from priors: prior= is checked but unused (a cold run)"
    return None
