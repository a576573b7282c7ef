"""Live progress: one rewritten line on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from searchlab.run.loop import Budget, LoopState, is_known_infeasible


def resume_line(done: int, budget: Budget) -> str:
    """Where a resumed run picks up: ``resuming at 65/2000 evaluations``."""
    total = f"/{budget.evaluations}" if budget.evaluations else ""
    return f"searchlab: resuming at {done}{total} evaluations"


def _before(state: LoopState) -> int:
    """Evaluations finished before this session started (a resume's records), which its ETA must not count."""
    return sum(1 for r in state.results if r.t_end < state.started and not is_known_infeasible(r))


def _fmt_time(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class ProgressReporter:
    """Shows evaluations, failures, best so far, elapsed time and ETA.

    ``mode``: ``bar`` (rewrite one line, at most 10 times a second), ``log`` (a line every
    ``log_every_s`` seconds), ``off``, or ``auto`` (bar on a terminal, else log).
    The ETA is this session's own rate times what is left: a resumed run's earlier evaluations took
    time this session never spent, so counting them would make the first ETA far too short.
    """

    def __init__(self, mode: str = "auto", objective_name: str = "objective", stream: TextIO | None = None,
                 log_every_s: float = 5.0) -> None:
        if mode not in ("auto", "bar", "log", "off"):
            from searchlab.errors import ConfigError

            raise ConfigError(f"progress={mode}: must be one of auto, bar, log, off")
        self.stream = stream or sys.stderr
        self.mode = ("bar" if self.stream.isatty() else "log") if mode == "auto" else mode
        self.objective_name, self.log_every_s = objective_name, log_every_s
        self._last = 0.0
        self._shown_bar = False
        self._base: int | None = None  # evaluations done before this session (None: not known yet)

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
        if total and own > 0:
            eta = f" eta {_fmt_time(state.elapsed / own * max(0, total - state.done))}"
        elif budget.wall_time_s:
            eta = f" eta {_fmt_time(max(0.0, budget.wall_time_s - state.elapsed))}"
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

    def close(self) -> None:
        if self._shown_bar:
            self.stream.write("\n")
            self.stream.flush()
