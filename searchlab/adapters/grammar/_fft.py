"""Executable FFT plans from DFT ruletrees, in numpy (paper 002 §4.1, equation 1).

A ruletree is a codelet size ``m`` (a leaf: a batched dense DFT_m, ``X @ F_m``) or a
Cooley-Tukey split ``(left, right)`` of DFT_n, n = k·m with k = size(left), m = size(right):

    DFT_n = (DFT_k ⊗ I_m) · T^n_m · (I_k ⊗ DFT_m) · L^n_k

composed as a four-step plan on a batch of rows: the stride permutation L^n_k (a
transposing copy), k·batch inner DFT_m on contiguous rows, the twiddle diagonal T^n_m,
a transposing copy and m·batch outer DFT_k, and a final transposing copy. Different
ruletrees do the same arithmetic in different shapes and memory passes, hence their
different run times.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Union

import numpy as np

Spec = Union[int, tuple["Spec", "Spec"]]
Plan = Callable[[np.ndarray], np.ndarray]


def spec_size(spec: Spec) -> int:
    return spec if isinstance(spec, int) else spec_size(spec[0]) * spec_size(spec[1])


def describe(spec: Spec) -> str:
    """``CT(CT(8, 8), 64)``: a number is a codelet, CT(k, m) splits DFT_{k·m}."""
    return str(spec) if isinstance(spec, int) else f"CT({describe(spec[0])}, {describe(spec[1])})"


def dft_matrix(m: int) -> np.ndarray:
    j = np.arange(m)
    return np.exp(-2j * np.pi * np.outer(j, j) / m)


class Codelet:
    """A batched small DFT: rows of X times the (symmetric) DFT_m matrix."""

    def __init__(self, m: int) -> None:
        self.size = m
        self.matrix = dft_matrix(m)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return x @ self.matrix


class CooleyTukey:
    """DFT_{k·m} on rows of X from DFT_k (outer) and DFT_m (inner) plans, four-step."""

    def __init__(self, outer: Plan, inner: Plan, k: int, m: int) -> None:
        self.outer, self.inner, self.k, self.m = outer, inner, k, m
        self.size = k * m
        self.twiddle = np.exp(-2j * np.pi * np.outer(np.arange(k), np.arange(m)) / self.size)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        rows, k, m = x.shape[0], self.k, self.m
        t = x.reshape(rows, m, k).transpose(0, 2, 1).reshape(rows * k, m)  # L^n_k
        u = self.inner(t).reshape(rows, k, m) * self.twiddle  # (I_k ⊗ DFT_m), then T^n_m
        v = u.transpose(0, 2, 1).reshape(rows * m, k)
        return self.outer(v).reshape(rows, m, k).transpose(0, 2, 1).reshape(rows, k * m)  # DFT_k ⊗ I_m


def build(spec: Spec) -> Plan:
    if isinstance(spec, int):
        return Codelet(spec)
    return CooleyTukey(build(spec[0]), build(spec[1]), spec_size(spec[0]), spec_size(spec[1]))


def random_input(n: int, batch: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, n, batch])
    return rng.standard_normal((batch, n)) + 1j * rng.standard_normal((batch, n))


def relative_error(plan: Plan, x: np.ndarray, reference: np.ndarray) -> float:
    y = plan(x)
    if y.shape != reference.shape:
        return math.inf
    return float(np.linalg.norm(y - reference) / np.linalg.norm(reference))


def time_plan(plan: Plan, x: np.ndarray, repeats: int, warmup: int, min_sample_s: float) -> list[float]:
    """Seconds per call: ``repeats`` samples after ``warmup`` calls; each sample averages
    enough back-to-back calls to last ``min_sample_s`` (timer resolution at small n)."""
    start = time.perf_counter()
    for _ in range(max(1, warmup)):
        plan(x)
    per_call = (time.perf_counter() - start) / max(1, warmup)
    number = max(1, math.ceil(min_sample_s / max(per_call, 1e-9)))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            plan(x)
        samples.append((time.perf_counter() - start) / number)
    return samples


def pseudo_mflops(n: int, batch: int, seconds: float) -> float:
    """5·n·log2(n) per transform (the paper's pseudo-flop count, §5), in Mflop/s."""
    return 5.0 * n * math.log2(n) * batch / seconds / 1e6
