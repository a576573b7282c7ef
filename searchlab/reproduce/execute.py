"""Repeats run on the product's executors; each finished repeat is stored before the next is collected.

The repeats of an experiment are a :class:`RepeatJobs` problem: configuration ``{"job": i}`` runs repeat ``i`` of
the plan (:func:`searchlab.reproduce.kt.run_repeat`) and its measurement carries the results. So the same
executors that evaluate a run's configurations run them (issue 51, item 2):

- small experiments (at most :data:`SERIAL_REPEATS` repeats, or ``--workers 1``): the serial executor, in this
  process: no worker to start, Kernel Tuner imported once (the fixed cost before the first repeat is this
  process's imports and the spaces' statistics);
- larger ones: the Ray executor (``--workers N`` actors, default one per core), started the way every searchlab
  run starts Ray (:mod:`searchlab.run.cluster`: loopback only, no dashboard, token authentication, every process
  reaped when it ends), or on a cluster with ``--ray-address``. A worker process reads each T1 file and cache once.

A repeat that dies with its worker (out of memory, a crash) is a failed repeat: the run stops with one line, the
finished repeats stored. Progress: a line at least every 10 s with repeats done, rate and an ETA.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from searchlab.core.problem import Problem
from searchlab.core.records import Candidate, Config, Measurement, Status
from searchlab.core.spaces import KnobSpace, OrdinalKnob
from searchlab.errors import SearchlabError
from searchlab.reproduce.kt import RepeatSpec
from searchlab.reproduce.progress import Progress

__all__ = ["RepeatJobs", "RunFailed", "Workers"]

SERIAL_REPEATS = 40
TIMEOUT_S = 3600.0  # one repeat; past it the worker is killed and the run stops (resumable)


class RunFailed(SearchlabError, RuntimeError):
    """A repeat failed for good (the retry rule gave up, or its worker died); finished repeats are kept."""


class RepeatJobs(Problem):
    """The repeats to run, as a problem: ``{"job": i}`` runs ``specs[i]``."""

    name = "reproduce_repeats"

    def __init__(self, specs: Sequence[RepeatSpec] = ()) -> None:
        super().__init__()
        self.specs = tuple(specs)
        self._space = KnobSpace((OrdinalKnob("job", tuple(range(max(len(self.specs), 1)))),))

    @property
    def space(self) -> KnobSpace:
        return self._space

    def evaluate(self, config: Config) -> Measurement:
        from searchlab.reproduce.kt import run_repeat

        started = time.perf_counter()
        if "task" in config:  # a curve of the scoring (a file the driver wrote: arrays only)
            from searchlab.reproduce.curvetask import load_task, run_task

            result = run_task(load_task(Path(str(config["task"]))))
            return Measurement.ok(time.perf_counter() - started, extra={"result": result})
        from searchlab.reproduce.records import evaluation_rows

        job = config["job"]
        assert isinstance(job, int)
        began = time.time()
        outcome = run_repeat(self.specs[job])
        run = outcome.pop("run")
        outcome["rows"] = evaluation_rows(run, began, time.time())  # encoded here, in parallel; the driver inserts
        outcome["compact"] = {k: run[k] for k in ("keys", "t", "v", "i")}
        outcome.update(started=began, ended=time.time())
        return Measurement.ok(time.perf_counter() - started, extra={"outcome": outcome})


def _executor(serial: bool, workers: int | None, address: str | None) -> tuple[Any, str]:
    import os

    from searchlab.run import execution

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if not address and (serial or workers == 1 or cores == 1):
        return execution.SerialExecutor(timeout_s=TIMEOUT_S), "in this process"
    n = workers or cores
    ray_executor: Any = execution.RayExecutor  # Ray is imported only for larger runs
    return ray_executor(workers=n, timeout_s=TIMEOUT_S, address=address, cpus_per_worker=1 if not address else None), \
        f"on {n} Ray workers" if not address else f"on the Ray cluster at {address}"


class Workers:
    """The executor of one ``searchlab reproduce``: its repeats, then (when it has several workers) the scoring's
    curve tasks, which it reads from files it is given (:mod:`searchlab.reproduce.curvetask`)."""

    def __init__(self, todo: Sequence[tuple[Any, int]], workers: int | None, address: str | None, quiet: bool,
                 heavy_scoring: bool) -> None:
        self.todo, self.quiet = list(todo), quiet
        serial = workers is None and len(self.todo) <= SERIAL_REPEATS and not heavy_scoring
        self.executor: Any = None
        self.how = ""
        if self.todo or heavy_scoring:
            self.executor, self.how = _executor(serial, workers, address)

    @property
    def serial(self) -> bool:
        """Whether the work runs in this process (no executor, or the serial one)."""
        return self.executor is None or self.executor.name == "serial"

    def __enter__(self) -> Workers:
        if self.executor is not None:
            self.executor.start(RepeatJobs([plan.for_repeat(index) for plan, index in self.todo]))
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.executor is not None:
            self.executor.close()

    def _drive(self, configs: list[Config], done: Callable[[int, Measurement, str], None],
               progress: Progress | None = None) -> None:
        queue = list(range(len(configs)))
        while queue or self.executor.in_flight():
            while queue and self.executor.free():
                i = queue.pop(0)
                self.executor.submit(Candidate(i, configs[i], configs[i]))
            for result in self.executor.collect(timeout=1.0):
                done(result.candidate.id, result.measurement, self.executor.node_of(result.worker))
            if progress is not None:
                progress.tick()

    def run(self, total: int, store: Callable[[Any, int, dict[str, Any], str], None]) -> int:
        """Run every repeat given; ``store`` records each as it finishes. Returns how many ran."""
        progress = Progress(total, total - len(self.todo), self.quiet)
        if not self.todo:
            return 0
        progress.start(self.how)

        def done(job: int, m: Measurement, node: str) -> None:
            plan, index = self.todo[job]
            if m.status is not Status.OK:
                raise RunFailed(f"repeat {index} of {plan.group.key} failed: {m.message.strip()[-300:]}")
            store(plan, index, m.extra["outcome"], node)
            progress.done += 1
            progress.ran += 1

        self._drive([Config({"job": i}) for i in range(len(self.todo))], done, progress)
        progress.tick(force=True)
        return len(self.todo)

    def mapper(self, folder: Path) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None:
        """A mapper of curve tasks over the workers (None: compute them in this process)."""
        if self.executor is None or len(self.executor.workers) < 2:
            return None

        def run(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
            from searchlab.reproduce.curvetask import save_task

            folder.mkdir(parents=True, exist_ok=True)
            paths = []
            for i, task in enumerate(tasks):
                paths.append(folder / f"task_{i}.npz")
                save_task(paths[-1], task)
            out: list[dict[str, Any]] = [{} for _ in tasks]

            progress = Progress(len(tasks), 0, self.quiet, what="time-axis curves computed")
            progress.start(self.how)

            def done(i: int, m: Measurement, node: str) -> None:
                if m.status is not Status.OK:
                    raise RunFailed(f"scoring a time-axis curve failed: {m.message.strip()[-300:]}")
                out[i] = m.extra["result"]
                progress.done += 1
                progress.ran += 1

            try:
                self._drive([Config({"task": str(p)}) for p in paths], done, progress)
            finally:
                for p in paths:
                    p.unlink(missing_ok=True)
            return out

        return run
