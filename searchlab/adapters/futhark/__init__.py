"""Futhark threshold tuning (paper 003).

``futhark``, ``lud``, ``matmul``, ``loopmm``: real Futhark programs compiled by the real
compiler and run through its server (:mod:`searchlab.adapters.futhark.program`). ``lud_opencl``,
``matmul_opencl``, ``loopmm_opencl``: the earlier hand-written multi-version OpenCL
imitations, kept because they give what the Futhark server cannot: per-loop-iteration
profiled times of every construct, the complete information of Alg. 8 (docs/futhark.md).
"""

from searchlab.adapters.futhark._program import DatasetSpec, FutharkProgram
from searchlab.adapters.futhark.loopmm import Loopmm, LoopmmConfig
from searchlab.adapters.futhark.lud import Lud, LudConfig
from searchlab.adapters.futhark.matmul import Matmul, MatmulConfig
from searchlab.adapters.futhark.program import (
    FutharkConfig,
    FutharkLoopmm,
    FutharkLud,
    FutharkMatmul,
    FutharkServerProblem,
)
from searchlab.adapters.futhark.program import LoopmmConfig as FutharkLoopmmConfig
from searchlab.adapters.futhark.program import LudConfig as FutharkLudConfig
from searchlab.adapters.futhark.program import MatmulConfig as FutharkMatmulConfig

SCHEMAS: dict[str, type] = {
    "futhark": FutharkConfig,
    "lud": FutharkLudConfig,
    "matmul": FutharkMatmulConfig,
    "loopmm": FutharkLoopmmConfig,
    "lud_opencl": LudConfig,
    "matmul_opencl": MatmulConfig,
    "loopmm_opencl": LoopmmConfig,
}

__all__ = ["SCHEMAS", "DatasetSpec", "FutharkConfig", "FutharkLoopmm", "FutharkLud", "FutharkMatmul", "FutharkProgram",
           "FutharkServerProblem", "Loopmm", "LoopmmConfig", "Lud", "LudConfig", "Matmul", "MatmulConfig"]
