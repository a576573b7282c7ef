"""``matmul``: the five-version, four-threshold matrix multiplication of Fig. 1.6 (the
simple case of paper 003 §2.1: every threshold is compared once per dataset).

Datasets are (N, M, P) shapes of i32 matrices (Listing 1.1); small values keep the sums
exact, so every version's output must equal numpy's exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from searchlab.adapters.futhark._mm import MatmulProgram, Temp, matmul
from searchlab.adapters.futhark._program import DatasetSpec
from searchlab.adapters.futhark._runtime import Execution

# preset -> [(N, M, P, train)]: shapes that favour different versions (few long rows, many
# short ones, long dot products, ...), validation shapes between the training ones.
PRESET_SHAPES: dict[str, tuple[tuple[int, int, int, bool], ...]] = {
    "cpu": ((2, 2048, 2, True), (4, 1024, 8, False), (8, 512, 16, True), (64, 64, 64, False),
            (256, 16, 256, True), (512, 8, 512, False), (1024, 4, 1024, True)),
    "gpu": ((8, 65536, 8, True), (16, 16384, 16, False), (64, 4096, 64, True), (256, 1024, 256, False),
            (1024, 256, 1024, True), (2048, 64, 2048, False), (4096, 16, 4096, True)),
}


@dataclass
class MatmulData:
    shape: tuple[int, int, int]
    x: Any
    y: Any
    z: Any
    expected: np.ndarray
    temp: Temp


class Matmul(MatmulProgram):
    name = "matmul"
    element = "int"

    def dataset_specs(self, preset: str) -> Sequence[DatasetSpec]:
        return [DatasetSpec(f"{n}x{m}x{p}", train, {"N": n, "M": m, "P": p})
                for n, m, p, train in PRESET_SHAPES[preset]]

    def prepare(self, spec: DatasetSpec) -> MatmulData:
        import pyopencl as cl

        n, m, p = spec.size["N"], spec.size["M"], spec.size["P"]
        rng = np.random.default_rng([self.seed, n, m, p])
        x = rng.integers(-8, 8, (n, m), dtype=np.int32)
        y = rng.integers(-8, 8, (m, p), dtype=np.int32)
        ctx, flags = self.cl.context, cl.mem_flags
        return MatmulData((n, m, p), cl.Buffer(ctx, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x),
                          cl.Buffer(ctx, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=y),
                          cl.Buffer(ctx, flags.READ_WRITE, n * p * 4), x.astype(np.int64) @ y.astype(np.int64),
                          Temp())

    def reset(self, data: MatmulData) -> None:
        import pyopencl as cl

        cl.enqueue_fill_buffer(self.cl.queue, data.z, np.zeros(1, np.int32), 0, data.z.size)

    def program(self, rt: Execution, spec: DatasetSpec, data: MatmulData | None) -> None:
        shape = (spec.size["N"], spec.size["M"], spec.size["P"])
        if data is None:
            matmul(rt, "matmul", 0, shape, None, None, None, None, 4)
        else:
            matmul(rt, "matmul", 0, shape, data.x, data.y, data.z, data.temp, 4)

    def verify(self, spec: DatasetSpec, data: MatmulData) -> str | None:
        import pyopencl as cl

        n, _, p = data.shape
        z = np.empty((n, p), dtype=np.int32)
        cl.enqueue_copy(self.cl.queue, z, data.z)
        wrong = int(np.count_nonzero(z != data.expected))
        return f"{wrong} of {z.size} elements differ from numpy" if wrong else None
