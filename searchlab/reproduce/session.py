"""One ``searchlab reproduce`` of a checked experiment into its directory: run what is missing, score, report.

The order keeps the promises of docs/security.md: the spaces' statistics are computed (the package may still
refuse a space) before the directory is made; the directory is locked for this process before anything is
written into it; each finished repeat is stored at once; and a directory this call made is removed again if it
fails before any repeat is stored (bad input found late, a full disk at the start, Ctrl-C during start-up), so
nothing half-made is left to refuse the corrected file.
"""

from __future__ import annotations

import shutil
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from searchlab.errors import ConfigError
from searchlab.reproduce.progress import Heartbeat, said

__all__ = ["Session"]

HEAVY_SCORING = 4_000_000  # time-axis points (resolution x spaces x strategies) worth scoring on several workers


class Session:
    def __init__(self, experiment: Any, root: Path, quiet: bool, include_marked: bool, live: str | None = None) -> None:
        self.experiment, self.root, self.quiet, self.include_marked = experiment, root, quiet, include_marked
        self.live = live  # --live: the view's setting (searchlab.reproduce.live), None: off

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"searchlab reproduce: {text}", file=sys.stderr, flush=True)
            said()

    def _statistics(self) -> dict[str, Any]:
        from searchlab.reproduce.plan import statistics

        out = {}
        for sp in self.experiment.spaces:
            try:
                out[sp.key] = statistics(self.experiment, sp)
            except (AssertionError, ValueError, KeyError, TypeError) as exc:  # the package's own checks of a space
                raise ConfigError(f"space {sp.gpu}/{sp.application} ({sp.t4}): autotuning_methodology cannot use it: "
                                  f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}") from None
        return out

    def run(self, workers: int | None, address: str | None, started: float) -> dict[str, Any]:
        from searchlab.reproduce.live import RepeatView
        from searchlab.reproduce.store import RepeatStore

        exp = self.experiment
        self.say(f"{len(exp.spaces)} space(s), {len(exp.strategies)} strateg{'y' if len(exp.strategies) == 1 else 'ies'},"
                 f" {sum(g.repeats for g in exp.groups)} repeats; statistics of the spaces")
        with Heartbeat("computing the spaces' statistics", self.quiet):
            stats = self._statistics()
        fresh = not self.root.exists()
        store, view = RepeatStore(self.root), None
        try:
            store.open(exp.digest, exp.path.read_bytes())
            view = RepeatView.start(self.live, self.root, self.quiet)
            return self._run(store, stats, workers, address, started, view)
        except BaseException:
            stored = store.stored()
            store.close()
            if fresh and stored == 0:
                shutil.rmtree(self.root, ignore_errors=True)
            raise
        finally:
            if view is not None:
                view.close()
            store.close()

    def _run(self, store: Any, stats: dict[str, Any], workers: int | None, address: str | None,
             started: float, view: Any = None) -> dict[str, Any]:
        from searchlab.core.store import package_versions
        from searchlab.reproduce.execute import Workers
        from searchlab.reproduce.plan import make_plan
        from searchlab.reproduce.records import record, space_facts
        from searchlab.reproduce.spaces import write_cache

        exp = self.experiment
        caches = {sp.key: write_cache(sp, self.root / "kt_cache") for sp in exp.spaces}
        plans = make_plan(exp, caches, stats)
        facts = {sp.key: space_facts(sp) for sp in exp.spaces}
        versions = package_versions()
        done = store.done((p.group.key, i) for p in plans for i in range(p.group.repeats))
        todo = [(p, i) for p in plans for i in range(p.group.repeats) if (p.group.key, i) not in done]

        def keep(plan: Any, index: int, outcome: dict[str, Any], node: str) -> None:
            rec = record(plan, index, outcome, outcome["started"], outcome["ended"], node,
                         facts[plan.group.space.key], versions)
            store.save(rec)  # committed first: the view (if any) never holds up or loses a repeat
            if view is not None:
                view.repeat(plan.group, index, rec)

        from searchlab.reproduce.scorer import Scorer

        heavy = exp.resolution * len(exp.spaces) * len(exp.strategies) >= HEAVY_SCORING and workers != 1
        with Workers(todo, workers, address, self.quiet, heavy) as pool:
            scorer = Scorer(self, stats) if pool.serial else None  # gets ready on the second core meanwhile
            try:
                clock = time.perf_counter()
                ran = pool.run(sum(p.group.repeats for p in plans), keep)
                run_wall = time.perf_counter() - clock
                with Heartbeat("scoring", self.quiet):
                    if scorer is not None and scorer.ready:
                        return scorer.report(ran, run_wall, started)
                    return self._report(store, stats, ran, run_wall, started, pool.mapper(self.root / ".scoring"))
            finally:
                if scorer is not None:
                    scorer.close()

    def _report(self, store: Any, stats: dict[str, Any], ran: int, run_wall: float, started: float,
                mapper: Any) -> dict[str, Any]:
        from searchlab.reproduce.methodology import export
        from searchlab.reproduce.outputs import write_report, write_scores
        from searchlab.reproduce.repeat_stats import repeat_scores
        from searchlab.reproduce.scoring import descriptions, run_tasks, score
        from searchlab.reproduce.tables import marks as find_marks
        from searchlab.reproduce.tables import pair_tests

        exp = self.experiment
        clock = time.perf_counter()
        self.say("scoring with autotuning_methodology's functions (both axes)")
        repeats = store.results([(g.key, g.repeats) for g in exp.groups], list(exp.time_keys))
        descs = descriptions(exp.groups, repeats, list(exp.time_keys))
        scores = score(exp, stats, descs, mapper=mapper or partial(run_tasks, quiet=self.quiet))
        rs = repeat_scores(exp, stats, descs, scores.ranges)
        marks = {} if self.include_marked else find_marks(exp)
        keep = {n: [sp.key for sp in exp.spaces if (sp.key, n) not in marks] for n in exp.strategies}
        tests = pair_tests(rs, list(exp.strategies), keep)
        meta = {"schema version": exp.version, "repeats run now": ran, "run wall time (s)": round(run_wall, 2),
                "scoring wall time (s)": round(time.perf_counter() - clock, 2),
                "objective keys": "; ".join(f"{sp.key}: {sp.objective} ({'min' if sp.minimization else 'max'}imised, "
                                            f"from {sp.objective_from})" for sp in exp.spaces)}
        md, paths = write_scores(exp, scores, rs, tests, marks, keep, self.root, meta, store.seeds())
        self.say(f"scores written: {paths['scores']} ({time.perf_counter() - started:.1f} s since start); the report")
        reference = export(exp, descs, self.root)
        meta["methodology export"] = str(reference) if reference else "not written (a name is not a plain file name)"
        paths.update(write_report(exp, scores, stats, self.root, md, meta))
        return {"paths": paths, "scores": scores, "root": self.root, "ran": ran}
