"""Progress of ``searchlab reproduce``: a line at least every :data:`PROGRESS_S` seconds while work is done.

Two sources: :class:`Progress` counts work handed out in steps (repeats, time-axis curves: count, rate, ETA), and
:class:`Heartbeat` covers the phases that are one long call (the spaces' statistics, the scoring in this
process, waiting for the scorer process): a ``still ...`` line when nothing was said for :data:`BEAT_S` seconds.
Both print a little before :data:`PROGRESS_S`, so that a line printed by a busy process still lands within it.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from types import TracebackType

__all__ = ["BEAT_S", "PROGRESS_S", "Heartbeat", "Progress", "said"]

PROGRESS_S = 10.0  # the promise: never silent longer than this
BEAT_S = 7.0  # when a line is due (the margin is for a loaded machine and the 1 s collect step)
_LAST = [time.monotonic()]


def said() -> None:
    """Note that a line was just printed (a heartbeat is not due before :data:`BEAT_S` from now)."""
    _LAST[0] = time.monotonic()


@dataclass
class Progress:
    """A progress line at least every :data:`PROGRESS_S` seconds while work is done: count, rate, ETA."""

    total: int
    done: int
    quiet: bool
    started: float = 0.0
    last: float = 0.0
    ran: int = 0
    what: str = "repeats stored"

    def start(self, how: str) -> None:
        self.started = self.last = time.monotonic()
        if not self.quiet:
            print(f"searchlab reproduce: {self.done}/{self.total} {self.what}; running {self.total - self.done} "
                  f"{how}", file=sys.stderr, flush=True)
            said()

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.quiet or not (force or now - max(self.last, _LAST[0]) >= BEAT_S):
            return
        self.last = now
        left = self.total - self.done
        rate = self.ran / max(now - self.started, 1e-9)
        eta = f", about {left / rate:.0f} s left" if rate > 0 and left else ""
        print(f"searchlab reproduce: {self.done}/{self.total} {self.what} ({rate:.1f}/s{eta})", file=sys.stderr,
              flush=True)
        said()


class Heartbeat:
    """``with Heartbeat("computing ...", quiet):`` prints ``still computing ... (N s)`` when nothing was said for
    :data:`BEAT_S` seconds. A daemon thread; not to be held across a ``fork`` (the child could inherit a held
    stderr lock), so the scorer process is forked outside one."""

    def __init__(self, phase: str, quiet: bool) -> None:
        self.phase, self.quiet = phase, quiet
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _beat(self) -> None:
        start = time.monotonic()
        while not self._stop.wait(0.5):
            now = time.monotonic()
            if now - _LAST[0] >= BEAT_S:
                print(f"searchlab reproduce: still {self.phase} ({now - start:.0f} s)", file=sys.stderr, flush=True)
                said()

    def __enter__(self) -> Heartbeat:
        if not self.quiet:
            said()
            self._thread = threading.Thread(target=self._beat, name="reproduce-heartbeat", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
