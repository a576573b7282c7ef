"""Execute a study's cells: replays batched into one records file, live runs one after another.

``mode: replay`` (issue 23, item 3): by default the cells are replayed in batches, many per
task, into the study's records file (searchlab.study.execution.batched, ``<study>/results.db``). With
``run_dirs: true`` each cell is one Ray task running the whole run lifecycle (``num_cpus=1``,
the serial executor) into its own run directory ``runs/<problem>/<searcher>/seed_<S>``. Live
runs use devices through their own executor (Ray actors by default), so they run one at a time.

On a cluster (issue 24): tasks are spread over the nodes (``SPREAD``); a task returns its
records and writes nothing of the study's -- a run directory's task replays into a scratch
directory of its node, and the driver alone writes the rows into the study directory
(searchlab.study.execution.publish) -- so a task that Ray retries after its node was lost
(``max_retries``) replaces nothing and duplicates nothing. A lost head node ends the study with
one line; every run written before is kept (searchlab.study.execution.tasks).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError
from searchlab.study.execution.cells import Cell, execute_cell
from searchlab.study.execution.tasks import HEAD_GRACE_S, RETRIES, HeadLost, StudyError, _cores, _gather, _progress, _start_ray

__all__ = ["HEAD_GRACE_S", "RETRIES", "HeadLost", "StudyError", "_cores", "_start_ray", "run_cells"]


def _task(cell: Cell, cwd: str, prior: Any = None) -> Any:
    """Replay one cell in a scratch directory of this node; return its records, write nothing."""
    import dataclasses
    import tempfile
    from pathlib import Path

    from searchlab.core.threads import limit_pools
    from searchlab.run.cluster import current_node
    from searchlab.study.execution.publish import ReplayOutcome, dump_rows, run_files, write_rows

    limit_pools()  # this task's num_cpus, whatever the worker inherited or built before (docs/threads.md)
    if os.path.isdir(cwd):  # relative paths in problem configs mean what they meant to the driver
        os.chdir(cwd)
    with tempfile.TemporaryDirectory(prefix="searchlab-replay-") as scratch:
        run_dir = Path(scratch) / "run"
        if prior is not None:  # an unfinished run (an older searchlab wrote it in place): resume it
            run_dir.mkdir()
            write_rows(run_dir / "results.db", prior)
        record = execute_cell(dataclasses.replace(cell, run_dir=run_dir))
        return ReplayOutcome(record, dump_rows(run_dir), run_files(run_dir), current_node())


def _prior(cell: Cell) -> Any:
    from searchlab.study.execution.publish import dump_rows

    return dump_rows(cell.run_dir) if (cell.run_dir / "results.db").is_file() else None


def _replay(cells: Sequence[Cell], workers: int | None, address: str | None) -> list[dict[str, Any]]:
    """One Ray task per cell, each a whole run into a run directory (``run_dirs: true``)."""
    import ray

    from searchlab.study.execution.publish import publish

    started = _start_ray(workers, address)
    joined = started or bool(address)  # a cluster of our own making or one we joined: we watch its head
    try:
        remote = ray.remote(num_cpus=1, max_retries=RETRIES, scheduling_strategy="SPREAD")(_task)
        pending = {remote.remote(cell, os.getcwd(), _prior(cell)): cell for cell in cells}
        records: list[dict[str, Any]] = []

        def accept(cell: Cell, outcome: Any) -> int:
            t = time.perf_counter()
            publish(cell.run_dir, outcome)  # the driver writes; the task wrote nothing of the study's
            records.append(dict(outcome.record, node=outcome.node, written=outcome.rows.evaluations,
                                write_s=time.perf_counter() - t))
            _progress(len(records), len(cells), records[-1])
            return 1

        _gather(pending, joined, ray.get_runtime_context().gcs_address, len(cells), accept,
                lambda c: f"{c.problem}/{c.searcher}/seed {c.seed}")
        return records
    finally:
        if started:
            from searchlab.run.cluster import stop_local_ray

            stop_local_ray()


def _live(cells: Sequence[Cell]) -> list[dict[str, Any]]:
    records = []
    for cell in cells:
        t = time.time()
        records.append(execute_cell(cell))
        records[-1].setdefault("wall_s", time.time() - t)
        _progress(len(records), len(cells), records[-1])
    return records


def run_cells(cells: Sequence[Cell], cfg: Any, study_dir: Path | None = None) -> list[dict[str, Any]]:
    """Run every cell not done yet; cells already done (a run directory's summary.json, or a cell of
    the study store) are kept. Replays go to the study store unless ``run_dirs`` is true."""
    kept = [execute_cell(c) for c in cells if (c.run_dir / "summary.json").is_file()]
    todo = [c for c in cells if not (c.run_dir / "summary.json").is_file()]
    if cfg.mode != "replay":
        return kept + (_live(todo) if todo else [])
    if _run_dirs(cfg):
        return kept + (_replay(todo, cfg.workers, cfg.ray_address) if todo else [])
    from searchlab.study.execution.batched import run_batched

    # a run directory begun by a run_dirs study (results.db, no summary) is resumed where it is
    partial = [c for c in todo if (c.run_dir / "results.db").exists()]
    rest = [c for c in todo if c not in partial]
    out = kept + (_replay(partial, cfg.workers, cfg.ray_address) if partial else [])
    return out + run_batched(rest, cfg, study_dir or _study_dir(cells))


def _run_dirs(cfg: Any) -> bool:
    value = cfg.get("run_dirs", False)
    if not isinstance(value, bool):
        raise ConfigError(f"study.run_dirs={value!r}: must be true or false")
    return value


def _study_dir(cells: Sequence[Cell]) -> Path:
    """<study>/runs/<problem>/<searcher>/seed_<S> (searchlab.study.execution.grid.make_cells) -> <study>."""
    return cells[0].run_dir.parents[3] if cells else Path(".")
