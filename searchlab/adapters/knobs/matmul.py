"""``matmul_blocked``: SUMMA-style blocked matrix multiplication (paper 001 §8.1, [19]).

``C = A @ B`` for ``n x n`` matrices. A work-group computes a ``block_m x block_n`` block of
C one stripe at a time (SUMMA: for every stripe of ``stripe`` columns of A / rows of B, both
stripes are staged in local memory, then every work-item accumulates its ``block_m`` outputs
of one column). The knobs are the blocking in both dimensions: ``block_n`` is the work-group
width, ``block_m`` the rows each work-item keeps in registers (generated unrolled).

The kernel, like many hand-written ones, assumes the blocks tile the matrix: a ``block_n``
that does not divide ``n`` is refused by the OpenCL runtime (LAUNCH: the global size must be
a multiple of the work-group size in OpenCL 1.2), and a ``block_m`` that does not divide
``n`` leaves the last rows uncomputed (WRONG_OUTPUT). Neither is declared as a known
constraint: they are hidden constraints the searcher discovers, as on real accelerators.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from searchlab.adapters._values import ints
from searchlab.adapters.knobs._arch import paper_archs
from searchlab.adapters.knobs._common import HostData
from searchlab.adapters.knobs._opencl import OpenCLKnobProblem
from searchlab.core.records import Config
from searchlab.core.spaces import Knob, OrdinalKnob
from searchlab.errors import ConfigError

BLOCK_M = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 16, 20, 24, 30, 32, 40, 48)
BLOCK_N = (1, 2, 4, 8, 12, 16, 20, 24, 30, 32, 40, 48, 60, 64, 80, 96, 120, 128, 240, 256)

class MatmulBlocked(OpenCLKnobProblem):
    name = "matmul_blocked"
    kernel_name = "mm"
    code_version = "2"
    # block_n is the work-group; local memory holds both stripes; code grows with block_m
    ARCHS = paper_archs(max_wg=(64, 256), code_bytes=(3000, 6000), local_mem=(4096, 8192, 8192, 16384), compile_s=0.4)

    def __init__(self, n: int = 240, stripe: int = 16, **common: Any) -> None:
        """The matrix size and the SUMMA stripe. Its options, declared once (searchlab.core.schema).

        Args:
            n: matrix side
            stripe: SUMMA stripe width (must divide n)
            common: arch, measure, limits, model (OpenCLKnobProblem)
        """
        if n < 1 or stripe < 1 or n % stripe:
            raise ConfigError(f"problem matmul_blocked: stripe={stripe} must divide n={n} (both >= 1)")
        self.n, self.stripe = n, stripe
        super().__init__(**common)

    def knobs(self) -> Sequence[Knob]:
        return (OrdinalKnob("block_m", BLOCK_M), OrdinalKnob("block_n", BLOCK_N))

    def known_constraints(self) -> Sequence[str]:
        return (f"block_m <= {self.n}",)

    def source(self, config: Config) -> str:
        (bm, bn), kb, n = ints(config, "block_m", "block_n"), self.stripe, self.n
        lines = [f"#define N {n}\n#define KB {kb}\n#define BM {bm}\n#define BN {bn}",
                 "__kernel void mm(__global const float* A, __global const float* B, __global float* C) {",
                 "  __local float As[BM * KB];", "  __local float Bs[KB * BN];",
                 "  const int lx = get_local_id(0), col = get_global_id(0), row0 = get_group_id(1) * BM;"]
        lines += [f"  float acc{r} = 0.0f;" for r in range(bm)]
        lines += ["  for (int k0 = 0; k0 < N; k0 += KB) {",
                  "    for (int i = lx; i < BM * KB; i += BN) As[i] = A[(row0 + i / KB) * N + k0 + i % KB];",
                  "    for (int kk = 0; kk < KB; kk++) Bs[kk * BN + lx] = B[(k0 + kk) * N + col];",
                  "    barrier(CLK_LOCAL_MEM_FENCE);",
                  "    for (int kk = 0; kk < KB; kk++) {", "      const float b = Bs[kk * BN + lx];"]
        lines += [f"      acc{r} = fma(As[{r} * KB + kk], b, acc{r});" for r in range(bm)]
        lines += ["    }", "    barrier(CLK_LOCAL_MEM_FENCE);", "  }"]
        lines += [f"  C[(row0 + {r}) * N + col] = acc{r};" for r in range(bm)] + ["}"]
        return "\n".join(lines)

    def shape(self, config: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
        bm, bn = ints(config, "block_m", "block_n")
        return (self.n, self.n // bm), (bn, 1)

    def host_data(self) -> HostData:
        rng = np.random.default_rng(2)
        a = rng.uniform(-1, 1, (self.n, self.n)).astype(np.float32)
        b = rng.uniform(-1, 1, (self.n, self.n)).astype(np.float32)
        return HostData((a, b), np.full((self.n, self.n), np.nan, np.float32), a.astype(np.float64) @ b.astype(np.float64))
