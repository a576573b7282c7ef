"""Progress of ``searchlab reproduce``: a line at least every :data:`PROGRESS_S` seconds while work is done."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

__all__ = ["PROGRESS_S", "Progress"]

PROGRESS_S = 10.0


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

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.quiet or not (force or now - self.last >= PROGRESS_S):
            return
        self.last = now
        left = self.total - self.done
        rate = self.ran / max(now - self.started, 1e-9)
        eta = f", about {left / rate:.0f} s left" if rate > 0 and left else ""
        print(f"searchlab reproduce: {self.done}/{self.total} {self.what} ({rate:.1f}/s{eta})", file=sys.stderr,
              flush=True)
