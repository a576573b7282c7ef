"""The live view: a run as an Optuna study that optuna-dashboard shows while the run goes (issue 54, item 5).

Kernel Tuner prints each configuration as it is measured; Optuna users watch a study in optuna-dashboard. Here every
run on disk (a single run, each job of a sweep, ``searchlab.tune``) can be such a study: :class:`LiveStudy` is a
:class:`~searchlab.run.loop.Recorder` that adds each evaluation as a trial (the one writer,
:mod:`searchlab.run.optuna_trials`, that ``export optuna`` uses) *after* ``results.db`` committed it (:class:`Tee`).
``results.db`` stays the record of truth; the view must never slow or break the run, so the writes happen on a
thread of their own (the loop only puts an item on a queue), and a failure to write is one warning line, after which
the run goes on without the view. The study's attributes say where the run stands: its problem, searcher, seed and
devices, the confirm phase's measurements as they come (``confirm``: per configuration, rounds and median), then
``status``, ``verdict``, ``recommended`` and the speed-up interval.

``live=auto`` (the default) writes the view for problems that measure a device or a program (:func:`measures`: a
device, or the shared measurement protocol ``problem.measure``: OpenCL kernels, Futhark programs, commands, the DFT
library), whose runs take minutes; a replayed table or a synthetic problem measures thousands of configurations a
second, where ~3 ms per trial (measured: Optuna 5.1's journal storage on this machine) would cost more than the run,
and ``export optuna`` gives the same study afterwards. ``live=true`` forces it, ``live=false`` turns it off, and
any other value is the storage: an RDB URL (``sqlite:///views.db``, ``postgresql://...``) or a journal file path.
The default storage is Optuna's journal file ``live.log`` in the run directory, or in a sweep's directory (one study
per job), because a journal file takes concurrent writers (a sweep's parallel jobs) with a lock and needs no schema
creation, which two SQLite writers starting at once would race on.

Any other door attaches it the same way, e.g. ``reproduce`` (one line)::

    recorder = Tee(store, LiveStudy.open(storage, name, direction=direction, space=space))  # then recorder.close()
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from searchlab.core.problem import DeviceNeed, Problem
from searchlab.core.records import Result
from searchlab.errors import ConfigError
from searchlab.run.live_writer import LiveStudy
from searchlab.run.loop import Recorder

__all__ = ["LiveStudy", "LiveView", "Tee", "check_live", "dashboard_command", "storage_for"]

OFF, ON = ("false", "off", "no", "0"), ("true", "on", "yes", "1")
JOURNAL = "live.log"


def check_live(value: Any) -> str:
    """``live=``'s value, normalised (auto, true, false, or a storage); a storage that keeps nothing is refused."""
    text = "auto" if value is None else str(value).strip()
    if text.lower() in ("auto", *OFF, *ON):
        return "auto" if text.lower() == "auto" else ("false" if text.lower() in OFF else "true")
    if "://" in text:
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            url = make_url(text)
        except (ArgumentError, ValueError):
            raise ConfigError(f"live={text!r}: not a storage URL (e.g. sqlite:///views.db) or a journal file") from None
        database = url.database or ""
        if url.get_backend_name() == "sqlite" and (database in ("", ":memory:") or "memory" in database):
            raise ConfigError(f"live={text!r} is an in-memory database: optuna-dashboard could not see it; give a file")
        return text
    if not text or Path(text).expanduser().is_dir():
        raise ConfigError(f"live={text!r}: give auto, true, false, a storage URL or a journal file path")
    return text


def measures(problem: Problem) -> bool:
    """Whether ``problem`` measures a device or a program: it needs a device, or it takes the shared measurement
    protocol (``problem.measure``, the one option every measuring problem takes: docs/measurement.md)."""
    import inspect

    if problem.device_need is not DeviceNeed.NONE:
        return True
    try:
        return "measure" in inspect.signature(type(problem).__init__).parameters
    except (TypeError, ValueError):
        return False


def storage_for(setting: str, run_dir: Path, problem: Problem) -> str | None:
    """The storage a run's view goes to, or None (off)."""
    if setting == "false" or (setting == "auto" and not measures(problem)):
        return None
    if setting in ("auto", "true"):
        sweep = (run_dir.parent / "multirun.yaml").is_file()  # Hydra's sweep directory: one storage for every job
        return str((run_dir.parent if sweep else run_dir) / JOURNAL)
    return setting if "://" in setting else str(Path(setting).expanduser().resolve())


def dashboard_command(storage: str) -> str:
    """The command that opens the view (on loopback only), spelt to work when pasted."""
    beside = Path(sys.executable).parent / "optuna-dashboard"
    program = str(beside) if beside.is_file() else "optuna-dashboard"
    return f"{shlex.quote(program)} --host 127.0.0.1 --port 8080 {shlex.quote(storage)}"


class Tee:
    """``primary`` (results.db: committed first, its errors are the run's), then each view (never raises)."""

    def __init__(self, primary: Recorder, *views: LiveStudy) -> None:
        self.primary, self.views = primary, views

    def record(self, result: Result) -> None:
        self.primary.record(result)
        for view in self.views:
            view.record(result)

    def close(self) -> None:
        for view in self.views:
            view.close()


class LiveView:
    """What a :class:`searchlab.run.lifecycle.Run` holds: a view, or nothing (every call then does nothing)."""

    def __init__(self, study: LiveStudy | None = None) -> None:
        self.study = study

    @classmethod
    def start(cls, setting: Any, run_dir: Path | None, problem: Problem, *, names: tuple[str, str], seed: int,
              devices: Sequence[Mapping[str, Any]], prior: Sequence[Result], quiet: bool = False) -> LiveView:
        """The view of a run on disk, as ``live=`` says; prints the command that opens it."""
        if run_dir is None:
            return cls()
        storage = storage_for(check_live(setting), run_dir, problem)
        if storage is None:
            return cls()
        attrs = {"run_dir": str(run_dir), "problem": names[0], "searcher": names[1], "seed": seed,
                 "objective": problem.objective_name, "devices": sorted({str(d.get("name")) for d in devices}),
                 "status": "running"}
        try:
            study = LiveStudy.open(storage, run_dir.name, direction=problem.direction, space=problem.space,
                                   attrs=attrs, prior=prior)
        except Exception as exc:  # the view must never break the run
            print(f"searchlab: warning: no live view ({type(exc).__name__}: {exc}); the run goes on", file=sys.stderr,
                  flush=True)
            return cls()
        if not quiet:
            print(f"searchlab: live view of study {study.name!r} at http://127.0.0.1:8080 once you start: "
                  f"{dashboard_command(storage)}", file=sys.stderr, flush=True)
        return cls(study)

    def recorder(self, store: Recorder) -> Recorder:
        return store if self.study is None else Tee(store, self.study)

    def finish(self, summary: Mapping[str, Any]) -> None:
        if self.study is not None:
            self.study.finish(summary)

    def close(self) -> None:
        if self.study is not None:
            self.study.close()
