"""``conv2d``: 2-D convolution with a row buffer (paper 001 §8.1).

A work-group owns a vertical strip ``row_buffer`` output pixels wide and walks down the image,
keeping the last ``filter`` input rows of its strip in a circular row buffer in local memory
(one new row per output row, as on a streaming accelerator: not all rows fit in memory).
``pixels`` work-items compute pixels in parallel; each computes every ``pixels``-th pixel of
the row, ``ceil(row_buffer / pixels)`` of them, with the ``filter x filter`` taps generated
unrolled — so code size and compile time grow as pixels shrink and the buffer widens, local
memory grows with the buffer, and the work-group grows with pixels: §8.1's "one of the most
challenging shapes".

Known constraints (the generator's own rules, never sent to a device): a work-item computes at
least one and at most 16 pixels per row.
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
from searchlab.core.spaces import IntKnob, Knob, OrdinalKnob
from searchlab.errors import ConfigError


def conv2d_reference(image: np.ndarray, filt: np.ndarray) -> np.ndarray:
    """``out[y, x] = sum_ij image[y + i, x + j] filt[i, j]`` (valid region), in float64."""
    windows = np.lib.stride_tricks.sliding_window_view(image.astype(np.float64), filt.shape)
    out: np.ndarray = np.einsum("yxij,ij->yx", windows, filt.astype(np.float64))
    return out


class Conv2d(OpenCLKnobProblem):
    name = "conv2d"
    kernel_name = "conv"
    code_version = "2"
    # pixels is the work-group; the row buffer takes local memory; few pixels mean much code
    ARCHS = paper_archs(max_wg=(8, 16), code_bytes=(12_000, 16_000), local_mem=(700, 1300, 1100, 5000), compile_s=0.6)

    def __init__(self, height: int = 512, width: int = 240, filter: int = 5, max_pixels: int = 16,
                 **common: Any) -> None:
        """The image and filter sizes and the bound of the pixels knob. Its options, declared once (searchlab.core.schema).

        Args:
            height: output rows
            width: output columns; the row-buffer widths are its divisors >= 8
            filter: filter side
            max_pixels: the pixels knob's upper bound
            common: arch, measure, limits, model (OpenCLKnobProblem)
        """
        if min(height, width, filter, max_pixels) < 1:
            raise ConfigError(f"problem conv2d: height={height}, width={width}, filter={filter}, "
                              f"max_pixels={max_pixels} must be >= 1")
        widths = tuple(r for r in range(8, width + 1) if width % r == 0)
        if not widths:
            raise ConfigError(f"problem.width={width}: needs a divisor >= 8 for the row buffer")
        self.height, self.width, self.filter, self.max_pixels, self.widths = height, width, filter, max_pixels, widths
        super().__init__(**common)

    def knobs(self) -> Sequence[Knob]:
        return (IntKnob("pixels", 1, self.max_pixels), OrdinalKnob("row_buffer", self.widths))

    def known_constraints(self) -> Sequence[str]:
        return ("pixels <= row_buffer", "row_buffer <= 16 * pixels")

    def source(self, config: Config) -> str:
        (p, r), f = ints(config, "pixels", "row_buffer"), self.filter
        per_item = -(-r // p)
        lines = [f"#define F {f}\n#define R {r}\n#define P {p}\n#define RW (R + F - 1)",
                 f"#define IW {self.width + f - 1}\n#define OW {self.width}\n#define H {self.height}",
                 f"__kernel __attribute__((reqd_work_group_size({p},1,1)))",
                 "void conv(__global const float* in, __constant float* filt, __global float* out) {",
                 "  __local float rows[F * RW];",
                 "  const int lid = get_local_id(0), x0 = get_group_id(0) * R;",
                 "  for (int r = 0; r < F - 1; r++)",
                 "    for (int i = lid; i < RW; i += P) rows[r * RW + i] = in[r * IW + x0 + i];",
                 "  for (int y = 0; y < H; y++) {",
                 "    const int slot = (y + F - 1) % F;",
                 "    for (int i = lid; i < RW; i += P) rows[slot * RW + i] = in[(y + F - 1) * IW + x0 + i];",
                 "    barrier(CLK_LOCAL_MEM_FENCE);"]
        lines += [f"    const int s{fy} = ((y + {fy}) % F) * RW;" for fy in range(f)]
        for j in range(per_item):
            lines += [f"    {{ const int px = lid + {j * p};", "      if (px < R) {", "        float acc = 0.0f;"]
            lines += [f"        acc = fma(rows[s{fy} + px + {fx}], filt[{fy * f + fx}], acc);"
                      for fy in range(f) for fx in range(f)]
            lines += ["        out[y * OW + x0 + px] = acc;", "      }", "    }"]
        lines += ["    barrier(CLK_LOCAL_MEM_FENCE);", "  }", "}"]
        return "\n".join(lines)

    def shape(self, config: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
        p, r = ints(config, "pixels", "row_buffer")
        return (self.width // r * p,), (p,)

    def host_data(self) -> HostData:
        rng = np.random.default_rng(3)
        f = self.filter
        image = rng.uniform(0, 1, (self.height + f - 1, self.width + f - 1)).astype(np.float32)
        filt = rng.uniform(-1, 1, (f, f)).astype(np.float32)
        return HostData((image, filt), np.full((self.height, self.width), np.nan, np.float32),
                        conv2d_reference(image, filt))
