"""Futhark-style multi-version OpenCL programs (paper 003): ``lud``, ``matmul``, ``loopmm``.

Each program behaves like a Futhark program compiled with incremental flattening: code
versions behind ``threshold <= E_par`` predicates (named and classed like Futhark's),
a ``Compared NAME <= VALUE: true.`` log, per-iteration instrumentation, ``.tuning`` files
and a validation report (paper 003 Table 6.2) at the end of a run.
"""

from searchlab.adapters.futhark._program import DatasetSpec, FutharkProgram
from searchlab.adapters.futhark.loopmm import Loopmm, LoopmmConfig
from searchlab.adapters.futhark.lud import Lud, LudConfig
from searchlab.adapters.futhark.matmul import Matmul, MatmulConfig

SCHEMAS: dict[str, type] = {
    "lud": LudConfig,
    "matmul": MatmulConfig,
    "loopmm": LoopmmConfig,
}

__all__ = ["SCHEMAS", "DatasetSpec", "FutharkProgram", "Loopmm", "LoopmmConfig", "Lud", "LudConfig", "Matmul",
           "MatmulConfig"]
