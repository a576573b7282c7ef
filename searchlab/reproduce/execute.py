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

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from searchlab.core.problem import Problem
from searchlab.core.records import Candidate, Config, Measurement
from searchlab.core.spaces import KnobSpace, OrdinalKnob
from searchlab.errors import SearchlabError
from searchlab.reproduce.kt import RepeatSpec

__all__ = ["RepeatJobs", "RunFailed", "run_all"]

SERIAL_REPEATS = 40
PROGRESS_S = 10.0
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
        job = config["job"]
        assert isinstance(job, int)
        outcome = run_repeat(self.specs[job])
        return Measurement.ok(time.perf_counter() - started, extra={"outcome": outcome})


@dataclass
class Progress:
    total: int
    done: int
    quiet: bool
    started: float = 0.0
    last: float = 0.0
    ran: int = 0

    def start(self, how: str) -> None:
        self.started = self.last = time.monotonic()
        if not self.quiet:
            print(f"searchlab reproduce: {self.done}/{self.total} repeats stored; running {self.total - self.done} "
                  f"{how}", file=sys.stderr, flush=True)

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.quiet or not (force or now - self.last >= PROGRESS_S):
            return
        self.last = now
        left = self.total - self.done
        rate = self.ran / max(now - self.started, 1e-9)
        eta = f", about {left / rate:.0f} s left" if rate > 0 and left else ""
        print(f"searchlab reproduce: {self.done}/{self.total} repeats stored ({rate:.1f}/s{eta})", file=sys.stderr,
              flush=True)


def _executor(jobs: int, workers: int | None, address: str | None) -> tuple[Any, str]:
    import os

    from searchlab.run.execution import SerialExecutor

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if not address and (workers == 1 or (workers is None and jobs <= SERIAL_REPEATS) or cores == 1):
        return SerialExecutor(timeout_s=TIMEOUT_S), "in this process"
    n = workers or cores
    from searchlab.run import execution

    ray_executor: Any = execution.RayExecutor  # Ray is imported only for larger runs
    return ray_executor(workers=n, timeout_s=TIMEOUT_S, address=address, cpus_per_worker=1 if not address else None), \
        f"on {n} Ray workers" if not address else f"on the Ray cluster at {address}"


def run_all(todo: Sequence[tuple[Any, int]], total: int, store: Callable[[Any, int, dict[str, Any], float, str], None],
            workers: int | None, address: str | None, quiet: bool) -> int:
    """Run every (plan, index) in ``todo``; ``store`` records each as it finishes. Returns how many ran.
    Interrupts propagate (the caller reports); a failed repeat raises :class:`RunFailed`."""
    progress = Progress(total, total - len(todo), quiet)
    if not todo:
        return 0
    executor, how = _executor(len(todo), workers, address)
    problem = RepeatJobs([plan.for_repeat(index) for plan, index in todo])
    progress.start(how)
    executor.start(problem)
    try:
        queue = list(range(len(todo)))
        while queue or executor.in_flight():
            while queue and executor.free():
                job = queue.pop(0)
                config = Config({"job": job})
                executor.submit(Candidate(job, config, config))
            for result in executor.collect(timeout=PROGRESS_S / 2):
                job = result.candidate.config["job"]
                assert isinstance(job, int)
                plan, index = todo[job]
                m = result.measurement
                if not m.ok:
                    raise RunFailed(f"repeat {index} of {plan.group.key} failed: {m.message.strip()[-300:]}")
                store(plan, index, m.extra["outcome"], float(m.objective or 0.0), executor.node_of(result.worker))
                progress.done += 1
                progress.ran += 1
            progress.tick()
        progress.tick(force=True)
    finally:
        executor.close()
    return len(todo)
