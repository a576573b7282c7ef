"""One run's lifecycle: prepare -> start -> loop -> finish -> close (issue 21, item 2).

:func:`searchlab.run.prepare.prepare` checks everything and returns a frozen
:class:`~searchlab.run.prepare.Prepared`; a :class:`Run` holds what changes while it goes:

- ``start``: the executor's workers, then ``results.db`` (created, or opened on resume, when
  the searcher is also replayed what the run already measured);
- ``loop``: the search phase (:class:`searchlab.run.loop.SearchLoop`);
- ``finish``: the confirm phase (:mod:`searchlab.run.confirm`, the same loop machinery), the
  problem's ``finalize``, ``summary.json``, the plot, the run's status;
- ``close``: progress display, workers, cache and store, whatever happened.

The command line (fresh runs, resumes and every job of a sweep), studies and
:func:`searchlab.api.optimize` (a run in memory: no ``run_dir``) all enter through it.
SIGINT/SIGTERM stop a run cleanly: in-flight work is abandoned, the summary says
``interrupted``, and the interrupt is re-raised after ``close`` so the CLI exits 130/143.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from searchlab.core.commands import command, override
from searchlab.core.heartbeat import heartbeat
from searchlab.core.problem import FinalizeContext, Problem
from searchlab.core.records import Result
from searchlab.core.signals import Guard, Interrupted, interruptible
from searchlab.core.store import RunStore, is_disk_full, package_versions
from searchlab.errors import WriteError
from searchlab.run.broken import check_default_builds
from searchlab.run.confirm import ConfirmConfig, confirm_after_search
from searchlab.run.execution import SerialExecutor
from searchlab.run.live import LiveView
from searchlab.run.load import Load, announce_load
from searchlab.run.loop import SearchLoop, StopReason, is_known_infeasible
from searchlab.run.prepare import Prepared, prepare
from searchlab.run.summary import build_summary, format_summary, write_json
from searchlab.searchers import Searcher


class Run:
    """The mutable half of a run: its store, loop, outcome and summary (see the module docstring)."""

    def __init__(self, prepared: Prepared, *, hydra_dir: str = "", quiet: bool = False) -> None:
        self.p, self.hydra_dir, self.quiet = prepared, hydra_dir, quiet
        self.store: RunStore | None = None
        self.prior: list[Result] = list(prepared.prior)
        self.resumed = False  # self.prior: a resumed run's records (the searcher hears them again)
        self.devices: list[dict[str, Any]] = []
        self.search: SearchLoop | None = None
        self.reason = StopReason.INTERRUPTED
        self.interrupt: KeyboardInterrupt | None = None
        self.summary: dict[str, Any] | None = None
        self.started = time.time()
        self._guard: Guard | None = None  # signal handling: only a run that owns the process (execute)
        self.load: Load | None = None  # the machine's load before the workers started (run.load)
        self.phase = "search"  # where an interrupt came: search, confirm, validation, summary (the resume line)
        self.live = LiveView()  # the optuna-dashboard view (searchlab.run.live): a run on disk, live= on

    # -- the phases ----------------------------------------------------------------------------
    def start(self) -> None:
        """Workers first (they can refuse: no device), then the records."""
        p = self.p
        self.load = announce_load(p.problem, self.quiet)  # before the workers start (they load the machine)
        with heartbeat("start", f"starting the {p.executor.name} workers"):  # ray.init and actors: seconds
            workers = p.executor.start(self._source()) if p.start_executor else []
            if p.start_executor and not p.resuming:
                check_default_builds(p.executor, p.problem)  # a kernel that does not build stops now
        if self._guard is not None:
            self._guard.install()  # after ray.init, whose handlers would print a stack and abort on SIGTERM
        self.devices = [dict(w.device.to_dict(), worker=w.name, executor=p.executor.name) for w in workers]
        names = [w.device.name for w in workers]
        if p.run_dir is None:  # in memory (searchlab.api.optimize): a cache still needs the problem's fingerprint
            if p.cache is not None and hasattr(p.cache, "fingerprint"):
                p.cache.fingerprint = p.problem.fingerprint(names)
            return
        fingerprint = p.problem.fingerprint(names)
        changed = p.changed
        if p.resuming:  # the devices the workers report must be those the run was measured on
            from searchlab.run.inputs import check_devices

            changed = "; ".join(c for c in (changed, check_devices(p.run_dir, p.stored_fingerprint, p.problem, names,
                                                                   p.accept_changed)) if c)
        self.store = self._open_store(p.run_dir, fingerprint, changed)
        self.store.node_of = p.executor.node_of  # evaluations.node: where each ran (issue 24)
        self.live = LiveView.start(p.cfg.get("live") if p.cfg is not None else None, p.run_dir, p.problem,
                                   names=p.names, seed=int(p.cfg.seed) if p.cfg is not None else 0,
                                   devices=self.devices, prior=self.prior, quiet=self.quiet)
        if p.cache is not None and hasattr(p.cache, "fingerprint"):
            p.cache.fingerprint = fingerprint

    def loop(self) -> StopReason:
        """The search phase, until the budget (or the searcher, or an interrupt) ends it."""
        p = self.p
        self.search = SearchLoop(p.searcher, p.executor, p.budget, space=p.problem.space,
                                 store=self.live.recorder(self.store) if self.store is not None else p.recorder,
                                 cache=p.cache, progress=p.progress, prior=() if self.resumed else self.prior,
                                 resumed=self.prior if self.resumed else (), same_failures=p.problem.runs_user_code)
        self.reason = self.search.run()
        self.interrupt = self.search.interrupt
        return self.reason

    def finish(self) -> dict[str, Any] | None:
        """Confirm, finalize, summarize, plot and mark the run finished (a run on disk only)."""
        if self.store is None or self.search is None:
            return None
        confirmed, report = self._confirm_and_finalize(self.store, self.search)
        if self._guard is not None:
            self._guard.hold()
        if self.interrupt is None:
            self.phase = "summary"
        phase = self._phase_progress()
        if phase is not None:
            phase("writing", lambda: "summary.json and best_so_far.png")
        self._close_progress()
        state = self.search.state
        summary = self._summarize(self.store, search=self.search, confirmed=confirmed, report=report)
        summary["status"] = "interrupted" if self.reason is StopReason.INTERRUPTED else "finished"
        _write_summary(self.store, summary)
        if self.p.plot:
            _plot(self.store.path.parent, summary, state.results)
        self.store.finish(self.reason.value, summary["status"], self.devices)
        self.live.finish(summary)
        self.summary = summary
        return summary

    def _interrupted_late(self, exc: KeyboardInterrupt) -> None:
        """A signal that came while the summary was being written (the guard held it): the run is
        ``interrupted`` in summary.json and results.db alike, so that it exits 130/143 with the resume
        line and a resume redoes the confirm phase (issue 47, case 4). Nothing measured is lost."""
        self.interrupt, self.reason = exc, StopReason.INTERRUPTED
        if self.store is None or self.summary is None:
            return
        self.summary.update(stop_reason=self.reason.value, status="interrupted")
        _write_summary(self.store, self.summary)
        self.store.finish(self.reason.value, "interrupted", self.devices)
        self.live.finish(self.summary)

    def close(self) -> None:
        """Release everything the run holds; safe after any phase failed."""
        if self.p.cfg is not None:  # what prepare opened (a caller's own progress and cache stay open)
            self._close_progress()
            self.p.close()
        if self.p.start_executor:
            self.p.executor.close()
        if self.store is not None:
            self.store.close()
        self.live.close()  # last: a second Ctrl-C while the view catches up leaves everything else closed

    # -- the whole run -------------------------------------------------------------------------
    def execute(self) -> dict[str, Any]:
        """start -> loop -> finish -> close under signal handling; returns the summary.

        An interrupt is re-raised (as :class:`searchlab.core.signals.Interrupted` or
        ``KeyboardInterrupt``) once the summary is written and everything is closed."""
        try:
            with interruptible() as guard:
                self._guard = guard
                try:
                    self.start()
                    self.loop()
                    self.finish()
                    self.report()
                except KeyboardInterrupt as exc:  # during start-up (nothing recorded yet) or outside the loop
                    self._mark_failed("interrupted", "interrupted")
                    raise self._interrupted(guard.translate(exc)) from None
            if self.interrupt is None and guard.pending is not None:  # held while the summary was written
                self._interrupted_late(guard.pending)
            if self.interrupt is not None:
                raise self._interrupted(guard.translate(self.interrupt))
            return self.summary or {}
        except WriteError:
            self._mark_failed("write_failed")
            raise
        except Exception:  # a refusal or a bug mid-run: the records must not say 'running' forever
            self._mark_failed("error")
            raise
        finally:
            self.close()

    def _interrupted(self, exc: Interrupted) -> Interrupted:
        """``exc`` with the one line the command line prints (issue 35, item 6): how far the run got
        and how to go on, with the run's absolute directory."""
        p = self.p
        if p.run_dir is None:
            return exc
        if self.store is None or self.search is None:
            exc.detail = "during start-up; nothing was recorded"
            return exc
        done = self.search.state.done  # as the budget counts them
        total = p.budget.evaluations if p.budget.evaluations is not None else "no limit on"
        during = "" if self.phase == "search" else f" (during the {self.phase} phase)"
        exc.detail = (f"after {done} of {total} evaluations{during}; resume with: "
                      f"{command('searchlab', override('resume', p.run_dir.resolve()))}")
        return exc

    def report(self) -> None:
        """The summary, notes and verdict on stdout (unless quiet)."""
        if self.quiet or self.summary is None or self.p.run_dir is None:
            return
        print(format_summary(self.summary, self.p.run_dir), flush=True)
        for note in self.summary.get("notes", []):
            print(f"searchlab: note: {note}", flush=True)
        print("searchlab: verdict: " + self.summary["verdict"].replace("\n", "\n  "), flush=True)

    # -- helpers -------------------------------------------------------------------------------
    def _source(self) -> Problem | dict[str, Any]:
        """In process the prepared problem is used as is; workers elsewhere build their own."""
        p = self.p
        if isinstance(p.executor, SerialExecutor) or p.cfg is None:
            return p.problem
        source = OmegaConf.to_container(p.cfg.problem, resolve=True)
        assert isinstance(source, dict)
        return {str(k): v for k, v in source.items()}

    def _open_store(self, run_dir: Path, fingerprint: str, changed: str = "") -> RunStore:
        p = self.p
        if p.resuming:
            store = RunStore.open(run_dir, self.hydra_dir, inputs=p.inputs, changed=changed)
            if p.cfg is not None:  # this session's budget is the run's now: a later resume continues to it
                config = OmegaConf.to_container(p.cfg, resolve=True)
                assert isinstance(config, dict)
                store.update_config({**{str(k): v for k, v in config.items()}, "resume": None})
            if changed:
                print(f"searchlab: note: resume_changed=true: continuing as a new session although {changed}",
                      file=sys.stderr, flush=True)
            self.prior = list(store.results())  # replayed into the searcher by the loop (SearchLoop resumed=)
            self.resumed = True
            if p.progress is not None:
                p.progress.resumed(sum(1 for r in self.prior if not is_known_infeasible(r)), p.budget)
            return store
        assert p.cfg is not None
        return RunStore.create(run_dir, {
            "name": p.cfg.get("name"), "problem": p.names[0], "searcher": p.names[1],
            "seed": int(p.cfg.seed), "fingerprint": fingerprint, "direction": p.problem.direction.value,
            "objective_name": p.problem.objective_name, "known_optimum": _optimum(p.problem),
            "config": OmegaConf.to_container(p.cfg, resolve=True), "space": p.problem.space.describe(),
            "versions": package_versions(), "devices": self.devices,
        }, self.hydra_dir, inputs=p.inputs)

    def _confirm_and_finalize(self, store: RunStore,
                              search: SearchLoop) -> tuple[Mapping[str, Any] | None, Mapping[str, Any]]:
        """The confirm phase first (finalize writes what it recommends), skipped when interrupted."""
        p, state = self.p, search.state
        if self.interrupt is not None or self.reason is StopReason.INTERRUPTED:
            return None, {}
        prior = store.confirmations() if p.resuming else []
        self.phase = "confirm"
        phase = self._phase_progress()
        try:  # an interrupt in either phase makes the run 'interrupted' (issue 47, case 4), its records kept
            confirmed = confirm_after_search(p.executor, state.results, prior, p.problem.direction, p.confirm,
                                             p.problem.noisy, self.live.recorder(store), p.problem.default_config(),
                                             phase)
        except KeyboardInterrupt as exc:
            self.interrupt, self.reason = exc, StopReason.INTERRUPTED
            return None, {}
        self.phase = "validation"
        try:
            assert p.run_dir is not None
            report = p.problem.finalize(FinalizeContext(p.run_dir, state.best, state.results, p.executor.call,
                                                        len(state.results), time.time() - self.started,
                                                        confirm=confirmed, progress=phase, **_rule(p.confirm)))
        except KeyboardInterrupt as exc:
            self.interrupt, self.reason = exc, StopReason.INTERRUPTED
            return confirmed, {}
        return confirmed, report

    def _summarize(self, store: RunStore, *, search: SearchLoop, confirmed: Mapping[str, Any] | None,
                   report: Mapping[str, Any]) -> dict[str, Any]:
        """summary.json's content; the config is this session's (a resume may change the budget)."""
        info = dict(store.run_info())
        info["load"] = self.load.to_dict() if self.load is not None else None
        if self.p.cfg is not None:
            info["config"] = OmegaConf.to_container(self.p.cfg, resolve=True)
        state = search.state
        summary = build_summary(info, state.results, self.reason.value, time.time() - self.started,
                                self.p.problem, state.best, dict(report), self.devices, confirm=confirmed)
        note = _shortfall(self.p.searcher, self.reason)
        if note:
            summary["notes"] = [note]
        priors = _prior_report(self.p.searcher)
        if priors:  # prior=: which tables were used, their weights, whether cold auto took over
            summary["priors"] = priors
            summary.setdefault("notes", []).append(str(priors["line"]))
        return summary

    def _phase_progress(self) -> Any:
        """The progress display's hook for the phases after the search (Progress.phase), if there is a display."""
        return self.p.progress.phase if self.p.progress is not None else None

    def _close_progress(self) -> None:
        if self.p.progress is not None:
            self.p.progress.close()

    def _mark_failed(self, reason: str, status: str = "failed") -> None:
        if self.store is None:
            return
        try:
            self.store.finish(reason, status)
        except Exception:  # the disk may still be full: the message says what was kept
            pass


