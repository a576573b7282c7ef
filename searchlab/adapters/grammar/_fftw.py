"""FFTW 3 as the outside reference (paper 002 Fig. 8(c)): our own small ctypes binding.

Debian's ``libfftw3-dev`` (installed by ``make setup``) gives ``libfftw3.so.3``. For one
size and planner flag (FFTW_MEASURE or FFTW_PATIENT, both DP-like searches over FFTW's own
plans) we record the planning time with wisdom forgotten first (FFTW's search time, to set
against our searchers'), check the plan against numpy.fft, and time ``fftw_execute`` with
the same clock, pinning and protocol as our plans: a C loop (``fl_run_fn`` in executor.c)
over a batch of about ``batch_s``, batches repeated by :func:`searchlab.core.measure.measure`
(each a :class:`~searchlab.core.measure.Batch`, so the protocol counts the batch's real time).

One protocol (issue 22, item 2): :func:`fftw_reference` and :func:`versus_fftw` take the
protocol, batch length, clock and pinning of a :class:`DftProblem` (``problem.min_runs`` …
``problem.batch_s``), so FFTW and our plans are measured alike. :func:`versus_fftw`
measures them *interleaved* (alternating rounds, the order flipped each round, so a slow
spell of a shared machine hits both) and reports the per-round ratio with the median's
95 % interval.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from searchlab.adapters.grammar import _clib
from searchlab.core.measure import Batch, MeasurementProtocol, Samples, measure, median_ci
from searchlab.core.records import Config
from searchlab.errors import ConfigError

if TYPE_CHECKING:
    from searchlab.adapters.grammar.dft import DftProblem

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
    for name in ("fftw_import_wisdom_from_filename", "fftw_export_wisdom_to_filename"):
        getattr(lib, name).restype, getattr(lib, name).argtypes = ctypes.c_int, [ctypes.c_char_p]
    return lib


class FftwPlan:
    """One FFTW plan of size ``n``: planned (wisdom forgotten, timed), checked, then timed
    on demand under a protocol. Use as a context manager (the plan is destroyed on exit).

    ``wisdom``: a file of FFTW wisdom to plan from (and to save to): the same FFTW plan in
    every run, a fixed yardstick for before/after comparisons of our library
    (``bench/dft_fixed.py``); FFTW_MEASURE otherwise picks between near-equal plans by noise."""

    def __init__(self, n: int, flag: str, seed: int = 0, max_codelet: int = 32, wisdom: str | None = None) -> None:
        if flag not in FLAGS:
            raise ConfigError(f"FFTW flag {flag!r}: must be one of {sorted(FLAGS)}")
        self.n, self.flag = n, flag
        self.fftw, self.ours = load(), _clib.load(max_codelet)
        self.x = _clib.aligned(np.zeros(n, dtype=np.complex128))  # as fftw_malloc allocates: 64-byte aligned,
        self.y = _clib.aligned(np.zeros(n, dtype=np.complex128))  # like our plans' arrays (dft.py)
        self.fftw.fftw_forget_wisdom()
        if wisdom is not None:
            self.fftw.fftw_import_wisdom_from_filename(wisdom.encode())
        start, cpu = time.perf_counter(), time.process_time()
        self.plan = self.fftw.fftw_plan_dft_1d(n, self.x.ctypes.data, self.y.ctypes.data, FORWARD, FLAGS[flag])
        self.plan_s, self.plan_cpu_s = time.perf_counter() - start, time.process_time() - cpu
        if not self.plan:
            raise ConfigError(f"FFTW could not plan n={n} with {flag}")
        if wisdom is not None:
            self.fftw.fftw_export_wisdom_to_filename(wisdom.encode())
        rng = np.random.default_rng([seed, n])
        self.x[:] = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        self.fftw.fftw_execute(self.plan)
        ref = np.fft.fft(self.x)
        self.relative_error = float(np.linalg.norm(self.y - ref) / np.linalg.norm(ref))
        self.batch = 1

    def __enter__(self) -> FftwPlan:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.plan:
            self.fftw.fftw_destroy_plan(self.plan)
            self.plan = None

    def measure(self, protocol: MeasurementProtocol, batch_s: float, clock: str = "cpu", pin: bool = True) -> Samples:
        """``fftw_execute`` timed under ``protocol``: batches of about ``batch_s`` in C."""
        from searchlab.adapters.grammar.dft import _Pinned

        self.ours.fl_set_clock(int(clock == "cpu"))
        execute = ctypes.cast(self.fftw.fftw_execute, ctypes.c_void_p).value
        with _Pinned(self.ours, pin):
            per_run = max(self.ours.fl_run_fn(execute, self.plan, 1), 1e-9)
            reps = self.batch = max(1, math.ceil(batch_s / per_run))
            return measure(lambda: Batch(self.ours.fl_run_fn(execute, self.plan, reps) / reps, reps), protocol)

    def mflops(self, seconds: float) -> float:
        return 5.0 * self.n * math.log2(self.n) / seconds / 1e6


def fftw_reference(n: int, flag: str, protocol: MeasurementProtocol, batch_s: float = 0.001,
                   seed: int = 0, max_codelet: int = 32, clock: str = "cpu", pin: bool = True) -> dict[str, Any]:
    """Plan time, relative error and pseudo-Mflop/s (median, 95 % interval) of FFTW's plan.
    Pass the protocol of the problem it is compared with (:func:`problem_reference`)."""
    with FftwPlan(n, flag, seed, max_codelet) as plan:
        samples = plan.measure(protocol, batch_s, clock, pin)
    lo, hi = samples.ci95
    return {"flag": flag, "plan_s": plan.plan_s, "plan_cpu_s": plan.plan_cpu_s, "relative_error": plan.relative_error,
            "mflops": plan.mflops(samples.median), "mflops_ci95": [plan.mflops(hi), plan.mflops(lo)],
            "runs": len(samples.values), "batch": plan.batch, "measured_s": samples.measured}


def problem_reference(problem: DftProblem, flag: str) -> dict[str, Any]:
    """:func:`fftw_reference` under ``problem``'s own protocol, batch length, clock and pinning."""
    return fftw_reference(problem.n, flag, problem.protocol, problem.batch_s, problem.seed, problem.max_codelet,
                          problem.clock, problem.pin)


