"""searchlab as a library in someone else's process (issue 36, item 7): it leaves matplotlib's backend alone, keeps
its caches under one root (``$SEARCHLAB_CACHE_DIR``, else platformdirs, which honours ``$XDG_CACHE_HOME``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def test_figures_leave_the_users_matplotlib_backend_alone() -> None:
    """The one figure stack (searchlab.core.figures: the study's, the run's) never picks a backend."""
    code = ("import matplotlib; matplotlib.use('svg'); import searchlab, searchlab.core.figures as p; "
            "fig, ax = p.axes('t', 'x', 'y'); ax.plot([1, 2], [3, 4]); png, svg = p.render(fig); "
            "assert png.startswith(b'\\x89PNG') and '<svg' in svg, png[:10]; print(matplotlib.get_backend())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in os.environ.items() if k != "MPLBACKEND"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "svg"  # was forced to Agg


def _roots() -> list[Path]:
    from searchlab.adapters.futhark._toolchain import cache_root
    from searchlab.adapters.grammar._clib import cache_dir
    from searchlab.adapters.knobs._compile_cache import CompileTimes

    return [cache_dir(), cache_root(), CompileTimes("device").dir]


def test_one_variable_moves_every_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SEARCHLAB_CACHE_DIR", str(tmp_path / "c"))
    assert _roots() == [tmp_path / "c" / "dft", tmp_path / "c" / "futhark", tmp_path / "c" / "compile_times"]


def test_xdg_cache_home_is_honoured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if sys.platform != "linux":
        pytest.skip("XDG_CACHE_HOME is the Linux convention")
    monkeypatch.delenv("SEARCHLAB_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert all(p.parent == tmp_path / "xdg" / "searchlab" for p in _roots())