def execute(cfg: DictConfig | Mapping[str, Any], run_dir: str | Path, *, names: tuple[str, str] | None = None,
            overrides: Sequence[str] = (), hydra_dir: str = "", quiet: bool = False,
            prepared: Prepared | None = None) -> dict[str, Any]:
    """Prepare (unless ``prepared``) and execute one run; returns the summary also in summary.json."""
    run = Run(prepared or prepare(cfg, run_dir, names=names, overrides=overrides), hydra_dir=hydra_dir, quiet=quiet)
    return run.execute()


def _plot(run_dir: Path, summary: Mapping[str, Any], results: Sequence[Result]) -> None:
    """best_so_far.png beside summary.json (searchlab.run.plot); a plot must never fail a finished run."""
    try:
        from searchlab.run.plot import plot_run

        plot_run(run_dir, summary, results)
    except Exception as exc:  # a full disk leaves no half-written plot (searchlab.core.figures.write)
        print(f"searchlab: warning: no best_so_far.png ({type(exc).__name__}: {exc})", flush=True)


def _write_summary(store: RunStore, summary: Mapping[str, Any]) -> None:
    path = store.path.parent / "summary.json"
    try:
        write_json(path, summary)
    except OSError as exc:
        path.with_suffix(".json.tmp").unlink(missing_ok=True)
        raise WriteError(store.write_failure(exc) if is_disk_full(exc) else f"{path} could not be written ({exc}); "
                         f"results.db keeps every evaluation") from None


def _shortfall(searcher: Searcher, reason: StopReason) -> str | None:
    """Why a searcher that is not anytime ended without a result (e.g. DP short of budget: Searcher.shortfall)."""
    if reason in (StopReason.EXHAUSTED, StopReason.INTERRUPTED):
        return None
    text = searcher.shortfall()
    return str(text) if text else None


def _rule(options: ConfirmConfig) -> dict[str, Any]:
    """The confirm phase's sequential rule, for a problem's own run-end comparison (Futhark's validation)."""
    rounds = options.rounds or 5
    return {"rounds": rounds, "max_rounds": max(options.max_rounds, rounds), "max_time_s": options.max_time_s,
            "equivalence": options.equivalence}


def _prior_report(searcher: Searcher) -> Mapping[str, Any] | None:
    """A searcher's account of its priors (Searcher.prior_report: a transfer searcher's), else None."""
    return searcher.prior_report()


def _optimum(problem: Problem) -> float | None:
    try:
        return problem.known_optimum
    except Exception:
        return None
