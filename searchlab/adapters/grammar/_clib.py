"""The C DFT library: compiled once per machine, planned from ruletrees, timed in C.

Build: the generated codelets (:mod:`._codegen`) plus ``executor.c`` are compiled with
the system ``gcc -O3 -march=native -fopenmp`` into a shared object cached under
``$SEARCHLAB_CACHE_DIR/dft`` (default ``~/.cache/searchlab/dft``, :mod:`searchlab.core.cache_dirs`) by the hash of the source, the
flags and ``gcc --version``: a second process, or a second run, loads it in milliseconds.

Plan: a ruletree (:mod:`._fft` specs) becomes a tree of C nodes (function pointers and
sizes) through a few ctypes calls; the strides are derived while executing (readdressing,
as FFTW 2.x does). Twiddle tables are the only O(n) part of planning; they are numpy
arrays cached per (n, k) and shared by every plan that splits DFT_n as k·m, so planning a
new ruletree costs microseconds once its splits have been seen.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np

import searchlab.adapters.grammar._codegen as _codegen
import searchlab.adapters.grammar._convolve as _convolve
from searchlab.adapters.grammar._fft import Bluestein, Leaf, Pfa, Rader, Spec, Split, Twiddle, TwSpec, describe
from searchlab.errors import ConfigError

EXECUTOR = Path(__file__).with_name("executor.c")
FLAGS = ("-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-std=gnu11")
KIND = {"n1": 0, "n1v": 1, "t1": 10, "t1v": 11}
_P = ctypes.c_void_p
_L = ctypes.c_long


def cache_dir() -> Path:
    from searchlab.core.cache_dirs import cache_dir as root

    return root("dft")


def _compiler_version(cc: str) -> str:
    try:
        return subprocess.run([cc, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        raise ConfigError(f"problem=dft needs a C compiler: {cc!r} did not run (install gcc; `make setup` does)") from None


def build(max_codelet: int, cc: str = "gcc") -> Path:
    """The shared object for codelets up to ``max_codelet`` (compiled if not cached)."""
    source = _codegen.library_source(max_codelet) + EXECUTOR.read_text()
    digest = hashlib.sha256("\0".join([source, " ".join(FLAGS), _compiler_version(cc)]).encode()).hexdigest()[:16]
    target = cache_dir() / f"dftlib-{max_codelet}-{digest}.so"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    c_file = target.with_suffix(f".{os.getpid()}.c")
    c_file.write_text(source)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    done = subprocess.run([shutil.which(cc) or cc, *FLAGS, "-o", str(tmp), str(c_file), "-lm"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        c_file.unlink(missing_ok=True)
        raise ConfigError(f"problem=dft: compiling the DFT library failed: {done.stderr.strip()[:400]}")
    os.replace(tmp, target)  # atomic: concurrent builders agree
    c_file.replace(target.with_suffix(".c"))
    return target


@functools.lru_cache(maxsize=4)
def load(max_codelet: int) -> ctypes.CDLL:
    return open_library(build(max_codelet))


def open_library(path: Path) -> ctypes.CDLL:
    """A compiled library file, its entry points typed (:func:`load` opens this tree's; bench/dft_ab.py
    opens other builds of it beside this one)."""
    lib = ctypes.CDLL(str(path))
    lib.fl_leaf.restype, lib.fl_leaf.argtypes = _P, [ctypes.c_int, _L]
    lib.fl_buffered.restype, lib.fl_buffered.argtypes = _P, [_P]
    lib.fl_split.restype, lib.fl_split.argtypes = _P, [_P, _P, _P, ctypes.c_int, _L]
    lib.fl_set_options.restype, lib.fl_set_options.argtypes = None, [_L, _L, ctypes.c_int]
    lib.fl_pfa.restype, lib.fl_pfa.argtypes = _P, [_P, _P, _P, _P]
    lib.fl_rader.restype, lib.fl_rader.argtypes = _P, [_P, _L, _P, _P, _P]
    lib.fl_bluestein.restype, lib.fl_bluestein.argtypes = _P, [_P, _L, _P, _P]
    lib.fl_destroy.restype, lib.fl_destroy.argtypes = None, [_P]
    lib.fl_set_clock.restype, lib.fl_set_clock.argtypes = None, [ctypes.c_int]
    lib.fl_set_cpus.restype, lib.fl_set_cpus.argtypes = None, [ctypes.c_int, ctypes.c_int]
    lib.fl_run_dft.restype, lib.fl_run_dft.argtypes = ctypes.c_double, [_P, _P, _P, _L, _L, _L, _L, _L, _L]
    lib.fl_run_tws.restype, lib.fl_run_tws.argtypes = ctypes.c_double, [_P, _P, _P, _L, _P, _L, _L, _L, _L, _L]
    lib.fl_run_fn.restype, lib.fl_run_fn.argtypes = ctypes.c_double, [_P, _P, _L]
    return lib


ALIGN = 64  # bytes: every array the library or its benchmarks allocate starts on a cache line


def aligned(like: np.ndarray) -> np.ndarray:
    """A copy of ``like`` whose data starts on a 64-byte boundary, as ``fftw_malloc`` gives.
    numpy's large arrays start 16 bytes past a page (glibc's mmap header): every 256-bit
    access then straddles half the cache lines, and input and output alias in 4 kB pages.
    Measured on fixed plans (bench/dft_ab.py): 2^16 hand plan 8.0 -> 14.3 Gflop/s aligned."""
    raw = np.empty(like.nbytes + ALIGN, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGN
    out = raw[start:start + like.nbytes].view(like.dtype).reshape(like.shape)
    out[...] = like
    return out


COMPACT_BYTES = [256 << 10]  # a split's full twiddle table above this many bytes is compacted


def compact_block(k: int, m: int) -> int:
    """B for compact twiddles (executor.c ``stage``), or 0 for the full table: the full table
    (k-1)·m complex streams from memory beside the data once it outgrows the caches."""
    if 16 * (k - 1) * m <= COMPACT_BYTES[0]:
        return 0
    fits = [b for b in range(2, 65) if m % b == 0 and 16 * (k - 1) * b <= 16 << 10]
    return max(fits, default=0)


class Twiddles:
    """w_n^{ij} tables, W[(i-1)·m + j] for 1 <= i < k, j < m, cached per (n, k) up to a
    byte budget (least recently used out); gathered from one table of n-th roots."""

    def __init__(self, max_bytes: int = 512 << 20) -> None:
        self.max_bytes = max_bytes
        self._tables: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        self._roots: dict[int, np.ndarray] = {}
        self._other: dict[tuple[object, ...], tuple[np.ndarray, ...]] = {}

    def extra(self, key: tuple[object, ...], make: Callable[[], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
        """Another table of the plan (Good-Thomas maps, Rader / Bluestein kernels), cached
        under the same budget as the twiddles."""
        if key not in self._other:
            self._other[key] = tuple(aligned(a) for a in make())
        return self._other[key]

    def compact(self, n: int, k: int, block: int) -> np.ndarray:
        """The compact table of a split: lo[(i-1)·B + l] = w_n^{i·l} (l < B), then
        hi[(i-1)·m/B + h] = w_n^{i·h·B} (h < m/B), so w_n^{i·j} = hi·lo for j = h·B + l."""
        key = (n, -k * 1000 - block)
        if key not in self._tables:
            roots = self._root_table(n)
            i = np.arange(1, k)[:, None]
            lo = roots[(i * np.arange(block)[None, :]) % n].ravel()
            hi = roots[(i * np.arange(n // k // block)[None, :] * block) % n].ravel()
            self._tables[key] = aligned(np.concatenate([lo, hi]))
        self._tables.move_to_end(key)
        return self._tables[key]

    def _root_table(self, n: int) -> np.ndarray:
        if n not in self._roots:
            self._roots[n] = np.exp(-2j * np.pi * np.arange(n) / n)
        return self._roots[n]

    def __call__(self, n: int, k: int) -> np.ndarray:
        key = (n, k)
        if key in self._tables:
            self._tables.move_to_end(key)
            return self._tables[key]
        m = n // k
        table = aligned(self._root_table(n)[(np.arange(1, k)[:, None] * np.arange(m)[None, :]) % n])
        self._tables[key] = table
        while sum(t.nbytes for t in self._tables.values()) > self.max_bytes and len(self._tables) > 1:
            self._tables.popitem(last=False)
        return table


class Plan:
    """A C plan of a ruletree; keeps the twiddle arrays it points to alive."""

    def __init__(self, lib: ctypes.CDLL, spec: Spec | TwSpec, twiddles: Twiddles) -> None:
        self.lib = lib
        self._keep: list[np.ndarray] = []
        self.handle = 0
        self.handle = self._build(spec, twiddles)

    def _build(self, spec: Spec | TwSpec, twiddles: Twiddles) -> int:
        if isinstance(spec, Leaf):
            handle = self.lib.fl_leaf(KIND[spec.kind], spec.size)
        elif isinstance(spec, Twiddle):
            handle = (self.lib.fl_buffered(self._build(spec.child, twiddles)) if spec.child is not None
                      else self.lib.fl_leaf(KIND[spec.kind], spec.size))
        elif isinstance(spec, Pfa | Rader | Bluestein) and not _convolve.valid(spec):
            raise ConfigError(f"{describe(spec)} is no plan: PFA needs coprime factors, Rader a prime p and "
                              "DFT_{p-1}, Bluestein a convolution at least as long as the transform")
        elif isinstance(spec, Pfa):
            maps = self._tables(twiddles, ("pfa", spec.a.size, spec.b.size),
                                lambda: _convolve.pfa_maps(spec.a.size, spec.b.size))
            handle = self.lib.fl_pfa(self._build(spec.a, twiddles), self._build(spec.b, twiddles), *maps)
        elif isinstance(spec, Rader):
            tables = self._tables(twiddles, ("rader", spec.size), lambda: _convolve.rader_tables(spec.size))
            handle = self.lib.fl_rader(self._build(spec.child, twiddles), spec.size, *tables)
        elif isinstance(spec, Bluestein):
            tables = self._tables(twiddles, ("blue", spec.size, spec.child.size),
                                  lambda: _convolve.bluestein_tables(spec.size, spec.child.size))
            handle = self.lib.fl_bluestein(self._build(spec.child, twiddles), spec.size, *tables)
        else:
            assert isinstance(spec, Split)
            block = compact_block(spec.tw.size, spec.dft.size)
            table = twiddles.compact(spec.size, spec.tw.size, block) if block else twiddles(spec.size, spec.tw.size)
            self._keep.append(table)
            handle = self.lib.fl_split(self._build(spec.tw, twiddles), self._build(spec.dft, twiddles),
                                       table.ctypes.data, int(spec.parallel), block)
        if not handle:
            raise ConfigError(f"the DFT library has no codelet for {spec}")
        return int(handle)

    def _tables(self, twiddles: Twiddles, key: tuple[object, ...],
                make: Callable[[], tuple[np.ndarray, ...]]) -> list[int]:
        arrays = twiddles.extra(key, make)
        self._keep.extend(arrays)
        return [int(a.ctypes.data) for a in arrays]

    def run_dft(self, x: np.ndarray, y: np.ndarray, stride: tuple[int, int], loop: tuple[int, int, int],
                reps: int) -> float:
        """Seconds for ``reps`` runs of ``loop = (v, ivs, ovs)`` transforms, strides (is, os)."""
        return float(self.lib.fl_run_dft(self.handle, x.ctypes.data, y.ctypes.data, *stride, *loop, reps))

    def run_stage(self, y: np.ndarray, src: np.ndarray, table: np.ndarray, k: int, reps: int) -> float:
        """Seconds for ``reps`` runs of the in-place stage (DFT_k ⊗ I_m)·T^n_m on y (n = y.size)."""
        m = y.size // k
        return float(self.lib.fl_run_tws(self.handle, y.ctypes.data, src.ctypes.data, 2 * y.size,
                                         table.ctypes.data, m, m, m, 1, reps))

    def close(self) -> None:
        if self.handle:
            self.lib.fl_destroy(self.handle)
            self.handle = 0

    def __del__(self) -> None:
        self.close()
