"""``problem=dft``: DFT ruletrees of our C library (paper 002 §4.1-§4.3, §5), timed in C.

A word of the library's grammar (:mod:`._dftgrammar`) is planned into C nodes
(:mod:`._clib`, microseconds once its twiddle tables exist), run once and checked against
``numpy.fft`` (relative error < ``tolerance``, else FAILED(wrong_output)), then timed by
the shared protocol (:func:`searchlab.core.measure.measure`): each run is one C call that times
a batch of back-to-back executions lasting about ``batch_s`` with its own clock, so no
Python call is inside a timed region. The run returns a :class:`~searchlab.core.measure.Batch`
(one execution's time, kept as the sample, and the batch's length), so ``min_time_s``
counts the time the batches really took (sensor ``measured_s``); before, a run counted as
one execution and every measurement ran to ``max_runs`` (issue 22, item 1). FFTW 3 is
measured under the same protocol (:mod:`._fftw`: ``problem_reference``, ``versus_fftw``).
Objective: pseudo-Mflop/s = 5·n·log2(n)/median time (§5), maximised; every batch's value
is kept as a sample. Timing pins the process to its first allowed core (the OpenMP helper
thread to the second), restored afterwards. The clock is the timing thread's CPU time by
default (``clock=cpu``: on a machine shared by several jobs, elapsed time mostly measures
the scheduler); OpenMP plans (``threads=2``) need ``clock=wall``.

Sub-problems (capability ``subproblems``, for DP as FFTW/Spiral do it, §4.2) are measured
in the context a parent split gives them (``subproblem_context=strided``, default):

- DFT_m, m < n: the inner stage I_{n/m} ⊗ DFT_m of a top split, i.e. n/m transforms
  reading at stride n/m over the whole n-point input (FFTW times sub-problems with their
  strides); ``standalone``: one DFT_m on m contiguous points (Spiral's DP).
- TW_k: the in-place stage (DFT_k ⊗ I_{n/k})·T^n_{n/k} over n points (``standalone``:
  over 2k points); its pseudo-flops are 5·n·log2(k). The stage grows its data by up to k
  per run, so its input starts at 1e-150 and a batch is capped at 250/log10(k) runs
  (data reset between batches, outside the timing).

Each such measurement is an evaluation (counted, and its time charged) with
``extra={"subproblem": name}``, so a run never takes it for its best.
"""

from __future__ import annotations

import math
import os
import time
from collections import OrderedDict

import numpy as np

import searchlab.adapters.grammar._clib as _clib
import searchlab.adapters.grammar._fft as _fft
from searchlab.adapters.grammar._dftgrammar import dft_grammar, ruletree
from searchlab.adapters.grammar._tree import TreeGraph
from searchlab.core.measure import Batch, MeasurementProtocol, measure
from searchlab.core.problem import DeviceInfo, Problem
from searchlab.core.records import Config, Direction, FailureMode, Measurement
from searchlab.errors import ConfigError, EvaluationError

__all__ = ["PROTOCOL", "SEARCH_BATCH_S", "SEARCH_PROTOCOL", "DftProblem", "dft_grammar", "ruletree"]


# The protocol before issue 21 (the flat problem.min_runs ... problem.warmup options).
PROTOCOL = MeasurementProtocol(min_runs=5, max_runs=30, min_time_s=0.01, target_rel_ci=0.02, warmup=1)
# The cheaper protocol plans are measured under *during a search* when searchers are compared on one measured
# table (paper 002 §5: every plan measured once, replayed to every run): 3-10 runs, 3 ms, a 3 % interval, C
# batches of 0.5 ms. Declared once, here: the DFT benchmarks (bench/common.py) and the live ``dft:N`` training
# problems of ``problem=searcher_settings`` (searchlab/tuning/_live.py, whose cache records it) both use it.
SEARCH_PROTOCOL = MeasurementProtocol(min_runs=3, max_runs=10, min_time_s=0.003, target_rel_ci=0.03, warmup=1)
SEARCH_BATCH_S = 0.0005


