"""DFT ruletrees of the C library (paper 002 §4.1, equation 1), as typed specs.

    DFT_n = (DFT_k ⊗ I_m) · T^n_m · (I_k ⊗ DFT_m) · L^n_k,   n = k·m

A :class:`Split` is one application of equation (1): ``dft`` computes the k inner DFT_m
(L^n_k folded into its input stride) and ``tw`` the outer stage (DFT_k ⊗ I_m)·T^n_m with
the twiddles fused. A DFT leaf is a generated codelet (``n1``, or ``n1v`` vectorised over
its loop); a twiddle stage is a twiddle codelet (``t1``/``t1v``) or ``buf``: gather each
strided vector, scaled, into a buffer and run a DFT_k plan (the buffering restructuring of
§4.1). ``parallel`` splits the top stage loops over 2 OpenMP threads.

Any size (issue 26): a split may have any factor k (mixed radix); ``Pfa`` is the
Good-Thomas prime-factor split of coprime factors; ``Rader`` turns a prime DFT_p into a
cyclic convolution of length p-1, ``Bluestein`` any DFT_n into one of length M >= 2n-1.

Readable form (``describe``): ``CT(16v, CT(buf(CT(8, 8)), 32v))``; a bare number is a
codelet, ``v`` its vector variant, ``CTomp`` the threaded top split, ``PFA(8, 375)``,
``Rader1009(CT(16, 63))``, ``Bluestein1009(CT(32, 64))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

import numpy as np


@dataclass(frozen=True)
class Leaf:
    kind: str  # n1 | n1v
    size: int


@dataclass(frozen=True)
class Twiddle:
    kind: str  # t1 | t1v | buf
    size: int
    child: Spec | None = None  # buf: the DFT_k plan


@dataclass(frozen=True)
class Split:
    tw: Twiddle
    dft: Spec
    parallel: bool = False

    @property
    def size(self) -> int:
        return self.tw.size * self.dft.size


@dataclass(frozen=True)
class Pfa:
    """Good-Thomas prime-factor split, n = a·b with gcd(a, b) = 1: no twiddles; the input
    is read through the Ruritanian map, the output written through the CRT map; the b-point
    DFTs run first (rows), the a-point DFTs second (columns)."""

    a: Spec
    b: Spec

    @property
    def size(self) -> int:
        return self.a.size * self.b.size


@dataclass(frozen=True)
class Rader:
    """DFT_p, p prime, as a cyclic convolution of length p-1 run by two DFT_{p-1} plans."""

    size: int
    child: Spec


@dataclass(frozen=True)
class Bluestein:
    """DFT_n as a chirp convolution of length M >= 2n-1 run by two DFT_M plans."""

    size: int
    child: Spec


Spec = Union[Leaf, Split, Pfa, Rader, Bluestein]
TwSpec = Twiddle


def describe(spec: Spec | TwSpec) -> str:
    if isinstance(spec, Leaf):
        return f"{spec.size}{'v' if spec.kind == 'n1v' else ''}"
    if isinstance(spec, Twiddle):
        if spec.child is not None:
            return f"buf({describe(spec.child)})"
        return f"{spec.size}{'v' if spec.kind == 't1v' else ''}"
    if isinstance(spec, Pfa):
        return f"PFA({describe(spec.a)}, {describe(spec.b)})"
    if isinstance(spec, Rader):
        return f"Rader{spec.size}({describe(spec.child)})"
    if isinstance(spec, Bluestein):
        return f"Bluestein{spec.size}({describe(spec.child)})"
    return f"CT{'omp' if spec.parallel else ''}({describe(spec.tw)}, {describe(spec.dft)})"


def random_input(n: int, batch: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, n, batch])
    return rng.standard_normal((batch, n)) + 1j * rng.standard_normal((batch, n))


def pseudo_mflops(n: int, seconds: float) -> float:
    """5·n·log2(n) per transform (the paper's pseudo-flop count, §5), in Mflop/s."""
    return 5.0 * n * math.log2(n) / seconds / 1e6
