"""searchlab: compare search algorithms for autotuning on real kernels and devices."""

import sys
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the lazy names below, typed for a caller's type checker
    from searchlab.kernel import TuneResult, resume, tune

try:
    __version__ = version("searchlab")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+source"

__all__ = ["TuneResult", "__version__", "resume", "tune"]


def __getattr__(name: str) -> object:
    """``searchlab.tune``, ``searchlab.resume`` and ``searchlab.TuneResult`` (searchlab.kernel), imported when first
    used, so that ``import searchlab`` stays cheap."""
    if name in ("tune", "resume", "TuneResult"):
        import searchlab.kernel

        return getattr(searchlab.kernel, name)
    raise AttributeError(f"module 'searchlab' has no attribute {name!r}")

# what ``python -m searchlab`` needs before it can say anything (import names of pyproject's dependencies)
_NEEDED = ("hydra", "omegaconf", "numpy", "scipy", "yaml", "ray", "optuna", "pandas", "matplotlib", "futhark_server",
           "platformdirs", "filelock", "threadpoolctl")


def _refuse_foreign_python() -> None:
    """``python -m searchlab`` (or ``.study``, ``.export``) run by a Python without our dependencies -- the
    system's, or the one a bare ``python`` finds in the repository -- ends in one line that names the
    interpreter to use, exit status 2, instead of a ModuleNotFoundError or a half-working ``--help``
    (issue 46, item 1). Checked only while ``-m`` imports the package (``sys.argv[0] == "-m"``), so a
    library import stays as it was."""
    if sys.argv[:1] != ["-m"]:
        return
    import shlex
    from importlib.util import find_spec
    from pathlib import Path

    missing = [name for name in _NEEDED if find_spec(name) is None]
    if not missing:
        return
    argv = list(getattr(sys, "orig_argv", []))
    module = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else "searchlab"
    venv = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "python"
    use = (f"use {shlex.quote(str(venv))} -m {module}" if venv.exists()
           else f"run `make setup` and use .venv/bin/python -m {module}")
    print(f"searchlab: error: {sys.executable} lacks searchlab's dependencies ({', '.join(missing[:4])}"
          f"{', ...' if len(missing) > 4 else ''}): {use} (or `make setup` first)", file=sys.stderr, flush=True)
    raise SystemExit(2)


_refuse_foreign_python()
