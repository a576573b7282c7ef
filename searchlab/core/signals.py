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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A run was asked to stop by ``signum``; exit status 128 + signum."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.detail = ""  # what the run did before it stopped, for the command line's one line

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


class Guard:
    """Raises :class:`Interrupted` on SIGINT/SIGTERM until :meth:`hold`; then only remembers
    the signal, so writing the records and the summary is not cut short by a second one."""

    def __init__(self) -> None:
        self.holding = False
        self.pending: Interrupted | None = None
        self.raised: Interrupted | None = None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.holding or self.raised is not None:  # a second signal (Ctrl-C reaches a sweep's main and its
            self.pending = self.pending or Interrupted(signum)  # workers) must not cut the first one's clean-up
            return
        self.raised = self.raised or Interrupted(signum)
        raise self.raised

    def translate(self, exc: KeyboardInterrupt) -> Interrupted:
        """The signal behind ``exc``: Ray turns an exception raised by a handler while it waits in C++
        (``ray.wait``, ``ray.get``) into a plain ``KeyboardInterrupt()`` (issue 37, item 6: SIGTERM
        exited 130 and printed ``interrupted ()``), so the one this guard raised is returned instead."""
        if isinstance(exc, Interrupted):
            return exc
        return self.raised or self.pending or Interrupted(signal.SIGINT)

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


@contextmanager
def deferred(patch: Callable[[], Callable[[], None]] | None = None) -> Iterator[None]:
    """SIGINT/SIGTERM wait until the block ends, then are delivered to the handlers of before.

    For ``ray.init``: a signal inside it used to abort the process (SIGABRT: its own SIGTERM handler,
    ``sys.exit``, fired while its C++ core worker was being built). ``patch`` stops a library from
    installing its own handler during the block and returns the function that undoes that."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in SIGNALS}
    undo = patch() if patch is not None else None
    try:
        yield
    finally:
        if undo is not None:
            undo()
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        if caught:
            signal.raise_signal(caught[0])  # the handler of before decides: Guard raises Interrupted


def exit_status(exc: BaseException) -> int:
    """130 for Ctrl-C (a plain KeyboardInterrupt), 128 + signum for a signal we caught."""
    return exc.exit_status if isinstance(exc, Interrupted) else 128 + signal.SIGINT
