"""A line every few seconds while a slow one-off step runs (issue 46 item 2: no silent minute).

A first ``make demo`` compiles the Futhark program and discovers its threshold tree before the
search starts (about 40 s cold, well under a second once cached). Nothing else prints then, so
a step that may be slow runs inside :func:`heartbeat`: silent when it ends within ``first_s``
(cached paths, tests, ``progress=off`` studies stay quiet), else ``searchlab: NAME: ... (12 s)``
on stderr every ``every_s`` seconds until it ends, from a daemon thread.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

EVERY_S = 5.0


@contextmanager
def heartbeat(name: str, what: str, every_s: float = EVERY_S, first_s: float = EVERY_S,
              stream: TextIO | None = None) -> Iterator[None]:
    out = stream or sys.stderr
    done = threading.Event()
    started = time.time()

    def beat() -> None:
        wait = first_s
        while not done.wait(wait):
            out.write(f"searchlab: {name}: {what} ({time.time() - started:.0f} s)\n")
            out.flush()
            wait = every_s

    thread = threading.Thread(target=beat, name=f"heartbeat-{name}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=1.0)
