"""SIGINT and SIGTERM end a run cleanly: in-flight work abandoned, status 'interrupted',
summary written, and the shell's exit status for the signal (130 / 143).

Why a handler of our own: Ray installs a SIGTERM handler in the driver that prints its
stack and exits 1, leaving the run 'running' without a summary (issue 10, item 11). Ours
is installed after the executor started (so after ``ray.init``) and raises
:class:`Interrupted`, a ``KeyboardInterrupt``, which the search loop already turns into
``StopReason.INTERRUPTED``; the previous handlers come back when the run ends.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A run was asked to stop by ``signum``; exit status 128 + signum."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


class Guard:
    """Raises :class:`Interrupted` on SIGINT/SIGTERM until :meth:`hold`; then only remembers
    the signal, so writing the records and the summary is not cut short by a second one."""

    def __init__(self) -> None:
        self.holding = False
        self.pending: Interrupted | None = None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.holding:
            self.pending = self.pending or Interrupted(signum)
            return
        raise Interrupted(signum)

    def hold(self) -> None:
        self.holding = True

    def install(self) -> None:
        """(Re)take SIGINT/SIGTERM: ``ray.init`` installs Ray's own (C++) handlers in the driver."""
        if threading.current_thread() is threading.main_thread():
            for s in SIGNALS:
                signal.signal(s, self.handle)


@contextmanager
def interruptible() -> Iterator[Guard]:
    """SIGINT/SIGTERM raise :class:`Interrupted` inside the block (main thread only)."""
    guard = Guard()
    if threading.current_thread() is not threading.main_thread():
        yield guard
        return
    previous = {s: signal.signal(s, guard.handle) for s in SIGNALS}
    try:
        yield guard
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)


def exit_status(exc: BaseException) -> int:
    """130 for Ctrl-C (a plain KeyboardInterrupt), 128 + signum for a signal we caught."""
    return exc.exit_status if isinstance(exc, Interrupted) else 128 + signal.SIGINT
