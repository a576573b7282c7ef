"""What several benchmarks share: the one helper package a benchmark may import besides the harness.

Here: data paths, running the product's own command lines as a user does, a one-core load, what a threshold
tuner ends on. :mod:`bench.common.stats`: the small statistics the benchmarks report with (bootstrap,
order-statistic and censored intervals, paired tests). :mod:`bench.common.dft`: the measured DFT table that
the grammar benchmarks compare searchers on. Nothing here imports a benchmark module (no cycle).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"
SHARED_DATA = REPO.parent / "shared" / "data"
KT_DATA = SHARED_DATA / "kernel_tuner"  # the four convolution tables (Kernel Tuner caches) every table bench uses


def kt_tables() -> list[Path]:
    """The shared Kernel Tuner caches, sorted (convolution on A100, A4000, MI250X, W6600)."""
    return sorted(KT_DATA.glob("*.json.gz"))


# -- the product's command lines ------------------------------------------------------------------------------


def searchlab_cli(args: Sequence[str], *, module: str = "searchlab", cwd: Path = REPO, timeout: float | None = None,
                  env: dict[str, str] | None = None, check: bool = True) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m searchlab ARGS`` (or another module) in a fresh interpreter, as a user runs it: the
    completed process and its wall seconds. A failure is one line naming the command (``check``)."""
    command = [sys.executable, "-m", module, *args]
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - started
    if check and proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise SystemExit(f"{' '.join(command[1:])}: exit {proc.returncode}: {' / '.join(tail)}")
    return proc, seconds


def busy_core(core: int | None) -> subprocess.Popen[bytes]:
    """``yes > /dev/null``, pinned to ``core`` (None: wherever the scheduler puts it): a one-core load."""
    pin = ["taskset", "-c", str(core)] if core is not None else []
    return subprocess.Popen([*pin, "yes"], stdout=subprocess.DEVNULL)


def last_core() -> int:
    return sorted(os.sched_getaffinity(0))[-1]


def futhark_on_path() -> None:
    """The project's Futhark compiler (``make setup`` installs it into .venv/bin) before any other on PATH, as
    the problems find it; ``futhark bench`` and ``futhark autotune`` are run by that name."""
    os.environ["PATH"] = f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"


def tuned_config(outcome: Any) -> dict[str, int]:
    """What a threshold tuner ends on: its final check's configuration, else the best found ({}: none)."""
    finals = [r for r in outcome.results if r.candidate.meta.get("final") and r.ok]
    best = finals[-1] if finals else outcome.best
    return {} if best is None else {str(k): int(v) for k, v in best.config.items()}
