"""The batched replay path of a study (issue 23, item 3): many cells per task, one records file.

The driver groups the cells still to do into batches, in grid order (a problem's searchers and
seeds together, so a worker reuses the table it parsed), about :data:`TASKS_PER_CORE` batches per
core: enough to keep every core busy to the end and to show progress, few enough that a task's
cost (Ray's, and a worker's first parse of a table) is paid over many replays. Each batch is one
Ray task (searchlab.study.execution.batch.replay_batch) returning its runs' records; the driver writes each
task's records into ``<study>/results.db`` -- the records format of every run, one ``runs`` row per cell
(issue 52) -- in one transaction as it arrives (:class:`searchlab.core.store.RecordWriter`), so a killed or
interrupted study keeps every cell finished before, and a study run again into the same directory does only
the cells the file lacks. The writer holds the file's lock: a second study writing into the same directory
at the same time is refused in one line naming the first. A study directory made before issue 52 keeps its
cells in ``replays.db``; they count as done and are read from there, never rewritten.

Without a cluster to join, and with ``workers: 1`` or a small grid (``workers: null`` and at most
:data:`IN_PROCESS_LOOKUPS` look-ups), the batches run in this process: such a study would pay
Ray's start (a few seconds) for less work than that. The tables the driver parsed while checking
the grid are put into Ray's object store once and handed to every task, so a worker does not
parse them again.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from searchlab.core.store import DB_NAME, LEGACY_STORE, RecordWriter, RunRecord, read_runs
from searchlab.study.execution.batch import cell_key, prototypes, replay_batch
from searchlab.study.execution.cells import Cell
from searchlab.study.execution.tasks import RETRIES, _cores, _gather, _progress, _start_ray

TASKS_PER_CORE = 4
# a few runs at most per task (issue 45): the driver writes a task's records when it returns, so an interrupt or a lost
# node loses only the runs of the tasks in flight; a task costs Ray a few ms, a replay of 100 look-ups about 20 ms
MAX_BATCH = 4
# bench/replay_throughput.py (2026-11-25): 100 seeds x 220 (22,000 look-ups) took 6 s of grid in process and
# 12-14 s with Ray on 2 cores (Ray's start, ~7 s, dominates); at ~5,600 look-ups/s per core in process the
# two break even near 80,000 look-ups
IN_PROCESS_LOOKUPS = 60_000


def batches(cells: Sequence[Cell], cores: int) -> list[list[Cell]]:
    """``cells`` in grid order, cut into about TASKS_PER_CORE batches per core (at most MAX_BATCH each)."""
    if not cells:
        return []
    size = max(1, min(MAX_BATCH, math.ceil(len(cells) / (TASKS_PER_CORE * max(1, cores)))))
    ordered = sorted(cells, key=lambda c: (c.problem, c.searcher, c.seed))
    return [ordered[i:i + size] for i in range(0, len(ordered), size)]


def _check(cells: Sequence[Cell]) -> None:
    """What a run would refuse before it starts (searchlab.run.prepare), refused once per pair, before any task."""
    from searchlab.run.checks import check_run_config
    from searchlab.run.loop import Budget

    seen: set[tuple[str, str]] = set()
    for cell in cells:
        if (cell.problem, cell.searcher) not in seen:
            seen.add((cell.problem, cell.searcher))
            check_run_config(cell.cfg)
            Budget(**cell.cfg["budget"])


def _record(run: RunRecord, kept: bool = False) -> dict[str, Any]:
    return {"cell": run.name, "kept": kept, "evaluations": len(run.evaluations), "stop": run.stop_reason,
            "node": run.node, "wall_s": run.ended - run.started}


def _done(study_dir: Path, writer: RecordWriter) -> set[str]:
    """The cells recorded already: in the records file, or in a study store of before issue 52."""
    old = study_dir / LEGACY_STORE
    return writer.names() | ({r.name for r in read_runs(old)} if old.is_file() else set())


def run_batched(cells: Sequence[Cell], cfg: Any, study_dir: Path) -> list[dict[str, Any]]:
    """Replay ``cells`` into ``study_dir/results.db``; cells already there are kept, not redone."""
    if not cells:
        return []
    _check(cells)  # before the file is made: bad input writes nothing
    store = RecordWriter(study_dir / DB_NAME)
    try:
        done = _done(study_dir, store)
        kept = [{"cell": cell_key(c), "kept": True, "evaluations": None, "stop": None} for c in cells
                if cell_key(c) in done]
        todo = [c for c in cells if cell_key(c) not in done]
        if not todo:
            return kept
        records: list[dict[str, Any]] = []

        def accept(_: Any, runs: list[RunRecord]) -> int:
            store.write(runs)  # the driver alone writes: one transaction per task's records
            before = len(records)
            records.extend(_record(r) for r in runs)
            _progress(len(records), len(todo), records[-1], before)
            return len(runs)

        if _in_process(todo, cfg):
            for cell in sorted(todo, key=lambda c: (c.problem, c.searcher, c.seed)):  # each written as it ends
                accept([cell], replay_batch([cell], os.getcwd()))
        else:
            _on_ray(todo, cfg, accept)
        return kept + records
    finally:
        store.close()


def _in_process(cells: Sequence[Cell], cfg: Any) -> bool:
    """No cluster to join, and one worker asked for, or (``workers: null``) a grid of at most
    IN_PROCESS_LOOKUPS look-ups: less work than starting Ray takes (a few seconds)."""
    if cfg.ray_address:
        return False
    if cfg.workers is not None:
        return bool(cfg.workers == 1)
    lookups = sum((c.cfg.get("budget") or {}).get("evaluations") or math.inf for c in cells)
    return bool(lookups <= IN_PROCESS_LOOKUPS)


def _on_ray(cells: Sequence[Cell], cfg: Any, accept: Any) -> None:
    import ray

    started = _start_ray(cfg.workers, cfg.ray_address)
    joined = started or bool(cfg.ray_address)
    try:
        resources: Any = ray.cluster_resources  # untyped in Ray: the CPUs of every node, a joined cluster's too
        cores = int(resources().get("CPU", 0)) or cfg.workers or _cores()
        remote: Any = ray.remote(num_cpus=1, max_retries=RETRIES, scheduling_strategy="SPREAD")(replay_batch)
        known = ray.put(prototypes(cells))  # the tables the driver parsed, put once for every task
        pending = {remote.remote(batch, os.getcwd(), known): batch for batch in batches(cells, cores)}
        _gather(pending, joined, ray.get_runtime_context().gcs_address, len(cells), accept,
                lambda batch: f"{len(batch)} cells from {cell_key(batch[0])}")
    finally:
        if started:
            from searchlab.run.cluster import stop_local_ray

            stop_local_ray()
