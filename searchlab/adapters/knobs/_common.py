"""What the four OpenCL knob kernels share: their sensor model, host arrays and device buffers.

Every problem uploads its inputs once per worker, refills its one output buffer before each
launch (NaN, or a value the kernel never writes for integer outputs), so that a configuration
never passes on an earlier one's output, reads it back and compares it with a numpy reference
(docs/measurement.md, "output")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# The sensor model of the four OpenCL kernels (paper 001 §4): resource checks in the order a device
# applies them, each failure mode tied to the constraint that explains it.
RESOURCE_MODEL: dict[str, Any] = {
    "sensors": ["time_s", "compile_s", "code_bytes", "local_mem_bytes", "wg_size"],
    "objective": "time_s",
    "direction": "minimize",
    "constraints": [
        {"name": "local_mem", "formula": "local_mem_bytes <= local_mem_limit", "modes": ["resources"]},
        {"name": "work_group", "formula": "wg_size <= wg_limit", "modes": ["resources"]},
        {"name": "code_size", "formula": "code_bytes <= code_limit", "modes": ["resources"]},
        {"name": "compile_time", "formula": "compile_s <= compile_limit_s", "modes": ["compile"]},
    ],
    "order": ["build", "local_mem", "work_group", "code_size", "launch", "compile_time", "output"],  # _opencl.CHECK_ORDER
}


@dataclass(frozen=True)
class HostData:
    """What a problem computes on the host (``OpenCLKnobProblem.host_data``)."""

    inputs: tuple[np.ndarray, ...]  # kernel arguments before the output, in order
    out: np.ndarray  # the output's host copy (its shape and dtype size the device buffer)
    reference: np.ndarray  # what the first ``valid`` output elements must be
    fill: float = math.nan  # written to the output before each launch
    valid: int | None = None  # leading output elements that are compared (None: all)


class DeviceBuffers:
    """The inputs copied to the device once and one read-write output buffer (pyopencl)."""

    def __init__(self, context: Any, data: HostData) -> None:
        import pyopencl as cl

        flags = cl.mem_flags
        self.data = data
        self.arguments: Sequence[Any] = (
            *(cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=a) for a in data.inputs),
            cl.Buffer(context, flags.READ_WRITE, data.out.nbytes))

    def clear(self, queue: Any) -> None:
        import pyopencl as cl

        cl.enqueue_copy(queue, self.arguments[-1], np.full_like(self.data.out, self.data.fill)).wait()

    def output(self, queue: Any) -> np.ndarray:
        import pyopencl as cl

        cl.enqueue_copy(queue, self.data.out, self.arguments[-1])
        return self.data.out[:self.data.valid].astype(np.float64)

    def reference(self) -> np.ndarray:
        return np.asarray(self.data.reference, dtype=np.float64)
