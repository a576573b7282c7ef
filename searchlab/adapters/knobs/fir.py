"""``fir``: the FIR filter of paper 001 §3 and §8.1, tuned by banks and accesses per bank.

``y[j] = sum_k x[j+k] * c[k]`` for ``n`` outputs and ``taps`` coefficients. The coefficient
array is broken into ``banks`` local-memory arrays (tap ``k`` lives in bank ``k % banks``);
each loop iteration reads one coefficient from every bank and uses it for ``accesses``
outputs per work-item (the input window is staged in local memory as well). The loop body
is generated unrolled, ``banks x accesses`` multiply-adds, so code size and compile time
grow with both knobs, and local memory grows with ``accesses`` (the window) — more
parallel arithmetic is faster until a resource runs out (§8.1, Fig. 10).
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
from searchlab.core.spaces import IntKnob, Knob
from searchlab.errors import ConfigError

WG = 32  # work-items per work-group (fixed; the knobs are banks and accesses, as in §8.1)

def fir_reference(x: np.ndarray, c: np.ndarray, n: int) -> np.ndarray:
    """``y[j] = sum_k x[j + k] c[k]`` for ``j < n``, in float64."""
    return np.convolve(x[: n + len(c) - 1].astype(np.float64), c[::-1].astype(np.float64), mode="valid")


class Fir(OpenCLKnobProblem):
    name = "fir"
    kernel_name = "fir"
    code_version = "2"
    # local memory binds accesses, code size banks x accesses, compile time (noisy) on the large ones
    ARCHS = paper_archs(max_wg=(64, 256), code_bytes=(5000, 10_000), local_mem=(2048, 2560, 2560, 3200), compile_s=0.4)

    def __init__(self, n: int = 16384, taps: int = 128, max_banks: int = 16, max_accesses: int = 16,
                 **common: Any) -> None:
        """The filter's sizes and the bounds of its two knobs. Its options, declared once (searchlab.core.schema).

        Args:
            n: outputs
            taps: filter taps
            max_banks: the banks knob's upper bound
            max_accesses: the accesses-per-bank knob's upper bound
            common: arch, measure, limits, model (OpenCLKnobProblem)
        """
        if n < 1 or taps < 1 or max_banks < 1 or max_accesses < 1:
            raise ConfigError(f"problem fir: n={n}, taps={taps}, max_banks={max_banks}, max_accesses={max_accesses} must be >= 1")
        self.n, self.taps, self.max_banks, self.max_accesses = n, taps, max_banks, max_accesses
        super().__init__(**common)

    def knobs(self) -> Sequence[Knob]:
        return (IntKnob("banks", 1, self.max_banks), IntKnob("accesses", 1, self.max_accesses))

    def _groups(self, accesses: int) -> int:
        return -(-self.n // (WG * accesses))  # the last group may compute past n: y is padded

    def source(self, config: Config) -> str:
        banks, acc = ints(config, "banks", "accesses")
        length = -(-self.taps // banks)
        lines = [f"#define NC {self.taps}\n#define L {length}\n#define WIN ({WG * acc} + NC - 1)",
                 f"__kernel __attribute__((reqd_work_group_size({WG},1,1)))",
                 "void fir(__global const float* x, __global const float* c, __global float* y) {"]
        lines += [f"  __local float bank{b}[L];" for b in range(banks)]
        lines += ["  __local float win[WIN];",
                  f"  const int lid = get_local_id(0); const int base = get_group_id(0) * {WG * acc};",
                  f"  for (int i = lid; i < WIN; i += {WG}) win[i] = x[base + i];"]
        lines += [f"  for (int i = lid; i < L; i += {WG}) bank{b}[i] = (i * {banks} + {b} < NC) ? c[i * {banks} + {b}] : 0.0f;"
                  for b in range(banks)]
        lines += ["  barrier(CLK_LOCAL_MEM_FENCE);"]
        lines += [f"  float acc{a} = 0.0f;" for a in range(acc)]
        lines += [f"  const int o = lid * {acc};", "  for (int i = 0; i < L; i++) {", f"    const int k = i * {banks};"]
        for b in range(banks):
            lines.append(f"    {{ const float cf = bank{b}[i];")
            lines += [f"      acc{a} = fma(win[o + {a} + k + {b}], cf, acc{a});" for a in range(acc)]
            lines.append("    }")
        lines += ["  }"] + [f"  y[base + o + {a}] = acc{a};" for a in range(acc)] + ["}"]
        return "\n".join(lines)

    def shape(self, config: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return (self._groups(ints(config, "accesses")[0]) * WG,), (WG,)

    def host_data(self) -> HostData:
        rng = np.random.default_rng(1)
        padded = self.n + WG * self.max_accesses  # the last work-group may compute past n
        x = rng.standard_normal(padded + self.taps).astype(np.float32)
        c = rng.standard_normal(self.taps).astype(np.float32)
        return HostData((x, c), np.full(padded, np.nan, np.float32), fir_reference(x, c, self.n), valid=self.n)
