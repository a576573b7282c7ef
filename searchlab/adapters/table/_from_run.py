"""Turn a recorded run into a replayable :class:`~searchlab.interchange.table.Table` (DESIGN.md, "Replay").

The space is rebuilt by instantiating the run's stored problem config (no device is
touched: ``setup`` is not called), and every recorded measurement becomes a row.

Completeness rule: by default every member of the space (after its known constraints)
must have a recorded measurement -- what an exhaustive run that finished leaves behind --
otherwise :class:`ConfigError` names how many are missing and one example. Library callers
may accept a partial table with ``min_coverage < 1``; a configuration missing from a table
is then answered by :class:`~searchlab.adapters.table.TableProblem` as ``FAILED(invalid)``
("configuration not in the table"), which a study counts as a failed evaluation.

Rows: sub-problem measurements (DP's ``extra["subproblem"]``) are left out -- they are not
measurements of a member and must never be a best. A configuration recorded twice keeps
its first OK measurement (else its first record). Failed, timed-out and crashed records
are kept: replaying them charges their recorded time, as the live run paid it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchlab.core.records import Config, Direction, Measurement, Status, as_int
from searchlab.errors import ConfigError, StoreError

if TYPE_CHECKING:
    from searchlab.core.spaces import ThresholdTree

def _rows(results: list[Any]) -> tuple[dict[Config, Measurement], int]:
    rows: dict[Config, Measurement] = {}
    subproblems = 0
    for result in results:
        m = result.measurement
        if m.is_subproblem:
            subproblems += 1
            continue
        old = rows.get(result.config)
        if old is None or (old.status is not Status.OK and m.status is Status.OK):
            rows[result.config] = m
    return rows, subproblems


class PlateauRows(Mapping[Config, Measurement]):
    """Rows of a threshold-tree table, answering for every member of a recorded plateau.

    Every value of a threshold inside one plateau gives the same comparison outcomes on
    the training datasets (paper 003 §3.1), hence the same measurement; an exhaustive run
    records one representative per plateau. A look-up maps each threshold to its
    plateau's representative first, so searchers that propose any value in a plateau
    (binary search, CMA-ES on indices, Futhark's tuner) replay what the device measured.
    """

    def __init__(self, rows: Mapping[Config, Measurement], space: ThresholdTree) -> None:
        self._rows, self._space = dict(rows), space

    def canonical(self, config: Config) -> Config:
        space = self._space
        if set(config) != set(space.names) or not all(isinstance(v, int) for v in config.values()):
            return config
        return Config({n: space.plateau_values(n)[space.plateau_index(n, as_int(v))]
                       for n, v in config.items()})

    def __getitem__(self, config: Config) -> Measurement:
        return self._rows[self.canonical(config)]

    def __contains__(self, config: object) -> bool:
        return isinstance(config, Config) and self.canonical(config) in self._rows

    def __iter__(self) -> Iterator[Config]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def _coverage(space: Any, rows: dict[Config, Measurement]) -> tuple[int, int, Config | None, bool]:
    """(members seen, members missing, first missing, complete count?) of the space's members.

    Counting stops once more members are missing than the run recorded (plus 1000): a
    short run on a huge space is refused at once instead of enumerating it all."""
    cap = len(rows) + 1000
    members, missing, example = 0, 0, None
    for config in space.enumerate():
        members += 1
        if config not in rows:
            missing += 1
            example = example or config
            if missing > cap:
                return members, missing, example, False
    return members, missing, example, True


def table_from_run(run_dir: str | Path, *, min_coverage: float = 1.0) -> Any:
    """The table of a recorded run (a run directory holding ``results.db``).

    ``min_coverage`` is the share of the space's members that must have a measurement
    (1.0: the run must be exhaustive). Tables are cached per process by the database's
    path, size and modification time by :func:`searchlab.interchange.open_table`, the door every reader uses.
    """
    from searchlab.core.store import DB_NAME, read_run
    from searchlab.interchange.table import Table
    from searchlab.recompose import build_problem

    run_dir = Path(run_dir)
    if not 0.0 < min_coverage <= 1.0:
        raise ConfigError(f"min_coverage={min_coverage}: must be in (0, 1]")
    db = run_dir / DB_NAME
    if not db.is_file():
        raise ConfigError(f"table {str(run_dir)!r}: no {DB_NAME} there (give a run directory or its results.db)")
    try:
        info, results = read_run(run_dir)
    except StoreError as exc:
        raise ConfigError(f"table {str(run_dir)!r}: {exc}") from None
    problem_cfg = (info.get("config") or {}).get("problem")
    if not isinstance(problem_cfg, dict) or "_target_" not in problem_cfg:
        raise ConfigError(f"table {str(run_dir)!r}: the run stores no problem config to rebuild its space from")
    from searchlab.recompose import recompose  # a record is data: only a registered problem is rebuilt

    space = build_problem(recompose("problem", problem_cfg, f"table {str(run_dir)!r}")).space
    rows, subproblems = _rows(results)
    members, missing, example, counted = _coverage(space, rows)
    if missing and (not counted or (members - missing) / members < min_coverage):
        raise ConfigError(
            f"table {str(run_dir)!r}: the run of {info['problem']}/{info['searcher']} is not a complete table: "
            f"{'' if counted else 'more than '}{missing} of {'' if counted else 'at least '}{members} members of "
            f"the space have no recorded measurement (e.g. {dict(example or {})}); need a coverage of "
            f"{min_coverage:g}: replay a finished exhaustive run of the whole space (searcher=exhaustive, and "
            f"searcher.tree_aware=false on threshold trees; this run stopped on {info.get('stop_reason')!r})")
    from searchlab.core.spaces import ThresholdTree

    table_rows: Mapping[Config, Measurement] = PlateauRows(rows, space) if isinstance(space, ThresholdTree) else rows
    devices = sorted({str(d.get("name", "")) for d in info.get("devices") or [] if isinstance(d, dict)})
    table = Table(space, table_rows, Direction(info["direction"]), str(info.get("objective_name") or "objective"),
                  source=str(run_dir.resolve()), device=", ".join(devices),
                  meta={"run": str(run_dir.resolve()), "problem": info["problem"], "searcher": info["searcher"],
                        "fingerprint": info["fingerprint"], "seed": info["seed"], "members": members,
                        "missing": missing, "subproblem_rows_dropped": subproblems,
                        "failed_rows": sum(m.status is not Status.OK for m in rows.values())})
    return table
