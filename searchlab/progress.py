"""Live progress: one rewritten line on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from searchlab.loop import Budget, LoopState


def _fmt_time(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class ProgressReporter:
    """Shows evaluations, failures, best so far, elapsed time and ETA.

    ``mode``: ``bar`` (rewrite one line, at most 10 times a second), ``log`` (a line every
    ``log_every_s`` seconds), ``off``, or ``auto`` (bar on a terminal, else log).
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

    def line(self, state: LoopState, budget: Budget) -> str:
        total = budget.evaluations
        done = f"{state.done}/{total}" if total else str(state.done)
        best = "-" if state.best is None else f"{state.best.objective:.6g}"
        eta = ""
        if total and state.done:
            eta = f" eta {_fmt_time(state.elapsed / state.done * max(0, total - state.done))}"
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
