"""``problem=dft``: the Cooley-Tukey breakdown grammar of paper 002 §4.3 on real FFT plans.

Grammar for n = 2^t: nonterminals DFT_m (m | n), terminals codelet_m (m <= max_codelet),
rules DFT_m -> DFT_k DFT_{m/k} for every power of two 1 < k < m, and DFT_m -> codelet_m.
A word is a ruletree; it is compiled into a numpy four-step plan (:mod:`._fft`), checked
against ``numpy.fft.fft`` (relative error < ``tolerance``, else FAILED(wrong_output)),
then timed: objective = pseudo-Mflop/s = 5·n·log2(n)/time (§5), the median of ``repeats``
samples after ``warmup`` calls, maximised; all samples are kept.

Sub-problems (capability ``subproblems``, for dynamic programming): the word of a DFT_m
ruletree (e.g. ``DFT_8(codelet_8)``) is accepted by the space and measured alone at size m,
with ``extra={"subproblem": "DFT_m"}`` so the run never takes it for its best.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

import numpy as np

from searchlab.adapters.grammar import _fft
from searchlab.adapters.grammar._grammar import Grammar, Production
from searchlab.adapters.grammar._tree import Tree, TreeGraph, symbol_of
from searchlab.errors import ConfigError, EvaluationError
from searchlab.problem import DeviceInfo, Problem
from searchlab.records import Config, Direction, FailureMode, Measurement


@dataclass
class DftConfig:
    _target_: str = "searchlab.adapters.grammar.DftProblem"
    size: int = 1024  # n, a power of two
    max_codelet: int = 32  # largest leaf DFT (a dense batched DFT_m); every size up to it is a codelet
    repeats: int = 7  # timed samples (median is the objective)
    warmup: int = 2
    min_sample_s: float = 0.0005  # each sample averages back-to-back calls lasting at least this
    batch: int = 1  # transforms per call
    tolerance: float = 1e-10  # relative error against numpy.fft (complex128)
    seed: int = 0  # input data


def _power_of_two(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 2 or value & (value - 1):
        raise ConfigError(f"problem.{name}={value!r}: must be a power of two >= 2")
    return value


def dft_grammar(n: int, max_codelet: int) -> Grammar:
    """The breakdown grammar of DFT_n (§4.3): start DFT_n, one nonterminal per size m | n."""
    sizes = [2**j for j in range(1, int(math.log2(n)) + 1)]
    codelets = [m for m in sizes if m <= max_codelet]
    rules = [Production((f"DFT_{m}",), (f"codelet_{m}",)) for m in codelets]
    rules += [Production((f"DFT_{m}",), (f"DFT_{k}", f"DFT_{m // k}")) for m in sizes for k in sizes if 1 < k < m]
    return Grammar(tuple(f"codelet_{m}" for m in codelets), tuple(f"DFT_{m}" for m in sizes),
                   tuple(rules), f"DFT_{n}")


def ruletree(tree: Tree) -> _fft.Spec:
    """The plan spec of a complete DFT derivation tree."""
    if isinstance(tree, str):
        raise EvaluationError(FailureMode.INVALID, f"{tree!r} is not expanded")
    kids = tree[1]
    if len(kids) == 1:
        return int(symbol_of(kids[0]).split("_")[1])
    return (ruletree(kids[0]), ruletree(kids[1]))


class DftProblem(Problem):
    name = "dft"
    direction = Direction.MAXIMIZE
    objective_name = "pseudo_mflops"
    capabilities = frozenset({"subproblems"})
    code_version = "1"

    def __init__(self, size: int = 1024, max_codelet: int = 32, repeats: int = 7, warmup: int = 2,
                 min_sample_s: float = 0.0005, batch: int = 1, tolerance: float = 1e-10, seed: int = 0) -> None:
        self.n = _power_of_two(size, "size")
        self.max_codelet = _power_of_two(max_codelet, "max_codelet")
        if repeats < 1 or warmup < 0 or batch < 1 or min_sample_s < 0 or not 0 < tolerance < 1:
            raise ConfigError(f"problem: need repeats >= 1, warmup >= 0, batch >= 1, min_sample_s >= 0 and "
                              f"0 < tolerance < 1; got repeats={repeats}, warmup={warmup}, batch={batch}, "
                              f"min_sample_s={min_sample_s}, tolerance={tolerance}")
        super().__init__(size=size, max_codelet=max_codelet, repeats=repeats, warmup=warmup,
                         min_sample_s=min_sample_s, batch=batch, tolerance=tolerance, seed=seed)
        self.repeats, self.warmup, self.min_sample_s = repeats, warmup, min_sample_s
        self.batch, self.tolerance, self.seed = batch, tolerance, seed
        self.graph = TreeGraph(dft_grammar(self.n, self.max_codelet), subwords=True)
        self._data: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def space(self) -> TreeGraph:
        return self.graph

    def setup(self, device: DeviceInfo) -> None:
        super().setup(device)
        self._data.clear()

    def _inputs(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        if m not in self._data:
            x = _fft.random_input(m, self.batch, self.seed)
            self._data[m] = (x, np.fft.fft(x, axis=-1))
        return self._data[m]

    def spec(self, config: Config) -> _fft.Spec:
        return ruletree(self.graph.word_of(config))  # type: ignore[arg-type]

    def evaluate(self, config: Config) -> Measurement:
        start = time.perf_counter()
        spec = self.spec(config)
        m = _fft.spec_size(spec)
        plan = _fft.build(spec)
        x, reference = self._inputs(m)
        error = _fft.relative_error(plan, x, reference)
        if not error < self.tolerance:
            raise EvaluationError(FailureMode.WRONG_OUTPUT,
                                  f"{_fft.describe(spec)}: relative error {error:.3g} >= tolerance {self.tolerance:g}")
        built = time.perf_counter()
        seconds = _fft.time_plan(plan, x, self.repeats, self.warmup, self.min_sample_s)
        median = statistics.median(seconds)
        extra: dict[str, object] = {"ruletree": _fft.describe(spec), "size": m}
        if m != self.n:
            extra["subproblem"] = f"DFT_{m}"
        return Measurement.ok(
            _fft.pseudo_mflops(m, self.batch, median),
            samples=tuple(_fft.pseudo_mflops(m, self.batch, s) for s in seconds),
            sensors={"time_median_s": median, "time_min_s": min(seconds), "relative_error": error,
                     "cv": statistics.pstdev(seconds) / statistics.fmean(seconds)},
            compile_s=built - start, run_s=time.perf_counter() - built, extra=extra)

    def describe_config(self, config: Config) -> str:
        spec = self.spec(config)
        return f"DFT_{_fft.spec_size(spec)} = {_fft.describe(spec)}"
