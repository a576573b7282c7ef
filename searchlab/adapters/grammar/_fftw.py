"""FFTW 3 as the outside reference (paper 002 Fig. 8(c)): our own small ctypes binding.

Debian's ``libfftw3-dev`` (installed by ``make setup``) gives ``libfftw3.so.3``. For one
size and planner flag (FFTW_MEASURE or FFTW_PATIENT, both DP-like searches over FFTW's own
plans) we record the planning time with wisdom forgotten first (FFTW's search time, to set
against our searchers'), check the plan against numpy.fft, and time ``fftw_execute`` with
the same clock and protocol as our plans: a C loop (``fl_run_fn`` in executor.c) over a
batch, batches repeated by :func:`searchlab.measure.measure`, pinned to one core.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import os
import time
from typing import Any

import numpy as np

from searchlab.adapters.grammar import _clib
from searchlab.errors import ConfigError
from searchlab.measure import MeasurementProtocol, measure

FLAGS = {"estimate": 1 << 6, "measure": 0, "patient": 1 << 5}
FORWARD = -1


@functools.lru_cache(maxsize=1)
def load() -> ctypes.CDLL:
    name = ctypes.util.find_library("fftw3") or "libfftw3.so.3"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        raise ConfigError("FFTW 3 not found (libfftw3.so.3): install Debian's libfftw3-dev (`make setup` does)") from None
    lib.fftw_plan_dft_1d.restype = ctypes.c_void_p
    lib.fftw_plan_dft_1d.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint]
    lib.fftw_execute.restype, lib.fftw_execute.argtypes = None, [ctypes.c_void_p]
    lib.fftw_destroy_plan.restype, lib.fftw_destroy_plan.argtypes = None, [ctypes.c_void_p]
    lib.fftw_forget_wisdom.restype, lib.fftw_forget_wisdom.argtypes = None, []
    return lib


def fftw_reference(n: int, flag: str, protocol: MeasurementProtocol, batch_s: float = 0.001,
                   seed: int = 0, max_codelet: int = 32, clock: str = "cpu") -> dict[str, Any]:
    """Plan time, relative error and pseudo-Mflop/s (median, 95 % interval) of FFTW's plan."""
    fftw, ours = load(), _clib.load(max_codelet)
    x = np.zeros(n, dtype=np.complex128)
    y = np.zeros(n, dtype=np.complex128)
    fftw.fftw_forget_wisdom()
    start, cpu = time.perf_counter(), time.process_time()
    plan = fftw.fftw_plan_dft_1d(n, x.ctypes.data, y.ctypes.data, FORWARD, FLAGS[flag])
    plan_s, plan_cpu_s = time.perf_counter() - start, time.process_time() - cpu
    if not plan:
        raise ConfigError(f"FFTW could not plan n={n} with {flag}")
    try:
        rng = np.random.default_rng([seed, n])
        x[:] = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        fftw.fftw_execute(plan)
        ref = np.fft.fft(x)
        error = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
        ours.fl_set_clock(int(clock == "cpu"))
        execute = ctypes.cast(fftw.fftw_execute, ctypes.c_void_p).value
        saved = set(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {min(saved)})
        try:
            per_run = max(ours.fl_run_fn(execute, plan, 1), 1e-9)
            reps = max(1, math.ceil(batch_s / per_run))
            samples = measure(lambda: ours.fl_run_fn(execute, plan, reps) / reps, protocol)
        finally:
            os.sched_setaffinity(0, saved)
    finally:
        fftw.fftw_destroy_plan(plan)
    flops = 5.0 * n * math.log2(n)
    lo, hi = samples.ci95
    return {"flag": flag, "plan_s": plan_s, "plan_cpu_s": plan_cpu_s, "relative_error": error,
            "mflops": flops / samples.median / 1e6, "mflops_ci95": [flops / hi / 1e6, flops / lo / 1e6],
            "runs": len(samples.values), "batch": reps}
