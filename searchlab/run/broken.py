"""A program that does not work stops the run early, with the compiler's line (issue 54, item 2).

Why. A user kernel with a syntax error ran the whole budget (every evaluation a failed build), exited 0,
and the terminal cut the compiler's message before ``12:33: expected ';'``. A tuning run of a broken
program measures nothing: the one useful thing it can do is stop at once and quote the error.

Two rules, for problems whose evaluations build and run the user's code (``Problem.runs_user_code``:
OpenCL kernels, commands, Futhark programs; never replays, whose recorded failures are data):

- **The default first.** Before the search, the worker builds the default configuration
  (``Problem.build_check``). If it does not build, the run stops before anything is recorded:
  :class:`BrokenProgram`, one line with the first error line in full, exit status 3.
- **The same failure K times in a row, before anything worked** (``budget.max_same_failures``,
  default :data:`SAME_FAILURES`): K evaluations in a row that failed with the same mode and the same
  first error line stop the search (stop reason ``same_failures``); the summary and records are kept,
  and the run exits 3 with the line. Only while no evaluation has succeeded: once one configuration
  worked, the program is shown to build and run, and identical failures after it belong to the
  configurations (a region of too-large work-groups), which searchers learn from and
  ``budget.max_failure_rate`` bounds. Deviation from the issue's wording ("fails the same way K times
  in a row stops there"): that, without the "before anything worked", would stop working programs too.

Why K = 10. A working program stops falsely only when its first K evaluations all fail with one
identical message: with a fraction f of the space failing so, about f^K, 0.1 % at f = 0.5 and 2.8 %
at f = 0.7 for K = 10 (3 % and 17 % for K = 5). A broken program costs K builds (seconds: a pocl or
gcc build takes 0.3-3 s here), and the default check usually catches it after one.
"""

from __future__ import annotations

from typing import Any

from searchlab.core.buildlog import first_error_line
from searchlab.core.records import FailureMode, Result
from searchlab.errors import SearchlabError

SAME_FAILURES = 10
BROKEN_STATUS = 3  # the CLI's exit status for a program that does not build or run (docs/reference.md)
# failures that say something about the program rather than the configuration's resources or the clock
MODES = frozenset({FailureMode.COMPILE, FailureMode.LAUNCH, FailureMode.RUNTIME, FailureMode.CRASH})


class BrokenProgram(SearchlabError):
    """The program under tuning does not build (or run) at all: exit status 3, the error line in full."""

    exit_status = BROKEN_STATUS


def failure_key(result: Result) -> tuple[str, str] | None:
    """(mode, first error line) of a failure that may be the program's; None for anything else."""
    m = result.measurement
    if result.ok or result.cache_hit or m.failure_mode not in MODES:
        return None
    return m.failure_mode.value, first_error_line(m.message)


class SameFailures:
    """Counts identical failures in a row until the first success (see the module docstring)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.key: tuple[str, str] | None = None
        self.count = 0
        self.worked = False

    def observe(self, result: Result) -> None:
        if self.limit is None or self.worked:
            return
        if result.ok:
            self.worked = True
            return
        key = failure_key(result)
        self.count = self.count + 1 if key is not None and key == self.key else (1 if key is not None else 0)
        self.key = key

    @property
    def tripped(self) -> bool:
        return self.limit is not None and not self.worked and self.count >= self.limit


def check_default_builds(executor: Any, problem: Any) -> None:
    """Build the default configuration on a worker before the search; a failure is :class:`BrokenProgram`."""
    default = problem.default_config() if getattr(problem, "runs_user_code", False) else None
    if default is None:
        return
    message = executor.call("build_check", default)
    if message:
        line = first_error_line(str(message))
        raise BrokenProgram(f"the program does not build with its default configuration "
                            f"({', '.join(f'{k}={v}' for k, v in default.items())}); nothing was measured. "
                            f"First error: {line}")


def stopped_line(summary: dict[str, Any]) -> str:
    """The one line for a run that stopped on ``same_failures``: how many, and the first error in full."""
    failures = summary.get("failures") or {}
    info = next(iter(sorted(failures.items(), key=lambda kv: -int(kv[1].get("count", 0)))), None)
    line = (info[1].get("line") or info[1].get("first")) if info else ""
    return (f"every evaluation failed the same way ({summary.get('evaluations')} in a row, "
            f"budget.max_same_failures): the program does not build or run. First error: {line}")
