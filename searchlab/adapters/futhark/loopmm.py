"""``loopmm``: matrix multiplication inside a sequential loop with shrinking shapes
(paper 003 Listing 1.6, the loop-based case of §2.2).

For k = 1, 2, 4, ..., n: A' = A seen as (n/k) x (n·k), B' = B seen as (n·k) x (n/k),
M = A'·B' (Fig. 1.6's five versions), and A gets M added to its first n/k columns. All four
thresholds see one E_par per iteration (1 + lg n distinct values). Outputs checked: the
final A and the last M against a float64 numpy run of the same loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from searchlab.adapters.futhark._mm import MatmulProgram, Temp, matmul
from searchlab.adapters.futhark._program import DatasetSpec
from searchlab.adapters.futhark._runtime import Execution
from searchlab.errors import ConfigError

# preset -> (training sizes, validation sizes); n must be a power of two
PRESET_SIZES = {
    "cpu": ((8, 128), (16, 64)),
    "gpu": ((64, 256, 1024), (128, 512)),  # the flattened version needs n³ floats at k = 1
}


@dataclass
class LoopmmData:
    n: int
    a0: Any
    a: Any
    b: Any
    mres: Any
    expected_a: np.ndarray
    expected_m: np.ndarray
    temp: Temp


def reference(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Listing 1.6 in numpy (float64)."""
    n = a.shape[0]
    a, b = a.astype(np.float64).reshape(-1), b.astype(np.float64).reshape(-1)
    k, mres = 1, np.zeros((1, 1))
    while k <= n:
        rows, inner = n // k, n * k
        mres = a.reshape(rows, inner) @ b.reshape(inner, rows)
        a = a.reshape(rows, inner).copy()
        a[:, :rows] += mres
        a = a.reshape(-1)
        k *= 2
    return a.reshape(n, n), mres


class Loopmm(MatmulProgram):
    name = "loopmm"
    element = "float"

    def dataset_specs(self, preset: str) -> Sequence[DatasetSpec]:
        train, validation = PRESET_SIZES[preset]
        sizes = sorted([(n, True) for n in train] + [(n, False) for n in validation])
        bad = [n for n, _ in sizes if n < 2 or n & (n - 1)]
        if bad:
            raise ConfigError(f"loopmm sizes {bad}: n must be a power of two")
        return [DatasetSpec(f"{n}.in", is_train, {"n": n}) for n, is_train in sizes]

    def prepare(self, spec: DatasetSpec) -> LoopmmData:
        import pyopencl as cl

        n = spec.size["n"]
        rng = np.random.default_rng([self.seed, n])
        a = (rng.uniform(0.0, 1.0, (n, n)) / n).astype(np.float32)
        b = (rng.uniform(0.0, 1.0, (n, n)) / n).astype(np.float32)
        expected_a, expected_m = reference(a, b)
        ctx, flags = self.cl.context, cl.mem_flags
        return LoopmmData(n, cl.Buffer(ctx, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=a),
                          cl.Buffer(ctx, flags.READ_WRITE, a.nbytes),
                          cl.Buffer(ctx, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=b),
                          cl.Buffer(ctx, flags.READ_WRITE, a.nbytes), expected_a, expected_m, Temp())

    def reset(self, data: LoopmmData) -> None:
        import pyopencl as cl

        cl.enqueue_copy(self.cl.queue, data.a, data.a0)

    def program(self, rt: Execution, spec: DatasetSpec, data: LoopmmData | None) -> None:
        n, i32 = spec.size["n"], np.int32
        k, it = 1, 0
        while k <= n:
            rows, inner = n // k, n * k
            shape = (rows, inner, rows)
            if data is None:
                matmul(rt, "matmul", it, shape, None, None, None, None, 4)
            else:
                matmul(rt, "matmul", it, shape, data.a, data.b, data.mres, data.temp, 4)
                rt.launch_grid("loop_update", rows * rows, data.a, data.mres, *(i32(s) for s in shape))
            k, it = k * 2, it + 1

    def verify(self, spec: DatasetSpec, data: LoopmmData) -> str | None:
        import pyopencl as cl

        a = np.empty((data.n, data.n), dtype=np.float32)
        last = np.empty(1, dtype=np.float32)
        cl.enqueue_copy(self.cl.queue, a, data.a)
        cl.enqueue_copy(self.cl.queue, last, data.mres)
        for label, got, want in (("A", a, data.expected_a), ("last M", last.reshape(1, 1), data.expected_m)):
            err = float(np.max(np.abs(got - want) / (np.abs(want) + 1e-6)))
            if not np.isfinite(err) or err > 1e-3:
                return f"{label}: max relative error {err:.3g} (> 1e-3)"
        return None
