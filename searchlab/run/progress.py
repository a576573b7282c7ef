"""Live progress: one rewritten line on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from searchlab.run.loop import Budget, LoopState, Progress, is_known_infeasible


def resume_line(done: int, budget: Budget) -> str:
    """Where a resumed run picks up: ``resuming at 65/2000 evaluations``."""
    total = f"/{budget.evaluations}" if budget.evaluations else ""
    return f"searchlab: resuming at {done}{total} evaluations"


def _before(state: LoopState) -> int:
    """Evaluations finished before this session started (a resume's records), which its ETA must not count."""
    return sum(1 for r in state.results if r.t_end < state.started and not is_known_infeasible(r))


def eta_end(budget: int | None, space_size: int | None, done: int) -> int | None:
    """The evaluation count the ETA runs to: the budget, or the space's size when that is smaller and
    not yet reached (a searcher that revisits configurations may go on past it, to the budget)."""
    if space_size is not None and space_size > done and (budget is None or space_size < budget):
        return space_size
    return budget


def _fmt_time(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class ProgressReporter(Progress):
    """Shows evaluations, failures, best so far, elapsed time and ETA.

    ``mode``: ``bar`` (rewrite one line, at most 10 times a second), ``log`` (a line every
    ``log_every_s`` seconds), ``off``, or ``auto`` (bar on a terminal, else log).
    The ETA is this session's own rate times what is left: a resumed run's earlier evaluations took
    time this session never spent, so counting them would make the first ETA far too short. What is
    left is counted to ``min(budget, space_size)``: an exhaustive searcher stops when the space is
    measured, long before a budget larger than the space.

    The phases after the search (the confirm rounds, a problem's validation rounds, writing the
    summary) report through :meth:`phase`, at the same pace, so no phase of a run is silent for
    longer than ``log_every_s`` (issue 46 item 2); the search loop calls the reporter while an
    evaluation runs too (:class:`searchlab.run.loop.SearchLoop`), not only when one finishes.
    """

    def __init__(self, mode: str = "auto", objective_name: str = "objective", stream: TextIO | None = None,
                 log_every_s: float = 5.0, space_size: int | None = None) -> None:
        if mode not in ("auto", "bar", "log", "off"):
            from searchlab.errors import ConfigError

            raise ConfigError(f"progress={mode}: must be one of auto, bar, log, off")
        self.stream = stream or sys.stderr
        self.mode = ("bar" if self.stream.isatty() else "log") if mode == "auto" else mode
        self.objective_name, self.log_every_s = objective_name, log_every_s
        self._last = 0.0
        self._shown_bar = False
        self._base: int | None = None  # evaluations done before this session (None: not known yet)
        self.space_size = space_size
        self._phase = "search"

    def resumed(self, done: int, budget: Budget) -> None:
        """Say where a resume picks up (whatever the mode: it is one line), and time from there."""
        self._base = done
        self.stream.write(resume_line(done, budget) + "\n")
        self.stream.flush()

    def line(self, state: LoopState, budget: Budget) -> str:
        total = budget.evaluations
        done = f"{state.done}/{total}" if total else str(state.done)
        best = "-" if state.best is None else f"{state.best.objective:.6g}"
        eta = ""
        if self._base is None:
            self._base = _before(state)
        own = state.done - self._base
        end = eta_end(total, self.space_size, state.done)
        left = max(0.0, budget.wall_time_s - state.elapsed) if budget.wall_time_s else None
        if end and own > 0:  # the evaluations left at this session's pace, never past the wall-time cap
            pace = state.elapsed / own * max(0, end - state.done)
            eta = f" eta {_fmt_time(pace if left is None else min(pace, left))}"
        elif left is not None:
            eta = f" eta {_fmt_time(left)}"
        return f"[{done}] failed {state.failures}  best {self.objective_name} {best}  elapsed {_fmt_time(state.elapsed)}{eta}"

    def __call__(self, state: LoopState, budget: Budget) -> None:
        if self.mode == "off":
            return
        now = time.time()
        final = budget.evaluations is not None and state.done >= budget.evaluations
        interval = 0.1 if self.mode == "bar" else self.log_every_s
        if now - self._last < interval and not final:
            return
        self._last = now
        if self.mode == "bar":
            self.stream.write("\r\033[K" + self.line(state, budget))
            self._shown_bar = True
        else:
            self.stream.write(self.line(state, budget) + "\n")
        self.stream.flush()

    def phase(self, name: str, text: Callable[[], str], final: bool = False) -> None:
        """A line of a later phase, ``searchlab: NAME: TEXT``: the first of each phase at once, then at
        the search's pace (``text`` is built only when printed); ``final`` always prints."""
        if self.mode == "off":
            return
        now = time.time()
        interval = 0.1 if self.mode == "bar" else self.log_every_s
        if name == self._phase and now - self._last < interval and not final:
            return
        if self.mode == "bar" and name != self._phase and self._shown_bar:
            self.stream.write("\n")  # keep the last line of the phase before
        self._phase, self._last = name, now
        line = f"searchlab: {name}: {text()}"
        if self.mode == "bar":
            self.stream.write("\r\033[K" + line)
            self._shown_bar = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._shown_bar:
            self.stream.write("\n")
            self.stream.flush()