def versus_fftw(problem: DftProblem, config: Config, flag: str = "measure", rounds: int = 7) -> dict[str, Any]:
    """Our plan ``config`` against FFTW's, measured interleaved under ``problem``'s protocol.

    Each round measures both once (our plan by ``problem.evaluate``, FFTW by
    :meth:`FftwPlan.measure`, the same protocol, batch length, clock and pinning), in an
    order flipped every round. Per round the ratio ours / FFTW of pseudo-Mflop/s (FFTW's
    median time / ours); reported: the median ratio and its distribution-free 95 % interval.
    """
    if rounds < 1:
        raise ConfigError(f"versus_fftw rounds={rounds}: must be >= 1")
    ours_s: list[float] = []
    fftw_s: list[float] = []
    with FftwPlan(problem.n, flag, problem.seed, problem.max_codelet) as plan:
        for r in range(rounds):
            for side in (("ours", "fftw") if r % 2 == 0 else ("fftw", "ours")):
                if side == "ours":
                    m = problem.evaluate(config)
                    if m.objective is None:
                        raise ConfigError(f"versus_fftw: the plan failed: {m.message}")
                    ours_s.append(float(m.sensors["time_median_s"]))
                else:
                    fftw_s.append(plan.measure(problem.protocol, problem.batch_s, problem.clock, problem.pin).median)
    ratios = [f / o for f, o in zip(fftw_s, ours_s)]
    return {"flag": flag, "rounds": rounds, "plan_s": plan.plan_s, "plan_cpu_s": plan.plan_cpu_s,
            "relative_error": plan.relative_error, "describe": problem.describe_config(config),
            "ours_mflops_median": plan.mflops(float(np.median(ours_s))),
            "fftw_mflops_median": plan.mflops(float(np.median(fftw_s))),
            "ours_over_fftw_median": float(np.median(ratios)), "ours_over_fftw_ci95": list(median_ci(ratios)),
            "ours_over_fftw_rounds": ratios,
            "protocol": {k: getattr(problem.protocol, k) for k in MeasurementProtocol.__dataclass_fields__}
            | {"batch_s": problem.batch_s, "clock": problem.clock, "pin": problem.pin}}
