"""What the real-Futhark tests share: whether the compiler is installed, and a problem served
by a serial executor with the venv's ``futhark`` first on PATH (as ``make setup`` installs it)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from searchlab.core.problem import Problem
from searchlab.execution import SerialExecutor

VENV_BIN = Path(sys.executable).parent
HAVE_FUTHARK = shutil.which("futhark", path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}") is not None
P = TypeVar("P", bound=Problem)


@contextmanager
def served(make: Callable[[], P]) -> Iterator[tuple[P, SerialExecutor]]:
    """The problem ``make`` builds, started on a serial executor; skips the test without the compiler."""
    if not HAVE_FUTHARK:
        pytest.skip("the Futhark compiler is not installed: run make setup")
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{VENV_BIN}{os.pathsep}{old}"
    try:
        problem = make()
        executor = SerialExecutor()
        executor.start(problem)
        try:
            yield problem, executor
        finally:
            executor.close()
    finally:
        os.environ["PATH"] = old
