"""Run a command as a user does, and time its output: the longest silence (issue 54, item 3).

A user at a terminal sees nothing between two lines; "never silent for more than 10 s" is measured as the
longest gap between any two pieces of output (stdout and stderr together, ``\\r`` rewrites count), counting
the start (before the first line) and the end (after the last, until the command exits). Each command runs in
a fresh ``bash -c`` with a clean environment (the system ``PATH``, no ``PYTHONPATH``, no activated venv) in the
checkout root, so a printed command is pasted as it was printed.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LIMIT_S = 10.0  # never silent for longer (docs/testing.md)


def clean_env(root: Path = ROOT) -> dict[str, str]:
    """What a fresh login shell has: no PYTHONPATH, no VIRTUAL_ENV, the system PATH."""
    env = {"HOME": os.environ.get("HOME", "/root"), "PATH": SYSTEM_PATH, "LANG": "C.UTF-8",
           "TERM": "dumb", "PYTHONUNBUFFERED": "1"}
    for name in ("SEARCHLAB_CACHE_DIR", "PIP_FIND_LINKS", "PIP_CERT", "PIP_DEFAULT_TIMEOUT",
                 "PIP_DISABLE_PIP_VERSION_CHECK"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    futhark = root / ".futhark"
    if futhark.is_symlink():  # a worktree sharing the main checkout's compiler: relink to the real prefix
        env["FUTHARK_PREFIX"] = str(futhark.resolve())
    return env


@dataclass
class Timed:
    """A finished command: status, output (stdout and stderr interleaved), seconds, and its silences."""

    command: str
    status: int
    output: str
    seconds: float
    longest_silence_s: float
    silence_before: str  # the line the longest silence ended on ("(exit)": the command ended)
    first_output_s: float | None
    events: list[tuple[float, str]] = field(default_factory=list)  # (seconds since start, line)

    @property
    def lines(self) -> list[str]:
        return [line for _, line in self.events]

    def as_dict(self) -> dict[str, object]:
        return {"command": self.command, "exit": self.status, "seconds": round(self.seconds, 2),
                "longest_silence_s": round(self.longest_silence_s, 2), "silence_ended_at": self.silence_before[:300],
                "first_output_s": None if self.first_output_s is None else round(self.first_output_s, 2),
                "within_limit": self.longest_silence_s <= LIMIT_S}


def timed(command: str, *, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 1800,
          until: Callable[[list[tuple[float, str]]], bool] | None = None,
          send: int = signal.SIGINT) -> Timed:
    """Run ``command`` in a fresh shell; with ``until``, send ``send`` to its process group (as a terminal's
    Ctrl-C does) once ``until(events so far)`` holds."""
    t0 = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env or clean_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    events: list[tuple[float, str]] = []
    stamps: list[float] = []
    assert proc.stdout is not None
    stream = proc.stdout

    def read() -> None:
        buffer = b""
        while chunk := os.read(stream.fileno(), 4096):
            now = time.monotonic() - t0
            stamps.append(now)
            buffer += chunk
            *done, buffer = buffer.replace(b"\r", b"\n").split(b"\n")
            events.extend((now, line.decode(errors="replace")) for line in done if line.strip())
        if buffer.strip():
            events.append((time.monotonic() - t0, buffer.decode(errors="replace")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    sent = False
    while proc.poll() is None:
        if time.monotonic() - t0 > timeout:
            os.killpg(proc.pid, signal.SIGKILL)
            break
        if until is not None and not sent and until(list(events)):
            os.killpg(proc.pid, send)
            sent = True
        time.sleep(0.05)
    proc.wait()
    reader.join(timeout=10)
    end = time.monotonic() - t0
    status = 128 - proc.returncode if proc.returncode < 0 else proc.returncode  # a shell's $? for a signal death
    points = [0.0, *stamps, end]
    gaps = [(b - a, i) for i, (a, b) in enumerate(itertools.pairwise(points))]
    longest, at = max(gaps) if gaps else (end, 0)
    after = stamps[at] if at < len(stamps) else None
    ended = next((line for t, line in events if after is not None and t >= after), "(exit)")
    return Timed(command, status, "\n".join(line for _, line in events), end, longest, ended,
                 stamps[0] if stamps else None, events)


def after(text: str, marker: str) -> tuple[str, str] | None:
    """The last printed line holding ``marker``, and what follows the marker on it."""
    lines = [x for x in text.splitlines() if marker in x]
    return (lines[-1].strip(), lines[-1].split(marker, 1)[1].strip()) if lines else None
