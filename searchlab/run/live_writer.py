"""The live view's writer (searchlab.run.live): one Optuna study, written on a thread of its own.

The caller's thread only puts items on a queue, so a slow or hung storage (a remote database) never holds up the
run. The thread opens the storage and the study (importing Optuna there, ~1 s, off the run's path), then writes each
item in order. The first error is one warning line; after it the thread only drains the queue, so :meth:`close`
returns at once. Optuna's INFO lines from this thread ("A new study created ...") are filtered out of the run's
output without touching Optuna's global verbosity, which a searcher in the run's own thread may be using.
"""

from __future__ import annotations

import logging
import queue
import statistics
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from searchlab.core.records import Direction, Result
from searchlab.run.optuna_trials import Distributions, attributes, frozen_trial

THREAD = "searchlab-live"
CLOSE_WAIT_S = 10.0  # the most a run's close waits for the view to catch up
_STOP = object()


def _not_ours(record: logging.LogRecord) -> bool:
    return record.threadName != THREAD


def _quiet() -> None:
    """Drop Optuna's log lines made on the writer's thread (a filter on its handlers; other threads unchanged)."""
    import optuna

    optuna.logging.get_verbosity()  # Optuna's handler exists from here on
    for handler in logging.getLogger("optuna").handlers:
        if _not_ours not in handler.filters:
            handler.addFilter(_not_ours)


def _storage(storage: str) -> Any:
    if "://" in storage:
        return storage  # an RDB URL: Optuna makes its RDBStorage
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    _repair(Path(storage))
    return JournalStorage(JournalFileBackend(storage))


def _repair(path: Path) -> None:
    """A journal cut mid-line (a writer killed while appending: ``kill -9``) ends at its last whole line again, so a
    resume's first append does not glue onto the torn line (Optuna would then fail to read the line, and the view).
    Done under the journal's own lock: a sweep's other jobs may be appending."""
    from optuna.storages.journal import JournalFileSymlinkLock

    lock = JournalFileSymlinkLock(str(path))
    lock.acquire()
    try:
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            with path.open("rb+") as fh:
                fh.truncate(data.rfind(b"\n") + 1)
    finally:
        lock.release()


