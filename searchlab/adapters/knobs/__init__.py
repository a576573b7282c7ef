"""Tuning-knob problems (paper 001): OpenCL kernels with hard architecture constraints
(fir, matmul_blocked, conv2d, smith_waterman), their recordings replayed under any
architecture (knob_table), and Kernel Tuner cache files replayed as tables."""

from searchlab.adapters.knobs._opencl import Arch, OpenCLKnobProblem, apply_arch
from searchlab.adapters.knobs._replay import KnobTable, KnobTableConfig, arch_table, record_table
from searchlab.adapters.knobs.conv2d import Conv2d, Conv2dConfig
from searchlab.adapters.knobs.fir import Fir
from searchlab.adapters.knobs.kernel_tuner import KernelTunerCache, KernelTunerCacheConfig, load_kernel_tuner_cache
from searchlab.adapters.knobs.matmul import MatmulBlocked, MatmulBlockedConfig
from searchlab.adapters.knobs.smith_waterman import SmithWaterman, SmithWatermanConfig

SCHEMAS: dict[str, type] = {
    "fir": Fir,
    "matmul_blocked": MatmulBlockedConfig,
    "conv2d": Conv2dConfig,
    "smith_waterman": SmithWatermanConfig,
    "kernel_tuner_cache": KernelTunerCacheConfig,
    "knob_table": KnobTableConfig,
}

__all__ = [
    "SCHEMAS",
    "Arch",
    "Conv2d",
    "Fir",
    "KernelTunerCache",
    "KnobTable",
    "MatmulBlocked",
    "OpenCLKnobProblem",
    "SmithWaterman",
    "apply_arch",
    "arch_table",
    "load_kernel_tuner_cache",
    "record_table",
]
