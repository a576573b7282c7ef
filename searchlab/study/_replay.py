"""Execute a study's cells: replays as parallel Ray tasks, live runs one after another.

Replays are independent and cheap (a table look-up per evaluation, charged the recorded
time), so each is one Ray task (``num_cpus=1``) running the serial executor; Ray keeps
every allowed core busy and reuses its worker processes, so a table is loaded once per
worker (``table_from_run`` caches). Ray is started with an explicit ``num_cpus`` only if
it is not running, and shut down only if this call started it. Live runs use devices
through their own executor (Ray actors by default), so they run one at a time.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from searchlab.errors import ConfigError, SearchlabError
from searchlab.study._grid import Cell, execute_cell


class StudyError(SearchlabError, RuntimeError):
    """Some cells of a study failed (the others are recorded; re-running resumes)."""


def _task(cell: Cell, cwd: str) -> dict[str, Any]:
    from searchlab.threads import limit_pools

    limit_pools()  # this task's num_cpus, whatever the worker inherited or built before (docs/threads.md)
    os.chdir(cwd)  # relative paths in problem configs mean what they meant to the driver
    return execute_cell(cell)


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _start_ray(workers: int | None, address: str | None) -> bool:
    """Start Ray unless it runs; True if this call started it (loopback only, token auth on)."""
    from searchlab.execution._ray import LOOPBACK, local_ray_environment

    if not address:
        local_ray_environment()
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": True}
    if address:
        ray.init(address=address, **kwargs)
    else:
        if workers is not None and workers < 1:
            raise ConfigError(f"study.workers={workers}: must be a positive integer or null")
        # address="local": a new instance even when `ray start` left a cluster on this machine
        # (a bare ray.init() would join it, and refuses num_cpus there)
        ray.init(address="local", num_cpus=workers or _cores(), object_store_memory=128 * 1024**2,
                 _node_ip_address=LOOPBACK, **kwargs)
    return True


def _progress(done: int, total: int, record: dict[str, Any]) -> None:
    step = max(1, total // 10)
    if done == total or done % step == 0:
        print(f"study: {done}/{total} runs done (last: {record['cell']}, {record['evaluations']} evaluations, "
              f"stopped on {record['stop']})", file=sys.stderr, flush=True)


def _replay(cells: Sequence[Cell], workers: int | None, address: str | None) -> list[dict[str, Any]]:
    import ray

    started = _start_ray(workers, address)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(_task)
        pending = {remote.remote(cell, os.getcwd()): cell for cell in cells}
        records, errors = [], []
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            cell = pending.pop(ready[0])
            try:
                records.append(ray.get(ready[0]))
                _progress(len(records), len(cells), records[-1])
            except Exception as exc:
                cause = getattr(exc, "cause", None) or exc
                errors.append(f"{cell.problem}/{cell.searcher}/seed {cell.seed}: {type(cause).__name__}: {cause}")
        if errors:
            raise StudyError(f"study: {len(errors)} of {len(cells)} replays failed (the others are recorded; "
                             f"re-run the study into the same directory to resume): " + " | ".join(errors[:5]))
        return records
    finally:
        if started:
            ray.shutdown()


def _live(cells: Sequence[Cell]) -> list[dict[str, Any]]:
    records = []
    for cell in cells:
        t = time.time()
        records.append(execute_cell(cell))
        records[-1].setdefault("wall_s", time.time() - t)
        _progress(len(records), len(cells), records[-1])
    return records


def run_cells(cells: Sequence[Cell], cfg: Any) -> list[dict[str, Any]]:
    todo = [c for c in cells if not (c.run_dir / "summary.json").is_file()]
    kept = [execute_cell(c) for c in cells if (c.run_dir / "summary.json").is_file()]
    if not todo:
        return kept
    if cfg.mode == "replay":
        return kept + _replay(todo, cfg.workers, cfg.ray_address)
    return kept + _live(todo)
