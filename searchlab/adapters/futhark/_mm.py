"""Matrix multiplication as incremental flattening compiles it (paper 003 Fig. 1.6).

``map (\\xr -> map (\\yc -> reduce (+) 0 (map2 (*) xr yc)) (transpose y)) x`` gives five
versions behind four thresholds, in comparison order:

1. ``suff_outer_par`` <= N: a thread per row (V1);
2. ``suff_intra_par`` <= P and a group of P fits: a work-group per row, the row in local
   memory (V2);
3. ``suff_outer_par`` <= N·P: a thread per element (V3);
4. ``suff_intra_par`` <= M and a group of M fits: a work-group per element, a local
   reduction (V4);
5. fully flattened: all N·P·M products, then a segmented reduction (V5).

Shared by ``matmul`` (one call: the simple case) and ``loopmm`` (one call per iteration
of a shrinking loop: the loop-based case, Listing 1.6).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from searchlab.adapters.futhark._chains import Chain, Level
from searchlab.adapters.futhark._kernels import MATMUL_SOURCE
from searchlab.adapters.futhark._program import FutharkProgram
from searchlab.adapters.futhark._runtime import Execution, Group
from searchlab.core.records import FailureMode
from searchlab.errors import EvaluationError


def mm_chain(construct: str = "matmul") -> Chain:
    return Chain(construct, (Level("outer", "thread_per_row"), Level("intra", "group_per_row"),
                             Level("outer", "thread_per_element"), Level("intra", "group_per_element")),
                 "flattened")


class MatmulProgram(FutharkProgram):
    """A program whose one construct is Fig. 1.6's matrix product, on ``element`` values."""

    chains = (mm_chain("matmul"),)
    source = MATMUL_SOURCE
    code_version = "1"
    element: ClassVar[str] = "int"  # the OpenCL type T

    def build_options(self) -> list[str]:
        return [f"-DT={self.element}"]


class Temp:
    """The flattened version's N·P·M buffer, grown on demand (a failed allocation is a
    resource failure, as Futhark's out-of-memory would be)."""

    def __init__(self) -> None:
        self.buffer: Any = None
        self.nbytes = 0

    def get(self, context: Any, nbytes: int, max_alloc: int) -> Any:
        import pyopencl as cl

        if nbytes > max_alloc:
            raise EvaluationError(FailureMode.RESOURCES,
                                  f"flattened matmul needs a {nbytes} B buffer; the device allows {max_alloc} B")
        if nbytes > self.nbytes:
            self.buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE, nbytes)
            self.nbytes = nbytes
        return self.buffer


def matmul(rt: Execution, construct: str, iteration: int, shape: tuple[int, int, int], x: Any, y: Any, z: Any,
           temp: Temp | None, itemsize: int) -> None:
    """Run the version the thresholds pick for z = x·y with ``shape`` = (N, M, P)."""
    n, m, p = shape
    i32 = np.int32
    dims = (i32(n), i32(m), i32(p))
    groups = (None, Group(p, m * itemsize), None, Group(m, m * itemsize))
    with rt.construct(construct, iteration, (n, p, n * p, m), groups) as version:
        if rt.device is None:
            return
        import pyopencl as cl

        if version == "thread_per_row":
            rt.launch_grid("mm_row", n, x, y, z, *dims)
        elif version == "group_per_row":
            rt.launch("mm_row_group", (n * p,), (p,), x, y, z, *dims, cl.LocalMemory(m * itemsize),
                      local_bytes=m * itemsize)
        elif version == "thread_per_element":
            rt.launch_grid("mm_elem", n * p, x, y, z, *dims)
        elif version == "group_per_element":
            rt.launch("mm_elem_group", (n * p * m,), (m,), x, y, z, *dims, cl.LocalMemory(m * itemsize),
                      local_bytes=m * itemsize)
        else:
            assert temp is not None and rt.limits is not None
            tmp = temp.get(rt.device.context, n * p * m * itemsize, rt.limits.max_alloc)
            rt.launch_grid("mm_products", n * p * m, x, y, tmp, *dims)
            rt.launch_grid("mm_segred", n * p, tmp, z, *dims)
