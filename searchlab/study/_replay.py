"""Execute a study's cells: replays as parallel Ray tasks, live runs one after another.

Replays are independent and cheap (a table look-up per evaluation, charged the recorded
time), so each is one Ray task (``num_cpus=1``) running the serial executor; Ray keeps
every allowed core busy and reuses its worker processes, so a table is loaded once per
worker (``table_from_run`` caches). Ray is started with an explicit ``num_cpus`` only if
it is not running, and shut down only if this call started it. Live runs use devices
through their own executor (Ray actors by default), so they run one at a time.

On a cluster (issue 24): tasks are spread over the nodes (``SPREAD``); a task replays into
a scratch directory on its own node and returns its records, and the driver alone writes
them into the study directory (searchlab.study._publish), so a task that Ray retries
after its node was lost (``max_retries``) replaces nothing and duplicates nothing. A lost
head node ends the study with one line; every run written before is kept.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from searchlab.errors import ConfigError, SearchlabError
from searchlab.study._cells import Cell, execute_cell


class StudyError(SearchlabError, RuntimeError):
    """Some cells of a study failed (the others are recorded; re-running resumes)."""


class HeadLost(StudyError):
    """The cluster's head node went away mid-study (what finished is kept)."""


RETRIES = 3  # Ray re-runs a task whose worker or node died; its result is written once
HEAD_GRACE_S = 5.0  # the head must stay unreachable this long before the study gives up


def _task(cell: Cell, cwd: str, prior: Any = None) -> Any:
    """Replay one cell in a scratch directory of this node; return its records, write nothing."""
    import dataclasses
    import tempfile
    from pathlib import Path

    from searchlab.core.threads import limit_pools
    from searchlab.run.execution._base import current_node
    from searchlab.study._publish import ReplayOutcome, dump_rows, run_files, write_rows

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


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _start_ray(workers: int | None, address: str | None) -> bool:
    """Start Ray unless it runs; True if this call started it (loopback only, token auth on).

    ``address``: join that cluster with token authentication (searchlab.run.execution._join).
    """
    from searchlab.run.execution._ray_actor import LOOPBACK, local_ray_environment

    if not address:
        local_ray_environment()
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():
        return False
    if address:
        from searchlab.run.execution._join import join_cluster

        join_cluster(address, "study.ray_address")
        return False
    if workers is not None and workers < 1:
        raise ConfigError(f"study.workers={workers}: must be a positive integer or null")
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": True}
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


def _prior(cell: Cell) -> Any:
    from searchlab.study._publish import dump_rows

    return dump_rows(cell.run_dir) if (cell.run_dir / "results.db").is_file() else None


def _replay(cells: Sequence[Cell], workers: int | None, address: str | None) -> list[dict[str, Any]]:
    import ray

    from searchlab.study._publish import publish

    started = _start_ray(workers, address)
    joined = started or bool(address)  # a cluster of our own making or one we joined: we watch its head
    gcs = ray.get_runtime_context().gcs_address
    try:
        remote = ray.remote(num_cpus=1, max_retries=RETRIES, scheduling_strategy="SPREAD")(_task)
        pending = {remote.remote(cell, os.getcwd(), _prior(cell)): cell for cell in cells}
        records: list[dict[str, Any]] = []
        errors: list[str] = []
        lost_since: float | None = None
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            if not ready:
                lost_since = _check_head(gcs, lost_since, len(records), len(cells)) if joined else None
                continue
            cell = pending.pop(ready[0])
            try:
                outcome = ray.get(ready[0])
            except Exception as exc:
                cause = getattr(exc, "cause", None) or exc
                errors.append(f"{cell.problem}/{cell.searcher}/seed {cell.seed}: {type(cause).__name__}: {cause}")
                continue
            t = time.perf_counter()
            publish(cell.run_dir, outcome)  # the driver writes; the task wrote nothing of the study's
            records.append(dict(outcome.record, node=outcome.node, written=outcome.rows.evaluations,
                                write_s=time.perf_counter() - t))
            _progress(len(records), len(cells), records[-1])
        if errors:
            raise StudyError(f"study: {len(errors)} of {len(cells)} replays failed (the others are recorded; "
                             f"re-run the study into the same directory to resume): " + " | ".join(errors[:5]))
        return records
    finally:
        if started:
            ray.shutdown()


def _check_head(gcs: str, lost_since: float | None, done: int, total: int) -> float | None:
    """None while the head answers; raises once it has been unreachable for HEAD_GRACE_S."""
    from searchlab.run.execution._join import head_reachable

    if head_reachable(gcs):
        return None
    now = time.time()
    if lost_since is None:
        return now
    if now - lost_since < HEAD_GRACE_S:
        return lost_since
    raise HeadLost(f"study: the Ray cluster's head node ({gcs}) is gone; {done} of {total} runs were finished and "
                   f"are kept; restart the cluster and re-run the study into the same directory to resume")


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
