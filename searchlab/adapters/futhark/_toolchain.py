"""The real Futhark compiler: finding it, compiling ``--server`` executables once, generating data.

The compiler comes from ``make setup`` (``tools/install_futhark.sh``, docs/futhark.md, linked
as ``.venv/bin/futhark``). Lookup: ``$FUTHARK`` if set (a compiler chosen explicitly, like
``CC``), else PATH, else the project's ``.venv/bin/futhark`` (so ``.venv/bin/python -m
searchlab`` works without an activated venv). Executables are
cached on disk by the hash of the source, the compiler version and the backend, under
``$SEARCHLAB_CACHE_DIR/futhark`` (default ``~/.cache/searchlab/futhark``, :mod:`searchlab.core.cache_dirs`), with a file lock so
that workers starting together compile once.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from searchlab.core.heartbeat import heartbeat
from searchlab.core.records import FailureMode
from searchlab.errors import ConfigError, EvaluationError

BACKENDS = ("opencl", "c", "multicore")
INSTALL_HINT = "install it with `make setup` (tools/install_futhark.sh puts it in .venv/bin)"


# `make setup` links the compiler into the project's venv: the running interpreter's bin directory.
PROJECT_FUTHARK = Path(sys.prefix) / "bin" / "futhark"


def futhark_binary() -> str:
    """Path of the ``futhark`` executable, or a one-line ConfigError saying how to install it."""
    explicit = os.environ.get("FUTHARK")
    if explicit:
        if shutil.which(explicit) is None:
            raise ConfigError(f"problem=futhark: FUTHARK={explicit} is not an executable Futhark compiler; {INSTALL_HINT}")
        return explicit
    found = shutil.which("futhark")
    if found is None and PROJECT_FUTHARK.exists() and os.access(PROJECT_FUTHARK, os.X_OK):
        found = str(PROJECT_FUTHARK)
    if found is None:
        raise ConfigError(f"problem=futhark: the Futhark compiler `futhark` is not on PATH; {INSTALL_HINT}")
    return found


@functools.cache
def futhark_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigError(f"problem=futhark: `{binary} --version` failed ({exc}); {INSTALL_HINT}") from None
    return out.splitlines()[0].strip() if out else "unknown"


def cache_root() -> Path:
    from searchlab.core.cache_dirs import cache_dir

    return cache_dir("futhark")


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    """One compilation of a program at a time across processes (filelock: released when its holder dies)."""
    from filelock import FileLock

    directory.mkdir(parents=True, exist_ok=True)
    with FileLock(str(directory / ".lock")):
        yield


def program_key(source: Path, backend: str, binary: str) -> str:
    digest = hashlib.sha256()
    digest.update(source.read_bytes())
    digest.update(f"\0{futhark_version(binary)}\0{backend}".encode())
    return digest.hexdigest()[:20]


def compile_server(source: Path, backend: str, binary: str) -> Path:
    """``futhark BACKEND --server`` once per (source, compiler version, backend)."""
    directory = cache_root() / f"{source.stem}-{program_key(source, backend, binary)}"
    exe = directory / f"{source.stem}.{backend}"
    with locked(directory):
        if exe.exists():
            return exe
        cmd = [binary, backend, "--server", "-o", str(exe), str(source)]
        with heartbeat("prepare", f"compiling {source.name} with futhark {backend} (once; cached after)"):
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=source.parent)
        if proc.returncode != 0:
            message = (proc.stderr or proc.stdout).strip().splitlines()
            raise EvaluationError(FailureMode.COMPILE,
                                  f"futhark {backend} {source.name} failed: {' | '.join(message[:4])}")
    return exe


def generate(binary: str, types: list[str], seed: int, out: Path) -> None:
    """``futhark dataset -b -s SEED -g T ...``: a ``random input`` dataset, written once."""
    if out.exists():
        return
    cmd = [binary, "dataset", "-b", "-s", str(seed)]
    for t in types:
        cmd += ["-g", t]
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        proc = subprocess.run(cmd, stdout=handle, stderr=subprocess.PIPE, text=False)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"futhark dataset {' '.join(types)}: {proc.stderr.decode(errors='replace').strip()}")
    tmp.replace(out)


@functools.cache
def opencl_is_pocl_only(vendors: str = "/etc/OpenCL/vendors") -> bool:
    """Whether every installed OpenCL implementation is pocl (read from the ICD loader's vendor
    files, ``$OCL_ICD_VENDORS`` first, without loading OpenCL). There, Futhark's ``--cache-file`` is
    pure cost: writing it makes pocl compile every kernel of the program (≈ 30 s for ``lud.fut`` at
    the first start, once in the driver's discovery and again in each worker, whose pinned device
    differs), while pocl's own kernel cache already serves every later server. Unsure: False."""
    folder = Path(os.environ.get("OCL_ICD_VENDORS") or vendors)
    try:
        names = [f.read_text().strip() for f in folder.glob("*.icd")] if folder.is_dir() else []
    except OSError:
        return False
    return bool(names) and all("pocl" in name.lower() for name in names)