class LiveStudy:
    """A :class:`~searchlab.run.loop.Recorder` that mirrors a run's evaluations into an Optuna study (module docstring).

    Search evaluations become trials numbered as recorded (user attribute ``evaluation``); confirm-phase measurements
    (negative candidate ids) update the study attribute ``confirm``; :meth:`finish` sets the verdict's attributes.
    On a resume the study of the same run directory is reopened and the trials it lacks are added first."""

    def __init__(self, storage: str, name: str, *, direction: Direction, space: Any = None,
                 attrs: Mapping[str, Any] | None = None, prior: Sequence[Result] = ()) -> None:
        self.storage, self.name, self.direction = storage, name, direction
        self.attrs = dict(attrs or {})
        self.distributions = Distributions(space=space)
        self.failed: str | None = None
        self.written = 0  # trials this writer added (for tests and the close message)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._count = 0
        self._confirm: dict[str, dict[str, Any]] = {}
        self._thread = threading.Thread(target=self._work, name=THREAD, daemon=True)
        for result in prior:
            self.record(result)
        self._thread.start()

    @classmethod
    def open(cls, storage: str, name: str, **options: Any) -> LiveStudy:
        """The writer; a journal file is made now, so that ``optuna-dashboard FILE`` opens it at once."""
        if "://" not in storage:
            path = Path(storage)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch(exist_ok=True)
        return cls(storage, name, **options)

    # -- the caller's side: put on the queue ------------------------------------------------------
    def record(self, result: Result, attrs: Mapping[str, Any] | None = None) -> None:
        """``result`` as the next trial; ``attrs``: user attributes beside the measurement's (a reproduce's
        repeat: its index, seed, attempts; JSON values)."""
        if result.id < 0:  # a confirm-phase measurement (searchlab.run.confirm)
            self._queue.put(("confirm", result))
            return
        self._count += 1
        self._queue.put(("trial", self._count, result, dict(attrs or {})))

    def finish(self, summary: Mapping[str, Any]) -> None:
        chosen = summary.get("recommended") or {}
        self._queue.put(("attrs", {
            "status": summary.get("status"), "stop_reason": summary.get("stop_reason"),
            "verdict": summary.get("verdict"), "recommended": chosen.get("config"),
            "recommended_is_default": chosen.get("is_default"), "speedup": chosen.get("speedup"),
            "speedup_ci95": chosen.get("ci95"), "evaluations": summary.get("evaluations")}))

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Let the writer finish what is queued, waiting at most ``wait_s``; it never raises."""
        self._queue.put(_STOP)
        self._thread.join(wait_s)
        if self._thread.is_alive():
            self._warn(f"still writing after {wait_s:.0f} s; the dashboard may miss the last evaluations")

    # -- the writer's thread ----------------------------------------------------------------------
    def _warn(self, what: str) -> None:
        print(f"searchlab: warning: live view ({self.storage}): {what}; the run goes on and results.db keeps every "
              f"evaluation", file=sys.stderr, flush=True)

    def _work(self) -> None:
        study, done = None, 0
        while (item := self._queue.get()) is not _STOP:
            if self.failed is not None:
                continue
            try:
                if study is None:
                    study, done = self._open()
                self._write(study, item, done)
            except Exception as exc:  # the view must never break the run
                self.failed = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
                self._warn(f"writing stopped ({self.failed})")

    def _open(self) -> tuple[Any, int]:
        """The study (created, or this run's own reopened on resume) and how many evaluations it already holds."""
        import optuna
        from optuna.exceptions import DuplicatedStudyError

        _quiet()
        storage = _storage(self.storage)
        base, n = self.name, 1
        while True:
            try:
                study = optuna.create_study(storage=storage, study_name=self.name, direction=self.direction.value)
                for key, value in self.attrs.items():
                    study.set_user_attr(key, value)
                return study, 0
            except DuplicatedStudyError:
                study = optuna.load_study(study_name=self.name, storage=storage)
                if study.user_attrs.get("run_dir") == self.attrs.get("run_dir"):  # a resume: the same run goes on
                    study.set_user_attr("status", "running")
                    done = [t.user_attrs.get("evaluation", 0) for t in study.get_trials(deepcopy=False)]
                    return study, max(done, default=0)
                n += 1
                self.name = f"{base}-{n}"  # another run's study of that name

    def _write(self, study: Any, item: tuple[Any, ...], done: int) -> None:
        kind = item[0]
        if kind == "trial":
            number, result, extra = item[1], item[2], item[3]
            if number <= done:  # written by an earlier session of this run
                return
            attrs = {**attributes(result.measurement, result.device), "evaluation": number, "worker": result.worker,
                     "cache_hit": result.cache_hit, **extra}
            study.add_trial(frozen_trial(result.config, result.measurement, self.distributions, attrs))
            self.written += 1
        elif kind == "confirm":
            study.set_user_attr("confirm", self._confirmed(item[1]))
        else:
            for key, value in item[1].items():
                study.set_user_attr(key, value)

    def _confirmed(self, result: Result) -> list[dict[str, Any]]:
        """The confirm phase so far: per configuration, its rounds, failures and median objective."""
        entry = self._confirm.setdefault(result.config.key, {
            "config": dict(result.config), "default": bool(result.candidate.meta.get("default")), "values": [],
            "failed": 0})
        if result.ok and result.objective is not None:
            entry["values"].append(result.objective)
        else:
            entry["failed"] += 1
        return [{"config": e["config"], "default": e["default"], "rounds": len(e["values"]) + e["failed"],
                 "failed": e["failed"], "median": statistics.median(e["values"]) if e["values"] else None}
                for e in self._confirm.values()]
