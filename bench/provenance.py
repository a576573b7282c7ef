"""Where, when and how a benchmark ran: the ``provenance`` block of every result (bench/harness.py).

Commit (and whether the tree had uncommitted changes), the command that reproduces the result, the machine
(host, CPU model and count, the CPUs this process may use, memory, OS, Python), the load average before and
after (the machine is shared: a number measured under load says so), the versions of searchlab and of the
reference tools, and every seed the benchmark used.
"""

from __future__ import annotations

import os
import platform
import shlex
import socket
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent


def git(*args: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def machine() -> dict[str, Any]:
    """Where it ran: host, CPU model and count, memory, OS, Python."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        mem_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        pass
    return {"host": socket.gethostname(), "cpu": model, "cpus": os.cpu_count(),
            "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "memory_gib": mem_gib, "os": platform.platform(), "python": platform.python_version()}


def versions() -> dict[str, str]:
    """searchlab's recorded package versions, and the reference tools when installed."""
    from importlib.metadata import PackageNotFoundError, version

    from searchlab.core.store import package_versions

    found = dict(package_versions())
    for extra in ("kernel_tuner", "autotuning_methodology"):
        try:
            found[extra] = version(extra)
        except PackageNotFoundError:
            pass
    return found


def provenance(name: str, seeds: Sequence[int], argv: Sequence[str], started: float, wall: float,
               load_start: list[float]) -> dict[str, Any]:
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "command": " ".join(shlex.quote(a) for a in ("python", "-m", "bench", name, *argv)),
            "started": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
            "wall_s": round(wall, 3), "machine": machine(), "load_average_start": load_start,
            "load_average_end": load_average(), "versions": versions(), "seeds": sorted(set(seeds))}
