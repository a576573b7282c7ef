"""Futhark threshold tuning (paper 003).

``futhark``, ``lud``, ``matmul``, ``loopmm``: real Futhark programs compiled by the real
compiler and run through its server (:mod:`searchlab.adapters.futhark.program`). ``lud_opencl``,
``matmul_opencl``, ``loopmm_opencl``: the earlier hand-written multi-version OpenCL
imitations, kept because they give what the Futhark server cannot: per-loop-iteration
profiled times of every construct, the complete information of Alg. 8 (docs/futhark.md).

Each problem's options are its constructor's typed keyword parameters (the registry derives
the config from them, :mod:`searchlab.core.schema`); the submodules never import this package,
so importing it imports each of them once, in one direction.
"""

from searchlab.adapters.futhark._program import DatasetSpec, FutharkProgram
from searchlab.adapters.futhark.bundled import FutharkLoopmm, FutharkLud, FutharkMatmul
from searchlab.adapters.futhark.loopmm import Loopmm
from searchlab.adapters.futhark.lud import Lud
from searchlab.adapters.futhark.matmul import Matmul
from searchlab.adapters.futhark.program import FutharkServerProblem

SCHEMAS: dict[str, type] = {
    "futhark": FutharkServerProblem,
    "lud": FutharkLud,
    "matmul": FutharkMatmul,
    "loopmm": FutharkLoopmm,
    "lud_opencl": Lud,
    "matmul_opencl": Matmul,
    "loopmm_opencl": Loopmm,
}

__all__ = ["SCHEMAS", "DatasetSpec", "FutharkLoopmm", "FutharkLud", "FutharkMatmul", "FutharkProgram",
           "FutharkServerProblem", "Loopmm", "Lud", "Matmul"]