def _integer(value: object, name: str, top: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= top:
        raise ConfigError(f"problem.{name}={value!r}: must be an integer in [2, {top}]")
    return value


BUFFERS = 10  # complex128 arrays of size·batch alive at once: inputs and references of every sub-size, plan temporaries


def machine_memory() -> int:
    """Bytes of memory this process may use: physical memory, or the cgroup's limit if lower."""
    import os

    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        limit = open("/sys/fs/cgroup/memory.max").read().strip()
        if limit.isdigit():
            total = min(total, int(limit))
    except OSError:
        pass
    return int(total)


def _gb(n: float) -> str:
    return f"{n / 1e9:.3g} GB"


def check_memory(n: int, batch: int, memory: int | None = None) -> None:
    """Refuse sizes whose buffers cannot fit the machine (issue 10, item 3): without this,
    ``problem.size=2**40`` grows until the kernel kills the process."""
    memory = machine_memory() if memory is None else memory
    need = BUFFERS * 16 * n * batch
    if need > memory:
        largest = 2 ** max(1, int(math.log2(max(2, memory // (BUFFERS * 16 * batch)))))
        raise ConfigError(f"problem.size={n} with problem.batch={batch} needs about {_gb(need)} for its buffers "
                          f"({BUFFERS} complex128 arrays of size x batch); this machine has {_gb(memory)} of memory: "
                          f"choose problem.size <= {largest}")


class DftProblem(Problem):
    name = "dft"
    direction = Direction.MAXIMIZE
    objective_name = "pseudo_mflops"
    capabilities = frozenset({"subproblems"})
    code_version = "3"  # 3: the library of 2026-11-26 and 7-smooth Bluestein lengths; older cached timings are not reused

    def __init__(self,
                 size: int = 1024,  # n, any integer 2 .. 2^22 (mixed radix, Good-Thomas, Rader, Bluestein)
                 max_codelet: int = 32,  # largest generated codelet (every 13-smooth size up to it), 2 .. 64
                 threads: int = 1,  # 2: the top split may also run over 2 OpenMP threads (needs clock=wall)
                 clock: str = "cpu",  # cpu: the timing thread's CPU time (robust to a shared machine); wall
                 subproblem_context: str = "strided",  # DP's sub-problems: strided (in context) or standalone
                 measure: MeasurementProtocol = PROTOCOL,  # the measurement protocol, runs of one C batch each
                 batch_s: float = 0.001,  # each run times back-to-back executions lasting about this long, in C
                 pin: bool = True,  # pin to one core while timing (the OpenMP helper to a second)
                 tolerance: float = 1e-10,  # largest relative error against numpy.fft (complex128)
                 seed: int = 0,  # the input data
                 scalar_codelets: bool = True,  # false: only the vector codelet rules (n1v, t1v), a smaller space
                 ) -> None:
        self.n = _integer(size, "size", 2**22)
        check_memory(self.n, 1)
        self.max_codelet = _integer(max_codelet, "max_codelet", 64)
        if subproblem_context not in ("strided", "standalone"):
            raise ConfigError(f"problem.subproblem_context={subproblem_context!r}: must be 'strided' or 'standalone'")
        if clock not in ("cpu", "wall"):
            raise ConfigError(f"problem.clock={clock!r}: must be 'cpu' (thread CPU time) or 'wall'")
        if threads > 1 and clock != "wall":
            raise ConfigError(f"problem.threads={threads} needs problem.clock=wall: one thread's CPU time cannot "
                              "time a plan that runs on two")
        if not isinstance(scalar_codelets, bool):
            raise ConfigError(f"problem.scalar_codelets={scalar_codelets!r}: must be true or false")
        if not (isinstance(threads, int) and threads >= 1 and batch_s >= 0 and 0 < tolerance < 1):
            raise ConfigError(f"problem: need threads >= 1, batch_s >= 0 and 0 < tolerance < 1; got threads={threads}, "
                              f"batch_s={batch_s}, tolerance={tolerance}")
        self.protocol = measure
        super().__init__()
        self.context, self.batch_s, self.pin, self.clock = subproblem_context, batch_s, pin, clock
        self.tolerance, self.seed = tolerance, seed
        self.graph = TreeGraph(dft_grammar(self.n, self.max_codelet, threads, scalar_codelets),
                                subwords=True)
        self.twiddles = _clib.Twiddles()
        self._inputs: dict[int, np.ndarray] = {}
        self._data: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()

    @property
    def space(self) -> TreeGraph:
        return self.graph

    @property
    def noisy(self) -> bool:
        """Wall time (``clock=wall``) moves with the machine's load: confirmed by re-measuring
        (issue 46, item 3). The thread's CPU time is kept exact enough for the search alone, as before."""
        return self.clock == "wall"

    def setup(self, device: DeviceInfo) -> None:
        super().setup(device)
        _clib.load(self.max_codelet)  # compile (or load the cached build) once per worker
        self._data.clear()
        self._inputs.clear()

    def spec(self, config: Config) -> _fft.Spec | _fft.TwSpec:
        return ruletree(self.graph.word_of(config))  # type: ignore[arg-type]

    # -- contexts: where a (sub-)plan runs, its input and numpy's answer ---------------------
    def _extent(self, spec: _fft.Spec | _fft.TwSpec) -> int:
        """Points the context touches: n in the strided context, else the plan's own size."""
        size = spec.size
        if size == self.n or (self.context == "strided" and self.n % size == 0):
            return self.n
        return 2 * size if isinstance(spec, _fft.Twiddle) else size

    def _reference(self, spec: _fft.Spec | _fft.TwSpec, extent: int) -> tuple[np.ndarray, np.ndarray]:
        """Input (one per extent) and numpy's answer for a plan in its context; answers are
        kept least-recently-used up to 512 MB (at 2^20 each is 16 MB)."""
        kind = "tw" if isinstance(spec, _fft.Twiddle) else "dft"
        key = (f"{kind}{spec.size}", extent)
        if extent not in self._inputs:
            self._inputs[extent] = _clib.aligned(_fft.random_input(extent, 1, self.seed)[0])
        x = self._inputs[extent]
        if key in self._data:
            self._data.move_to_end(key)
            return x, self._data[key]
        k = spec.size
        if kind == "dft":  # I_v ⊗ DFT_k on x read at stride v = extent/k: ref[l·k + j]
            ref = np.fft.fft(x.reshape(k, extent // k).T, axis=1).ravel()
        else:  # (DFT_k ⊗ I_m) T^extent_m in place: column j of the k x m view, scaled, transformed
            m = extent // k
            scale = np.exp(-2j * np.pi * np.outer(np.arange(k), np.arange(m)) / extent)
            ref = np.fft.fft(x.reshape(k, m) * scale, axis=0).ravel()
        self._data[key] = ref
        while sum(r.nbytes for r in self._data.values()) > 512 << 20 and len(self._data) > 1:
            self._data.popitem(last=False)
        return x, ref

    def _runner(self, plan: _clib.Plan, spec: _fft.Spec | _fft.TwSpec, extent: int, x: np.ndarray,
                y: np.ndarray) -> tuple[object, int]:
        """A function (reps, data) -> seconds running the plan in its context, and the most
        runs a batch may hold."""
        k = spec.size
        if isinstance(spec, _fft.Twiddle):
            table = self.twiddles(extent, k)
            return (lambda reps, src: plan.run_stage(y, src, table, k, reps)), max(1, int(250 / math.log10(max(k, 2))))
        v = extent // k
        return (lambda reps, src: plan.run_dft(src, y, (v, 1), (v, 1, k), reps)), 1 << 40

    def _check(self, run: object, x: np.ndarray, y: np.ndarray, ref: np.ndarray, label: str) -> float:
        run(1, x)  # type: ignore[operator]
        error = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
        if not error < self.tolerance:
            raise EvaluationError(FailureMode.WRONG_OUTPUT, f"{label}: relative error {error:.3g} >= tolerance "
                                                            f"{self.tolerance:g} against numpy.fft")
        return error

    def evaluate(self, config: Config) -> Measurement:
        start = time.perf_counter()
        spec = self.spec(config)
        label = _fft.describe(spec)
        plan = _clib.Plan(_clib.load(self.max_codelet), spec, self.twiddles)
        planned = time.perf_counter()
        extent = self._extent(spec)
        x, ref = self._reference(spec, extent)
        y = _clib.aligned(np.zeros_like(x))
        run, cap = self._runner(plan, spec, extent, x, y)
        plan.lib.fl_set_clock(int(self.clock == "cpu"))
        with _Pinned(plan.lib, self.pin):
            error = self._check(run, x, y, ref, label)
            data = _clib.aligned(x * 1e-150) if isinstance(spec, _fft.Twiddle) else x
            per_run = max(run(1, data), 1e-9)  # type: ignore[operator]
            reps = int(min(cap, max(1, math.ceil(self.batch_s / per_run))))
            samples = measure(lambda: Batch(run(reps, data) / reps, reps), self.protocol)  # type: ignore[operator]
        plan.close()
        flops = 5.0 * extent * math.log2(spec.size)
        extra: dict[str, object] = {"ruletree": label, "size": spec.size, "batch": reps}
        symbol = str(config["word"]).split("(", 1)[0]
        if symbol != self.graph.root:
            extra |= {"subproblem": symbol, "context": self.context}
        return Measurement.ok(
            flops / samples.median / 1e6, samples=tuple(flops / s / 1e6 for s in samples.values),
            sensors={**samples.sensors(), "time_median_s": samples.median, "relative_error": error,
                     "plan_s": planned - start, "measured_s": samples.measured},
            compile_s=planned - start, run_s=time.perf_counter() - planned, extra=extra)

    def describe_config(self, config: Config) -> str:
        spec = self.spec(config)
        return f"{str(config['word']).split('(', 1)[0]} = {_fft.describe(spec)}"


class _Pinned:
    """Pin this thread to its first allowed core (OpenMP's second thread to the next one)."""

    def __init__(self, lib: object, enabled: bool) -> None:
        self.lib, self.enabled = lib, enabled and hasattr(os, "sched_setaffinity")
        self.saved: set[int] = set()

    def __enter__(self) -> None:
        if not self.enabled:
            return
        self.saved = set(os.sched_getaffinity(0))
        cores = sorted(self.saved)
        os.sched_setaffinity(0, {cores[0]})
        self.lib.fl_set_cpus(cores[0], cores[1] if len(cores) > 1 else cores[0])  # type: ignore[attr-defined]

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            os.sched_setaffinity(0, self.saved)
